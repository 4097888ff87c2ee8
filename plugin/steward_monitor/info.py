"""What the instance reports about itself in reply to `metadata`.

Versions and data providers are read once, on the main thread as the plugin starts (importing
GDAL's bindings and asking QGIS or Qt read the environment, which under FastCGI only the main
thread may touch). What changes is read when asked, from Python objects only: the projects
served (stats.py) and the list of active server plugins `qgis.utils` keeps.
"""

from __future__ import annotations

import platform
from typing import Any

from qgis import utils
from qgis.core import Qgis, QgsProviderRegistry
from qgis.PyQt.QtCore import qVersion

from .stats import RequestStats


def qgis_version() -> str:
    """The QGIS version in ASCII, `3.22.16`: Qgis.QGIS_VERSION also carries the release name."""
    number = Qgis.QGIS_VERSION_INT
    return "{}.{}.{}".format(number // 10000, number // 100 % 100, number % 100)


def qgis_release() -> str:
    """The release name, `Białowieża`."""
    return str(Qgis.QGIS_RELEASE_NAME)


def _gdal_version() -> str:
    try:
        from osgeo import gdal  # noqa: PLC0415 (GDAL's Python bindings may be absent)
    except ImportError:
        return ""
    return str(gdal.VersionInfo("RELEASE_NAME"))


class Metadata:
    """Made on the main thread at start; `answer` runs on the socket thread."""

    def __init__(self, stats: RequestStats) -> None:
        self._stats = stats
        self._providers = list(QgsProviderRegistry.instance().providerList())
        self._versions = {
            "gdal": _gdal_version(),
            "python": platform.python_version(),
            "qt": qVersion(),
            "qgis": qgis_version(),
            "qgis_release": qgis_release(),
        }

    def answer(self, _params: object = None) -> dict[str, Any]:
        return {
            "cache": {"projects": list(self._stats.projects)},
            "plugins": list(utils.server_active_plugins),
            "providers": self._providers,
            "versions": self._versions,
        }
