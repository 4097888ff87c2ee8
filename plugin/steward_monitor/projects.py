"""The projects in this instance's config cache, as the instance last served or loaded them.

QGIS Server 3.22 offers no listing of its config cache, so the plugin records each project object
the server hands a request (QgsProject.instance() once the response is complete, asked by the
plugin's server filter in stats.py): a new object means the project was (re)loaded, and only then
are its layers counted. A project leaves the record when QGIS Server deletes it (its `destroyed`
signal), so a project listed under a request's MAP value is the one that served it, and the check
on most requests is one dictionary lookup. Otherwise the record holds the Python wrapper of each
project it lists, so that QgsProject.instance() finds that wrapper again instead of making a new
one (which costs a search through every QObject class PyQt and PyQGIS know). The socket thread
reads immutable summaries.
"""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import count
from typing import Any

from qgis.core import QgsProject
from qgis.PyQt.QtCore import Qt

MAX_PROJECTS = 1000


def _summary(path: str, project: QgsProject) -> dict[str, Any]:
    layers = project.mapLayers().values()
    return {
        "map": path,
        "title": project.title(),
        "loaded": datetime.now(UTC).isoformat(timespec="seconds"),
        "layers": len(layers),
        "invalid_layers": sorted(layer.name() for layer in layers if not layer.isValid()),
    }


class CachedProjects:
    def __init__(self) -> None:
        # MAP value -> (the project's wrapper, its token, its summary). Always the same dict, so that
        # the request thread can test a MAP value against it without a call.
        self.entries: dict[str, tuple[QgsProject, int, dict[str, Any]]] = {}
        self._listed: set[int] = set()  # id() of each wrapper in _entries, alive while it is held there
        self._tokens = count()

    def knows(self, project: QgsProject) -> bool:
        """Whether `project` is the very object recorded already (the usual case on every request)."""
        return id(project) in self._listed

    def seen(self, path: str, project: QgsProject) -> None:
        """Records `project` under `path` unless it is the object recorded already."""
        if self.knows(project):
            return
        if path not in self.entries and len(self.entries) >= MAX_PROJECTS:
            return
        self.forget(path)
        token = next(self._tokens)
        # Direct: the slot runs inside the project's destructor, before its memory can be reused.
        project.destroyed.connect(lambda _object=None: self._destroyed(path, token), Qt.DirectConnection)
        self.entries[path] = (project, token, _summary(path, project))
        self._listed.add(id(project))

    def summary(self, path: str) -> dict[str, Any] | None:
        entry = self.entries.get(path)
        return None if entry is None else entry[2]

    def forget(self, path: str) -> None:
        entry = self.entries.pop(path, None)
        if entry is not None:
            self._listed.discard(id(entry[0]))

    def _destroyed(self, path: str, token: int) -> None:
        entry = self.entries.get(path)
        if entry is not None and entry[1] == token:
            self.forget(path)

    def snapshot(self, _params: object = None) -> dict[str, Any]:
        return {"projects": [summary for _, _, summary in list(self.entries.values())]}

    def record_served(self, map_value: str) -> None:
        """Records the project that served the request just completed for `map_value` (rendering thread).

        A project listed under `map_value` is still the one QGIS Server holds for it: had QGIS
        Server dropped it, it would have deleted it, and so left the list.
        """
        if map_value in self.entries:
            return
        project = QgsProject.instance()
        if project is None or id(project) in self._listed:
            return
        path = project.fileName()
        if path:
            self.seen(path, project)
