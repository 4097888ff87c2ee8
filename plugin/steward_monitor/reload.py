"""`reload` (params `{map}`): drop a project from the config cache and load it again at once.

QGIS Server loads projects on its main thread, between requests, so the socket thread hands the
work to that thread through a queued Qt signal and waits a moment for the outcome. When the main
thread does not run Qt's event loop (FastCGI), or the load takes longer, the answer is `pending`:
the drop is also queued like an `invalidate`, so the next request of the project loads it again.
"""

import threading

from qgis.PyQt.QtCore import QObject, Qt, pyqtSignal
from qgis.server import QgsConfigCache, QgsServerSettings

WAIT_SECONDS = 1.5


class ProjectReloader(QObject):
    _requested = pyqtSignal(str, object)

    def __init__(self, server_iface, invalidations, cached):
        super().__init__()  # made on the main thread, so the queued slot runs there
        self._server_iface = server_iface
        self._invalidations = invalidations
        self._cached = cached
        self._settings = QgsServerSettings()
        self._settings.load()
        self._requested.connect(self._reload, Qt.QueuedConnection)

    def request(self, params):
        """The `reload` handler, on the socket thread."""
        value = params.get("map") if isinstance(params, dict) else None
        if not isinstance(value, str) or not value:
            raise ValueError("reload needs params.map, a non-empty string")
        self._invalidations.queue([value])
        outcome = {"done": threading.Event()}
        self._requested.emit(value, outcome)
        if not outcome["done"].wait(WAIT_SECONDS):
            return {"map": value, "status": "pending"}
        return outcome["result"]

    def _reload(self, value, outcome):
        """On the main thread: drops and loads `value`, recording what was loaded."""
        try:
            self._invalidations.discard(value)
            self._server_iface.removeConfigCacheEntry(value)
            self._cached.forget(value)
            project, refusal = self._load(value)
            if project is None:
                outcome["result"] = {"map": value, "status": "refused", **refusal}
            else:
                self._cached.seen(value, project)
                outcome["result"] = {"map": value, "status": "reloaded", "project": self._cached.summary(value)}
        except Exception as error:
            outcome["result"] = {"map": value, "status": "failed", "error": str(error) or type(error).__name__}
        outcome["done"].set()

    def _load(self, value):
        """The project QGIS Server loads for `value`, or None and why it refused it.

        QGIS Server throws QgsServerException for a project with bad layers (unless
        QGIS_SERVER_IGNORE_BAD_LAYERS), which sip cannot raise as a Python exception: it arrives as
        a SystemError naming the class. A project it cannot read at all is None.
        """
        try:
            return QgsConfigCache.instance().project(value, self._settings), {}
        except SystemError as error:
            if "QgsServerException" not in str(error):
                raise
            return None, {"error": "QGIS Server threw QgsServerException loading it (its log says which layers)"}
