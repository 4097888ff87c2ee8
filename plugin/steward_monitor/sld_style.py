"""The STEWARD service's SldStyle request (steward_service.py): a layer's style read from SLD by QGIS itself.

`POST ?MAP=<project>&SERVICE=STEWARD&REQUEST=SldStyle&LAYER=<layer id>` with the body
`SLD=<the SLD document, base64url>` (application/x-www-form-urlencoded) answers the QML QGIS
Desktop would save after loading that SLD into the layer with "Load Style"
(QgsMapLayer.loadSldStyle): the symbology and labels QGIS read from it, on a copy of the
project's layer, so that the renderer fits its geometry and whatever the SLD leaves alone (labels
of a layer whose SLD has no TextSymbolizer) stays as the layer has it. A document QGIS cannot read
is answered 422 with QGIS's message.

QGIS Server runs services on its main thread while it serves the request, where QGIS may be
called: no other thread is involved, and nothing waits for a safe point. The conversion changes
nothing: the copy is dropped once written.

The document travels encoded because QGIS Server reads a POST body that is XML as parameters (its
root's name as REQUEST, each of its attributes as another, MAP included) and any other body as a
query string: base64url holds no `&` or `=`, so the body is the SLD parameter and nothing else.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile

from qgis.core import QgsMapLayer, QgsProject, QgsReadWriteContext
from qgis.PyQt.QtXml import QDomDocument

REQUEST = "SldStyle"
# What loadSldStyle changes of a layer: its renderer and, when the SLD has a TextSymbolizer, its labels.
CATEGORIES = QgsMapLayer.StyleCategories(QgsMapLayer.Symbology | QgsMapLayer.Labeling)


class SldRefusedError(Exception):
    """The request's own fault: answered with `status` and the message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def sld_as_qml(layer: QgsMapLayer, sld: bytes) -> str:
    """The QML of `layer` after QGIS loaded `sld` into it; SldRefusedError when QGIS reads no style from it."""
    parsed, problem, line, column = QDomDocument().setContent(sld, True)
    if not parsed:
        where = "at line {}, column {}".format(line, column)
        raise SldRefusedError(400, "the document is not well-formed XML: {} {}".format(problem, where))
    # loadSldStyle reads a file: the document goes through one, so that QGIS reads it as from Desktop.
    handle, path = tempfile.mkstemp(suffix=".sld")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(sld)
        message, loaded = layer.loadSldStyle(path)
    finally:
        os.unlink(path)
    if not loaded:
        raise SldRefusedError(422, message.replace(path, "the document") or "QGIS read no style from the document")
    document = QDomDocument("qgis")
    error = layer.exportNamedStyle(document, QgsReadWriteContext(), CATEGORIES)
    if error:
        raise SldRefusedError(500, "QGIS could not write the style: {}".format(error))
    return document.toString()


def decoded(parameter: str, name: str = "SLD") -> bytes:
    """The document the parameter `name` holds as base64url (padding optional)."""
    if not parameter:
        raise SldRefusedError(400, "the request needs {}, the document as base64url".format(name))
    try:
        return base64.urlsafe_b64decode(parameter + "=" * (-len(parameter) % 4))
    except (binascii.Error, ValueError) as error:
        raise SldRefusedError(400, "{} is not base64url: {}".format(name, error)) from error


def layer_copy(project: QgsProject | None, layer_id: str) -> QgsMapLayer:
    layer = project.mapLayer(layer_id) if project is not None and layer_id else None
    if layer is None:
        raise SldRefusedError(404, "the project has no layer of id {!r}".format(layer_id))
    return layer.clone()
