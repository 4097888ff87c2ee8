"""What the instance reports about itself in reply to `metadata`."""

import platform

from qgis.core import Qgis, QgsProviderRegistry
from qgis.PyQt.QtCore import qVersion


def _gdal_version():
    try:
        from osgeo import gdal

        return gdal.VersionInfo("RELEASE_NAME")
    except ImportError:
        return ""


def _active_server_plugins():
    from qgis import utils

    return list(utils.server_active_plugins)


def metadata(stats):
    return {
        "cache": {"projects": list(stats.projects)},
        "plugins": _active_server_plugins(),
        "providers": list(QgsProviderRegistry.instance().providerList()),
        "versions": {
            "gdal": _gdal_version(),
            "python": platform.python_version(),
            "qt": qVersion(),
            "qgis": Qgis.QGIS_VERSION,
        },
    }
