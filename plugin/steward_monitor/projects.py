"""The projects in this instance's config cache, as the instance last served or loaded them.

QGIS Server 3.22 offers no listing of its config cache, so the plugin records each project object
the server hands a request (QgsProject.instance() once the response is complete, asked by the
plugin's server filter in stats.py): a new object
means the project was (re)loaded, and only then are its layers counted. On every other request
the cost is one pointer comparison. The socket thread reads immutable summaries.
"""

from datetime import datetime, timezone

from qgis.core import QgsProject
from qgis.PyQt import sip

MAX_PROJECTS = 1000


def _summary(path, project):
    layers = project.mapLayers().values()
    return {
        "map": path,
        "title": project.title(),
        "loaded": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "layers": len(layers),
        "invalid_layers": sorted(layer.name() for layer in layers if not layer.isValid()),
    }


class CachedProjects:
    def __init__(self):
        self._entries = {}  # MAP value -> (address of the QgsProject, its summary)

    def seen(self, path, project):
        """Records `project` under `path` unless it is the object recorded already."""
        address = sip.unwrapinstance(project)
        entry = self._entries.get(path)
        if entry is not None and entry[0] == address:
            return
        if entry is None and len(self._entries) >= MAX_PROJECTS:
            return
        self._entries[path] = (address, _summary(path, project))

    def summary(self, path):
        entry = self._entries.get(path)
        return None if entry is None else entry[1]

    def forget(self, path):
        self._entries.pop(path, None)

    def snapshot(self):
        return {"projects": [summary for _, summary in list(self._entries.values())]}


def record_served(cached):
    """Records in `cached` the project that served the request just completed (rendering thread)."""
    project = QgsProject.instance()
    path = project.fileName() if project is not None else ""
    if path:
        cached.seen(path, project)
