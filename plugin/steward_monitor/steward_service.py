"""The STEWARD service of QGIS Server: Steward's requests that need QGIS itself, each a POST.

- SldStyle (sld_style.py): the QML QGIS reads from an SLD for a layer;
- StylePreview (style_preview.py): a view drawn with one layer in a style not stored.

QGIS Server runs services on its main thread while it serves the request, where QGIS may be
called: no other thread is involved, and nothing waits for a safe point. Neither changes the
project: what they style is a copy of a layer, dropped once answered.
"""

from __future__ import annotations

from qgis.core import QgsProject
from qgis.PyQt.QtCore import QByteArray
from qgis.server import QgsServerInterface, QgsServerRequest, QgsServerResponse, QgsService

from . import sld_style, style_preview
from .sld_style import SldRefusedError

SERVICE = "STEWARD"


class StewardService(QgsService):
    def __init__(self, server_iface: QgsServerInterface) -> None:
        super().__init__()
        # The access controls (Steward's access filter among them) that apply the request's rules.
        self._server_iface = server_iface

    def name(self) -> str:
        return SERVICE

    def version(self) -> str:
        return "1.0.0"

    def allowMethod(self, method: QgsServerRequest.Method) -> bool:  # noqa: N802 (QGIS API)
        return method == QgsServerRequest.PostMethod

    def executeRequest(  # noqa: N802 (QGIS API)
        self, request: QgsServerRequest, response: QgsServerResponse, project: QgsProject | None
    ) -> None:
        asked = request.parameter("REQUEST").lower()
        try:
            if asked == sld_style.REQUEST.lower():
                layer = sld_style.layer_copy(project, request.parameter("LAYER"))
                qml = sld_style.sld_as_qml(layer, sld_style.decoded(request.parameter("SLD")))
                _answer(response, 200, "application/xml; charset=utf-8", qml.encode("utf-8"))
            elif asked == style_preview.REQUEST.lower():
                _answer(
                    response,
                    200,
                    "image/png",
                    style_preview.preview_png(project, request.parameter, self._server_iface.accessControls()),
                )
            else:
                requests = "{} or {}".format(sld_style.REQUEST, style_preview.REQUEST)
                raise SldRefusedError(400, "the {} service answers REQUEST={} only".format(SERVICE, requests))
        except SldRefusedError as refusal:
            _answer(response, refusal.status, "text/plain; charset=utf-8", str(refusal).encode("utf-8"))


def _answer(response: QgsServerResponse, status: int, media_type: str, body: bytes) -> None:
    response.setStatusCode(status)
    response.setHeader("Content-Type", media_type)
    response.write(QByteArray(body))
