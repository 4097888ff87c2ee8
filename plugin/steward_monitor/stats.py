"""Request statistics gathered by a QgsServerFilter.

The filter hooks run on the rendering path, so they only swap an immutable snapshot; the socket
thread reads that snapshot without a lock (a reference assignment is atomic in CPython). The same
filter applies the project invalidations Steward queued (invalidation.py): nothing when none are.
"""

import time

from qgis.server import QgsServerFilter

MAX_PROJECTS = 1000
MAX_REQUEST_NAMES = 50  # distinct REQUEST values counted apart; the rest count as "other"


class RequestStats:
    # Slots keep the attributes the hooks write together in a few cache lines.
    __slots__ = ("count", "failures", "busy_seconds", "by_request", "_current", "projects")

    def __init__(self):
        self.count = 0
        self.failures = 0
        self.busy_seconds = 0.0  # time spent serving the requests counted
        self.by_request = {}  # REQUEST value -> requests served
        self._current = None
        self.projects = {}  # insertion-ordered set of projects this instance has served

    def begin(self, service, request, project):
        self._current = (service, request, project, time.monotonic(), None)
        if project and project not in self.projects and len(self.projects) < MAX_PROJECTS:
            self.projects[project] = None

    def end(self, failed=False):
        """Counts the request in flight as served; returns its record, None when none is in flight."""
        current = self._current
        if current is None or current[4] is not None:
            return None
        service, request, project, started, _ = current
        elapsed = time.monotonic() - started
        name = request if request in self.by_request or len(self.by_request) < MAX_REQUEST_NAMES else "other"
        self.by_request[name] = self.by_request.get(name, 0) + 1
        self.busy_seconds += elapsed
        if failed:
            self.failures += 1
        self.count += 1
        self._current = (service, request, project, started, elapsed)
        return self._current

    def snapshot(self):
        current = self._current
        result = {
            "count": self.count,
            "service": "",
            "request": "",
            "project": "",
            "duration": 0,
            "failures": self.failures,
            "busy_ms": round(self.busy_seconds * 1000),
            "requests": dict(self.by_request),
        }
        if current is None:
            return result
        service, request, project, started, elapsed = current
        if elapsed is None:  # request still in flight
            elapsed = time.monotonic() - started
        result.update(service=service, request=request, project=project, duration=round(elapsed * 1000))
        return result


class StatsFilter(QgsServerFilter):
    """The plugin's one server filter, so that each request pays for a single Python call per hook.

    Counts requests; drops the projects Steward invalidated from the config cache; once the
    response is complete, hands `on_served` the request's record (RequestStats.end) and its HTTP
    status (the log's request line), and runs `on_new_map` with the request's MAP value when
    `cached_maps` (the cached projects' record, tested without a call) does not list it.

    requestReady() runs on the thread that handles the request, before QGIS Server looks the
    request's project up in its cache, so an invalidated project is read again by this request.
    The hooks run on the rendering path and between maps the CPU caches hold the map's data, so
    every object Python touches there costs: they make as few calls as they can.
    """

    def __init__(
        self,
        server_iface,
        stats,
        default_project,
        invalidations,
        log,
        on_served=lambda _served, _status: None,
        cached_maps=None,
        on_new_map=lambda _map: None,
    ):
        super().__init__(server_iface)
        self._server_iface = server_iface
        self._stats = stats
        self._default_project = default_project
        self._invalidations = invalidations
        self._queued = invalidations.queued
        self._log = log
        self._on_served = on_served
        self._cached_maps = {} if cached_maps is None else cached_maps
        self._on_new_map = on_new_map
        # The request's handler and MAP value, from requestReady to responseComplete: QGIS Server
        # calls both hooks within one request, while that handler lives.
        self._handler = None
        self._map = ""

    def requestReady(self):  # noqa: N802 (QgsServerFilter hook)
        if self._queued:
            self._drop_invalidated()
        try:
            handler = self._server_iface.requestHandler()
            # Three lookups rather than parameterMap(), which copies every parameter into a dict.
            # QGIS Server knows these three by name, whatever their case in the request.
            parameter = handler.parameter
            self._map = parameter("MAP") or self._default_project
            self._stats.begin(parameter("SERVICE"), parameter("REQUEST"), self._map)
        except Exception:  # a monitoring failure must never fail the request
            handler = None
        self._handler = handler  # never an earlier request's, should asking for this one fail

    def _drop_invalidated(self):
        try:
            for value in self._invalidations.apply(self._server_iface):
                self._log("Could not remove {} from the project cache".format(value))
        except Exception:  # a monitoring failure must never fail the request
            pass

    def responseComplete(self):  # noqa: N802 (QgsServerFilter hook)
        handler = self._handler
        if handler is None:  # requestReady failed to get it
            return
        self._handler = None
        try:
            status = handler.statusCode()
            served = self._stats.end(status >= 400 or handler.exceptionRaised())
            if served is not None:
                self._on_served(served, status)
            if self._map not in self._cached_maps:
                self._on_new_map(self._map)
        except Exception:  # a monitoring failure must never fail the request
            pass
