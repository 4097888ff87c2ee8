"""gunicorn settings for MapProxy: `gunicorn -c deploy/gunicorn.conf.py` (read with the environment)."""

import multiprocessing
import os

wsgi_app = "mapproxy_wsgi:application"
pythonpath = os.path.dirname(os.path.abspath(__file__))
bind = os.environ.get("MAPPROXY_LISTEN", "127.0.0.1:8081")
# Tiles come from QGIS Server or the cache: a worker mostly waits, so a few per core.
workers = int(os.environ.get("MAPPROXY_WORKERS", 2 * multiprocessing.cpu_count()))
threads = 4
timeout = 300
accesslog = None
errorlog = "-"
