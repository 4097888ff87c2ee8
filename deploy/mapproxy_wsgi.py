"""MapProxy's WSGI application for a production server (gunicorn, see gunicorn.conf.py).

Serves every `<app>.yaml` of MAPPROXY_PROJECTS_DIR at `/<app>/`, as Steward writes them; a
configuration whose file changes is loaded again on its next request. With access control on,
nginx (nginx-mapproxy.conf) asks Steward about each request, the listing of the apps included.
"""

import os

from mapproxy.multiapp import make_wsgi_app

application = make_wsgi_app(os.environ["MAPPROXY_PROJECTS_DIR"], allow_listing=True)
