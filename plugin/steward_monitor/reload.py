"""`reload` (params `{map}`): drop a project from the config cache and load it again.

QGIS Server loads projects on its main thread, so the socket thread only queues the MAP value
and waits a moment; the main thread reloads every queued project at its next safe point
(safepoint.py) and hands each waiting thread the outcome. When no safe point comes within the
wait (FastCGI between requests: its main thread waits for the next one), the answer is
`pending`, and the project is reloaded when the next request starts, whichever project that
request asks for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from qgis.core import QgsProject
from qgis.server import QgsConfigCache, QgsServerInterface, QgsServerSettings

from .invalidation import PendingInvalidations
from .projects import CachedProjects

WAIT_SECONDS = 1.5


class _Outcome:
    """One waiting `reload` request: the main thread sets `result`, then `done`."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: dict[str, Any] = {}


class ProjectReloader:
    def __init__(
        self,
        server_iface: QgsServerInterface,
        invalidations: PendingInvalidations,
        cached: CachedProjects,
        ring: Callable[[], None],
        on_failure: Callable[[str], None],
    ) -> None:
        """Made on the main thread, at start. `on_failure` logs the exception being handled."""
        self._server_iface = server_iface
        self._invalidations = invalidations
        self._cached = cached
        self._ring = ring
        self._on_failure = on_failure
        self._settings = QgsServerSettings()
        self._settings.load()
        # MAP value -> the requests waiting for it. Always the same dict, tested without a call.
        self.queued: dict[str, list[_Outcome]] = {}
        self._lock = threading.Lock()

    def request(self, params: object) -> dict[str, Any]:
        """The `reload` handler, on the socket thread: queues the reload and waits for it a moment."""
        value = params.get("map") if isinstance(params, dict) else None
        if not isinstance(value, str) or not value:
            raise ValueError("reload needs params.map, a non-empty string")
        outcome = _Outcome()
        with self._lock:
            self.queued.setdefault(value, []).append(outcome)
        self._ring()
        if not outcome.done.wait(WAIT_SECONDS):
            return {"map": value, "status": "pending"}
        return outcome.result

    def run_queued(self) -> None:
        """On the main thread: reloads each queued project once, answering whoever still waits."""
        if not self.queued:
            return
        with self._lock:
            queued = dict(self.queued)
            self.queued.clear()
        for value, outcomes in queued.items():
            try:
                result = self._reload(value)
            except Exception as error:  # answered as failed; the next queued project still loads
                self._on_failure("reload of {}".format(value))
                result = {"map": value, "status": "failed", "error": str(error) or type(error).__name__}
            for outcome in outcomes:
                outcome.result = result
                outcome.done.set()

    def _reload(self, value: str) -> dict[str, Any]:
        self._invalidations.discard(value)
        self._server_iface.removeConfigCacheEntry(value)
        self._cached.forget(value)
        project, refusal = self._load(value)
        if project is None:
            return {"map": value, "status": "refused", **refusal}
        self._cached.seen(value, project)
        return {"map": value, "status": "reloaded", "project": self._cached.summary(value)}

    def _load(self, value: str) -> tuple[QgsProject | None, dict[str, str]]:
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
