"""Steward Publish: publishes the open QGIS project with its local data to a Steward server."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qgis.gui import QgisInterface

    from .plugin import StewardPublishPlugin


def classFactory(iface: QgisInterface) -> StewardPublishPlugin:  # noqa: N802 (the name QGIS calls)
    # Imported when QGIS loads the plugin, not when it reads the package's metadata.
    from .plugin import StewardPublishPlugin  # noqa: PLC0415

    return StewardPublishPlugin(iface)
