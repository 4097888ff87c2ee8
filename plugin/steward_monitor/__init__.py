"""Steward monitoring plugin for QGIS Server (loaded from QGIS_PLUGINPATH)."""


def serverClassFactory(serverIface):  # noqa: N802 (name required by QGIS Server)
    from .plugin import StewardMonitor

    return StewardMonitor(serverIface)
