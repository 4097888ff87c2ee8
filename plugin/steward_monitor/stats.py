"""Request statistics gathered by a QgsServerFilter.

The filter hooks run on the rendering path, so they only swap an immutable snapshot; the socket
thread reads that snapshot without a lock (a reference assignment is atomic in CPython). The same
filter is the main thread's safe point as each request starts (safepoint.py): it runs the work
the socket thread queued (project drops and reloads, log lines), nothing when none waits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from qgis.server import QgsRequestHandler, QgsServerFilter, QgsServerInterface

from .pluginlog import PluginLog
from .safepoint import SafePoint
from .turns import WriteTurns

# (service, request, project, started, elapsed or None while in flight)
Served = tuple[str, str, str, float, float | None]

MAX_PROJECTS = 1000
MAX_REQUEST_NAMES = 50  # distinct REQUEST values counted apart; the rest count as "other"


class RequestStats:
    # Slots keep the attributes the hooks write together in a few cache lines.
    __slots__ = ("count", "failures", "busy_seconds", "by_request", "_current", "projects")  # noqa: RUF023 (this order)

    def __init__(self) -> None:
        self.count = 0
        self.failures = 0
        self.busy_seconds = 0.0  # time spent serving the requests counted
        self.by_request: dict[str, int] = {}  # REQUEST value -> requests served
        self._current: Served | None = None
        self.projects: dict[str, None] = {}  # insertion-ordered set of projects this instance has served

    def begin(self, service: str, request: str, project: str) -> None:
        self._current = (service, request, project, time.monotonic(), None)
        if project and project not in self.projects and len(self.projects) < MAX_PROJECTS:
            self.projects[project] = None

    def end(self, failed: bool = False) -> Served | None:
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

    def snapshot(self) -> dict[str, Any]:
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

    Counts requests; runs the main thread's safe point (`safe_point`) when work waits; once the
    response is complete, hands `on_served` the request's record (RequestStats.end) and its HTTP
    status (the log's request line), hands a DescribeFeatureType answer to `on_schema` before it
    is sent (access_schema.py), and runs `on_new_map` with the request's MAP value when
    `cached_maps` (the cached projects' record, tested without a call) does not list it. `busy`
    says whether a request is being served, for the safe point run between requests. A WFS-T
    Transaction is served in its turn among the host's processes (`turns`, turns.py). The access
    filter reads the request's rules once: `on_ready` is given the request's MAP value at
    requestReady, and `on_done` called at responseComplete (access_filter.py).

    requestReady() runs on the main thread, before QGIS Server looks the request's project up in
    its cache, so an invalidated or reloaded project is read again by this request. The hooks run
    on the rendering path and between maps the CPU caches hold the map's data, so every object
    Python touches there costs: they make as few calls as they can. A failure in them is logged
    (rate-limited) and never fails the request.
    """

    def __init__(
        self,
        server_iface: QgsServerInterface,
        stats: RequestStats,
        default_project: str,
        safe_point: SafePoint,
        log: PluginLog,
        on_served: Callable[[Served, int], None] = lambda _served, _status: None,
        cached_maps: dict[str, Any] | None = None,
        on_new_map: Callable[[str], None] = lambda _map: None,
        turns: WriteTurns | None = None,
        on_schema: Callable[[QgsRequestHandler], None] = lambda _handler: None,
        on_ready: Callable[[str], None] = lambda _map: None,
        on_done: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(server_iface)
        self._server_iface = server_iface
        self._stats = stats
        self._default_project = default_project
        self._safe_point = safe_point
        self._pending = safe_point.pending
        self._log = log
        self._on_served = on_served
        self._cached_maps = {} if cached_maps is None else cached_maps
        self._on_new_map = on_new_map
        self._turns = turns
        self._on_schema = on_schema
        self._on_ready = on_ready
        self._on_done = on_done
        self._describing = False
        self.busy = False
        # The request's handler and MAP value, from requestReady to responseComplete: QGIS Server
        # calls both hooks within one request, while that handler lives.
        self._handler: QgsRequestHandler | None = None
        self._map = ""

    def requestReady(self) -> None:  # noqa: N802 (QgsServerFilter hook)
        self.busy = True
        if self._pending:
            self._safe_point.run()
        try:
            handler = self._server_iface.requestHandler()
            # Three lookups rather than parameterMap(), which copies every parameter into a dict.
            # QGIS Server knows these three by name, whatever their case in the request.
            parameter = handler.parameter
            map_value = parameter("MAP")
            self._on_ready(map_value)
            self._map = map_value or self._default_project
            request = parameter("REQUEST")
            self._describing = request.lower() == "describefeaturetype"
            self._stats.begin(parameter("SERVICE"), request, self._map)
            if self._turns is not None:
                self._turns.begin(request)
        except Exception:  # a monitoring failure must never fail the request
            self._log.failure("requestReady")
            self._on_done()  # never an earlier request's rules
            handler = None
        self._handler = handler  # never an earlier request's, should asking for this one fail

    def responseComplete(self) -> None:  # noqa: N802 (QgsServerFilter hook)
        self.busy = False
        self._on_done()
        if self._turns is not None and self._turns.holding:
            self._turns.end()
        handler = self._handler
        if handler is None:  # requestReady failed to get it
            return
        self._handler = None
        if self._describing:
            self._on_schema(handler)
        try:
            status = handler.statusCode()
            served = self._stats.end(status >= 400 or handler.exceptionRaised())
            if served is not None:
                self._on_served(served, status)
            if self._map not in self._cached_maps:
                self._on_new_map(self._map)
        except Exception:  # a monitoring failure must never fail the request
            self._log.failure("responseComplete")
