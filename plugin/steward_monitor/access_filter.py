"""The QgsAccessControlFilter that applies the request's rules (access.py) to QGIS Server's answers:
layer permissions (GetCapabilities, GetMap, GetFeatureInfo, GetLegendGraphic, GetPrint, WFS, WCS,
WMTS, OGC API Features), attributes (GetFeatureInfo, WFS GetFeature; DescribeFeatureType through trim_schema), feature
filters (GetMap, GetFeatureInfo, WFS GetFeature), edits (WFS-T) and the capabilities cache key.

QGIS Server calls it on its main thread while it serves a request: the only place the request's
parameters (STEWARD_ACCESS, MAP) may be read under FastCGI. The plugin's server filter reads
them once a request, at requestReady (`begin`), and forgets them at responseComplete (`end`);
a callback outside that span reads them itself.
"""

from __future__ import annotations

from qgis.core import QgsMapLayer, QgsVectorLayer
from qgis.PyQt.QtCore import QVariant
from qgis.server import QgsAccessControlFilter, QgsRequestHandler, QgsServerInterface

from .access import PARAMETER, REFUSE_ALL, RequestRules, Rules
from .access_expression import shorter_filter
from .access_schema import without_hidden
from .pluginlog import PluginLog

_UNREAD = Rules({"key": "unread"}, refuse_all=True)


class StewardAccessFilter(QgsAccessControlFilter):
    def __init__(self, server_iface: QgsServerInterface, log: PluginLog) -> None:
        super().__init__(server_iface)
        self._server_iface = server_iface
        # Parsed once per distinct value, their filters made shorter (access_expression.py).
        self._rules = RequestRules(shorter_filter)
        self._log = log
        # The rules of the request being served, from begin to end; _UNREAD outside.
        self._request: Rules | None = _UNREAD
        # Filters folded by a layer's text columns (access_expression.py), by filter and columns.
        self._folded: dict[tuple[str, frozenset[str]], str] = {}

    def begin(self, map_value: str) -> None:
        """requestReady: reads the request's rules once (QGIS Server converts the parameter to a
        Python string at each read, and calls the callbacks several times a request)."""
        self._request = self._read(map_value)

    def end(self) -> None:
        """responseComplete, or a requestReady that could not read the request: forgets its rules."""
        self._request = _UNREAD

    def _read(self, map_value: str | None = None) -> Rules | None:
        """The request's rules; None for no restriction. A failure refuses everything."""
        try:
            iface = self._server_iface
            value = iface.getEnv(PARAMETER)
            if not value:
                return None
            if map_value is None:
                map_value = iface.requestHandler().parameter("MAP")
            return self._rules.of(value, map_value)
        except Exception:  # never open what could not be judged
            self._log.failure("the access filter")
            return REFUSE_ALL

    def _current(self) -> Rules | None:
        rules = self._request
        return self._read() if rules is _UNREAD else rules

    def layerPermissions(self, layer: QgsMapLayer) -> QgsAccessControlFilter.LayerPermissions:  # noqa: N802 (QGIS API)
        permissions = QgsAccessControlFilter.LayerPermissions()
        rules = self._current()
        readable = rules is None or rules.readable(layer.name())
        writable = readable and (rules is None or rules.write)
        permissions.canRead = readable
        permissions.canInsert = permissions.canUpdate = permissions.canDelete = writable
        return permissions

    def authorizedLayerAttributes(self, layer: QgsVectorLayer, attributes: list[str]) -> list[str]:  # noqa: N802 (QGIS API)
        rules = self._current()
        hidden = rules.hidden.get(layer.name()) if rules is not None else None
        if not hidden:
            return list(attributes)
        return [attribute for attribute in attributes if attribute not in hidden]

    def layerFilterExpression(self, layer: QgsVectorLayer) -> str:  # noqa: N802 (QGIS API)
        rules = self._current()
        written = "" if rules is None else rules.filters.get(layer.name(), "")
        return written and self._folded_for(layer, written)

    def _folded_for(self, layer: QgsVectorLayer, written: str) -> str:
        """`written` with the inequalities of the layer's text columns folded, once per filter and columns."""
        text = frozenset(field.name() for field in layer.fields() if field.type() == QVariant.String)
        key = (written, text)
        folded = self._folded.get(key)
        if folded is None:
            folded = shorter_filter(written, text)
            if len(self._folded) >= RequestRules.KEPT:
                del self._folded[next(iter(self._folded))]
            self._folded[key] = folded
        return folded

    def cacheKey(self) -> str:  # noqa: N802 (QGIS API)
        rules = self._current()
        return "" if rules is None else rules.key

    def trim_schema(self, handler: QgsRequestHandler) -> None:
        """Leaves the attributes the request's rules hide out of a complete DescribeFeatureType
        answer, which QGIS Server writes without asking authorizedLayerAttributes. A failure
        serves nothing rather than the whole schema."""
        try:
            rules = self._current()
            if rules is None or not rules.hidden:
                return
            body = bytes(handler.body()).decode("utf-8")
            trimmed = without_hidden(body, rules.hidden)
            if trimmed != body:
                handler.clearBody()
                handler.appendBody(trimmed.encode("utf-8"))
        except Exception:
            self._log.failure("the access filter's schema")
            handler.clearBody()
            handler.setStatusCode(500)
