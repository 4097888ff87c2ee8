"""What the instance reports in reply to `about`: its server settings and where each came from,
the fonts it can draw labels with, and its process's memory and uptime and the machine's load.

Settings and fonts are read once, on the main thread as the plugin starts (QgsServerSettings,
QSettings and QFontDatabase read the environment, which under FastCGI only the main thread may
touch, and QGIS Server itself reads its settings once at start). The process figures are read
when asked, from /proc: plain file reads, safe on the socket thread. Versions, data providers
and plugins are in `metadata` (info.py).
"""

from __future__ import annotations

import os
from typing import Any

from qgis.PyQt.QtCore import QSettings
from qgis.PyQt.QtGui import QFontDatabase
from qgis.server import QgsServerSettings

# (environment variable, QgsServerSettings getter, key of QGIS's ini file QGIS Server 3.22 also reads)
SETTINGS: tuple[tuple[str, str, str | None], ...] = (
    ("QGIS_PROJECT_FILE", "projectFile", None),
    ("QGIS_SERVER_PARALLEL_RENDERING", "parallelRendering", "qgis/parallel_rendering"),
    ("QGIS_SERVER_MAX_THREADS", "maxThreads", "qgis/max_threads"),
    ("QGIS_SERVER_IGNORE_BAD_LAYERS", "ignoreBadLayers", None),
    ("QGIS_SERVER_TRUST_LAYER_METADATA", "trustLayerMetadata", None),
    ("QGIS_SERVER_DISABLE_GETPRINT", "getPrintDisabled", None),
    ("QGIS_SERVER_CACHE_DIRECTORY", "cacheDirectory", "cache/directory"),
    ("QGIS_SERVER_CACHE_SIZE", "cacheSize", "cache/size"),
    ("QGIS_SERVER_WMS_MAX_WIDTH", "wmsMaxWidth", "qgis/max_wms_width"),
    ("QGIS_SERVER_WMS_MAX_HEIGHT", "wmsMaxHeight", "qgis/max_wms_height"),
    ("QGIS_SERVER_OVERRIDE_SYSTEM_LOCALE", "overrideSystemLocale", "locale/userLocale"),
    ("QGIS_SERVER_SHOW_GROUP_SEPARATOR", "showGroupSeparator", "locale/showGroupSeparator"),
    ("QGIS_SERVER_LOG_LEVEL", "logLevel", None),
    ("QGIS_SERVER_LOG_FILE", "logFile", None),
    ("QGIS_SERVER_LOG_STDERR", "logStderr", None),
    ("QGIS_SERVER_LOG_PROFILE", "logProfile", None),
    ("QGIS_SERVER_API_RESOURCES_DIRECTORY", "apiResourcesDirectory", None),
    ("QGIS_SERVER_API_WFS3_MAX_LIMIT", "apiWfs3MaxLimit", None),
    ("QGIS_SERVER_LANDING_PAGE_PROJECTS_DIRECTORIES", "landingPageProjectsDirectories", None),
    ("QGIS_SERVER_LANDING_PAGE_PROJECTS_PG_CONNECTIONS", "landingPageProjectsPgConnections", None),
    ("QGIS_SERVER_LANDING_PAGE_PREFIX", "landingPageBaseUrlPrefix", None),
)

JsonScalar = bool | int | float | str


def _json_value(value: object) -> JsonScalar:
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def settings() -> dict[str, Any]:
    """Each setting as QGIS Server reads it at start: environment first, then the ini file, then its default."""
    loaded = QgsServerSettings()
    loaded.load()
    ini = QSettings()
    result = []
    for variable, getter, ini_key in SETTINGS:
        if variable in os.environ:
            source = "environment"
        elif ini_key is not None and ini.contains(ini_key):
            source = "ini"
        else:
            source = "default"
        result.append({"name": variable, "value": _json_value(getattr(loaded, getter)()), "source": source})
    return {"ini_file": loaded.iniFile(), "values": result}


# The /proc files are read as bytes: decoding text would import a codec on the socket thread.


def _status_bytes(field: bytes) -> int:
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(field + b":"):
                return int(line.split()[1]) * 1024
    return 0


class About:
    """Made on the main thread at start; `answer` runs on the socket thread."""

    def __init__(self) -> None:
        self._settings = settings()
        self._fonts = sorted(set(QFontDatabase().families()))
        self._clock_ticks = os.sysconf("SC_CLK_TCK")
        self._cpus = os.cpu_count() or 1

    def answer(self, _params: object = None) -> dict[str, Any]:
        return {"settings": self._settings, "fonts": self._fonts, "process": self.process()}

    def process(self) -> dict[str, Any]:
        load = os.getloadavg()
        return {
            "pid": os.getpid(),
            "memory_bytes": _status_bytes(b"VmRSS"),
            "peak_memory_bytes": _status_bytes(b"VmHWM"),
            "uptime_seconds": self._uptime_seconds(),
            "load": {"1m": load[0], "5m": load[1], "15m": load[2]},
            "cpus": self._cpus,
        }

    def _uptime_seconds(self) -> int:
        """Seconds since the process started, from its start time in clock ticks since boot."""
        with open("/proc/self/stat", "rb") as stat:
            started_ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as uptime:
            since_boot = float(uptime.read().split()[0])
        return round(since_boot - started_ticks / self._clock_ticks)
