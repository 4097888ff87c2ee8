"""Wires the log capture, the stats filter and the Steward client into QGIS Server."""

import os

from qgis.core import Qgis, QgsApplication, QgsMessageLog
from qgis.PyQt.QtCore import Qt

from . import about, info
from .client import StewardClient, parse_addresses
from .invalidation import PendingInvalidations
from .logbuffer import LogBuffer
from .projects import CachedProjects
from .reload import ProjectReloader
from .stats import RequestStats, StatsFilter

LOG_TAG = "Steward"
LOGS_REPLY_BUDGET = 900 * 1024  # leaves room under the 1 MiB line limit for JSON escaping


def _log(message):
    QgsMessageLog.logMessage(message, LOG_TAG, Qgis.Info)


def _warn(message):
    """What an operator should see at QGIS Server's default log level (1, warnings)."""
    QgsMessageLog.logMessage(message, LOG_TAG, Qgis.Warning)


def _fit(lines):
    """The newest lines whose total size stays within the reply budget."""
    kept, size = [], 0
    for line in reversed(lines):
        size += len(line.encode("utf-8")) + 4
        if size > LOGS_REPLY_BUDGET:
            break
        kept.append(line)
    kept.reverse()
    return kept


class StewardMonitor:
    def __init__(self, server_iface):
        self._logs = LogBuffer()
        self._stats = RequestStats()
        self._projects = CachedProjects()
        self._invalidations = PendingInvalidations(self._projects.forget)
        # Direct connection: messages logged on other threads are captured there, without
        # depending on the main thread's event loop.
        QgsApplication.messageLog().messageReceived[str, str, Qgis.MessageLevel].connect(
            self._logs.on_message, Qt.DirectConnection
        )
        self._filter = StatsFilter(
            server_iface,
            self._stats,
            os.environ.get("QGIS_PROJECT_FILE", ""),
            self._invalidations,
            _warn,
            self._logs.on_request,
            self._projects.entries,
            self._projects.record_served,
        )
        server_iface.registerFilter(self._filter, 100)
        self._reloader = ProjectReloader(server_iface, self._invalidations, self._projects)
        self._client = self._start_client()

    def _start_client(self):
        port = os.environ.get("STEWARD_PORT", "")
        addresses = parse_addresses(os.environ.get("STEWARD_HOST", ""), int(port) if port.isdigit() else None)
        if not addresses:
            _warn("STEWARD_HOST (host[:port],... of the Steward processes) and STEWARD_PORT must be set to connect")
            return None
        handlers = {
            "metadata": lambda _params: info.metadata(self._stats),
            "logs": lambda _params: {"lines": _fit(self._logs.lines())},
            "stats": lambda _params: self._stats.snapshot(),
            "invalidate": self._invalidations.request,
            "projects": lambda _params: self._projects.snapshot(),
            "about": lambda _params: about.about(),
            "reload": self._reloader.request,
        }
        token = os.environ.get("STEWARD_MONITORING_TOKEN", "")
        client = StewardClient(
            addresses, token, handlers, _log, self._forget_database_projects, Qgis.QGIS_VERSION, warn=_warn
        )
        client.start()
        return client

    def _forget_database_projects(self):
        """Steward may have changed them while this instance was not connected to hear of it."""
        self._invalidations.queue(project for project in list(self._stats.projects) if project.startswith("postgresql:"))
