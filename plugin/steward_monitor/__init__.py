"""Steward monitoring plugin for QGIS Server (loaded from QGIS_PLUGINPATH)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qgis.server import QgsServerInterface

    from .plugin import StewardMonitor


def serverClassFactory(serverIface: QgsServerInterface) -> StewardMonitor:  # noqa: N802, N803 (names QGIS Server requires)
    from .plugin import StewardMonitor  # noqa: PLC0415 (loaded when QGIS Server asks, as it expects)

    return StewardMonitor(serverIface)
