"""Wires the log capture, the server filter, the main thread's safe point, the Steward client and
the STEWARD service (steward_service.py) into QGIS Server.

The constructor runs on QGIS Server's main thread as it starts, before it serves any request, so
the process's own environment is in place: what the answers need from QGIS, Qt, GDAL or the
resolver is read here, once. From then on the socket thread answers from Python objects only, and
leaves what needs QGIS for the main thread's safe points (safepoint.py).
"""

from __future__ import annotations

import os
import socket
from typing import Any

from qgis.core import Qgis, QgsApplication, QgsMessageLog
from qgis.PyQt.QtCore import Qt, QTimer
from qgis.server import QgsServerInterface

from . import info
from .about import About
from .access_filter import StewardAccessFilter
from .client import StewardClient, parse_addresses, resolve_addresses
from .invalidation import PendingInvalidations
from .logbuffer import LogBuffer, local_offset_seconds
from .pluginlog import PluginLog
from .projects import CachedProjects
from .reload import ProjectReloader
from .safepoint import SafePoint
from .stats import RequestStats, StatsFilter
from .steward_service import StewardService
from .turns import WriteTurns, lock_path

LOG_TAG = "Steward"
LOGS_REPLY_BUDGET = 900 * 1024  # leaves room under the 1 MiB line limit for JSON escaping
# How often the main thread looks for queued work between requests, when QGIS Server runs Qt's
# event loop then (qgis_mapserver); qgis_mapserv.fcgi only runs it within requests.
IDLE_CHECK_MS = 100


def _fit(lines: list[str]) -> list[str]:
    """The newest lines whose total size stays within the reply budget."""
    kept, size = [], 0
    for line in reversed(lines):
        size += len(line.encode("utf-8")) + 4
        if size > LOGS_REPLY_BUDGET:
            break
        kept.append(line)
    kept.reverse()
    return kept


def _level(warning: bool) -> Qgis.MessageLevel:
    return Qgis.Warning if warning else Qgis.Info


class StewardMonitor:
    def __init__(self, server_iface: QgsServerInterface) -> None:
        self._server_iface = server_iface
        self._logs = LogBuffer(local_offset_seconds())
        self._safe_point = SafePoint(self._failed)
        self._log = PluginLog(self._record, self._emit, self._safe_point.ring)
        self._stats = RequestStats()
        self._projects = CachedProjects()
        self._invalidations = PendingInvalidations(self._projects.forget, self._safe_point.ring)
        self._reloader = ProjectReloader(
            server_iface, self._invalidations, self._projects, self._safe_point.ring, self._failed
        )
        self._safe_point.add_drain("the project invalidations", self._drop_invalidated)
        self._safe_point.add_drain("the project reloads", self._reloader.run_queued)
        self._safe_point.add_drain("the plugin's log", self._log.flush)
        # Direct connection: messages logged on other threads are captured there, without
        # depending on the main thread's event loop.
        QgsApplication.messageLog().messageReceived[str, str, Qgis.MessageLevel].connect(
            self._logs.on_message, Qt.DirectConnection
        )
        # Steward's roles, as each request's STEWARD_ACCESS parameter carries them (access.py).
        self._access = StewardAccessFilter(server_iface, self._log)
        server_iface.registerAccessControl(self._access, 100)
        self._filter = StatsFilter(
            server_iface,
            self._stats,
            os.environ.get("QGIS_PROJECT_FILE", ""),
            self._safe_point,
            self._log,
            self._logs.on_request,
            self._projects.entries,
            self._projects.record_served,
            WriteTurns(lock_path(), self._failed),
            self._access.trim_schema,
            self._access.begin,
            self._access.end,
        )
        server_iface.registerFilter(self._filter, 100)
        # Steward's SLD uploads and style previews: QGIS itself reads them, on the main thread of a request.
        self._steward_service = StewardService(server_iface)
        server_iface.serviceRegistry().registerService(self._steward_service)
        self._idle = QTimer()
        self._idle.timeout.connect(self._between_requests)
        self._idle.start(IDLE_CHECK_MS)
        self._client = self._start_client()

    def _record(self, message: str, warning: bool) -> None:
        self._logs.add(message, LOG_TAG, _level(warning))

    def _emit(self, message: str, warning: bool) -> None:
        """Main thread only. Recorded in the log buffer already, so not captured again."""
        with self._logs.muted(LOG_TAG):
            QgsMessageLog.logMessage(message, LOG_TAG, _level(warning))

    def _failed(self, where: str) -> None:
        self._log.failure(where)

    def _between_requests(self) -> None:
        """The timer's safe point: the main thread runs Qt's event loop, and serves no request."""
        if self._safe_point.pending and not self._filter.busy:
            self._safe_point.run()

    def _drop_invalidated(self) -> None:
        self._invalidations.apply(
            self._server_iface, lambda value: self._failed("the removal of {} from the project cache".format(value))
        )

    def _start_client(self) -> StewardClient | None:
        port = os.environ.get("STEWARD_PORT", "")
        entries = parse_addresses(os.environ.get("STEWARD_HOST", ""), int(port) if port.isdigit() else None)
        if not entries:
            self._log.warning(
                "STEWARD_HOST (host[:port],... of the Steward processes) and STEWARD_PORT must be set to connect"
            )
            return None
        addresses = resolve_addresses(entries, self._log)
        if not addresses:
            return None
        metadata, about = info.Metadata(self._stats), About()
        handlers: dict[str, Any] = {
            "metadata": metadata.answer,
            "logs": self._log_page,
            "stats": lambda _params: self._stats.snapshot(),
            "invalidate": self._invalidations.request,
            "projects": self._projects.snapshot,
            "about": about.answer,
            "reload": self._reloader.request,
        }
        hello = {
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
            "qgis_version": info.qgis_version(),
            "qgis_release": info.qgis_release(),
        }
        token = os.environ.get("STEWARD_MONITORING_TOKEN", "")
        client = StewardClient(addresses, token, handlers, self._log, self._forget_database_projects, hello)
        client.start()
        return client

    def _log_page(self, params: dict[str, Any]) -> dict[str, Any]:
        """The lines after `params.since` (every line kept without it), and the cursor to ask with next."""
        since = params.get("since")
        page = self._logs.read(since if type(since) is int and since >= 0 else 0)
        return {"lines": _fit(page.lines), "next": page.next}

    def _forget_database_projects(self) -> None:
        """Steward may have changed them while this instance was not connected to hear of it."""
        self._invalidations.queue(
            project for project in list(self._stats.projects) if project.startswith("postgresql:")
        )
