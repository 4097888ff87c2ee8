"""The STEWARD service's StylePreview request: a view drawn with one layer in a style not stored.

`POST ?MAP=<project>&SERVICE=STEWARD&REQUEST=StylePreview&LAYERS=<layer ids, bottom first>
&STYLES=<a style per layer, empty for its current one>&LAYER=<the id of the layer previewed>
&CRS=<authid>&BBOX=<minx,miny,maxx,maxy, east first>&WIDTH=&HEIGHT=` with the body
`QML=<the style, base64url>` answers the PNG of the view, the layer LAYER drawn with the QML
instead of its own style, as Steward's console shows a style being edited before it is saved.

The QML goes into a copy of the layer (QgsMapLayer.importNamedStyle), as QGIS Desktop's "Load
Style" reads it; the project and its layers are left as they are, so the next request draws them
as stored. The view is drawn as QGIS Server's WMS draws a GetMap: at its default 90.7 DPI
(0.28 mm pixels), antialiased, on a transparent background, in the project's transform context,
under the request's access rules (QGIS Server's access controls: a layer they do not let read is
refused with 403, features they filter out are not drawn). Pixels are square: a BBOX of another
shape than WIDTH x HEIGHT is widened to the image's shape, where a GetMap stretches it.
"""

from __future__ import annotations

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsFeatureFilterProvider,
    QgsMapLayer,
    QgsMapRendererCustomPainterJob,
    QgsMapSettings,
    QgsProject,
    QgsRectangle,
)
from qgis.PyQt.QtCore import QBuffer, QByteArray, QIODevice, QSize
from qgis.PyQt.QtGui import QColor, QImage, QPainter
from qgis.PyQt.QtXml import QDomDocument
from qgis.server import QgsAccessControl

from .sld_style import SldRefusedError, decoded, layer_copy

REQUEST = "StylePreview"
# QGIS Server's WMS draws 0.28 mm pixels unless told a DPI.
WMS_DPI = 25.4 / 0.28
MAX_SIZE = 4096


def styled_copy(project: QgsProject, layer_id: str, qml: bytes) -> QgsMapLayer:
    """A copy of the layer drawing with the QML; SldRefusedError when QGIS cannot read it."""
    layer = layer_copy(project, layer_id)
    document = QDomDocument("qgis")
    parsed, problem, line, column = document.setContent(qml)
    if not parsed:
        where = "at line {}, column {}".format(line, column)
        raise SldRefusedError(400, "the style is not well-formed XML: {} {}".format(problem, where))
    loaded, message = layer.importNamedStyle(document)
    if not loaded:
        raise SldRefusedError(422, message or "QGIS read no style from the QML")
    return layer


def view_layer(project: QgsProject, layer_id: str, style: str) -> QgsMapLayer:
    """The project's layer, or a copy of it drawing with another of its styles."""
    layer = project.mapLayer(layer_id)
    if layer is None:
        raise SldRefusedError(404, "the project has no layer of id {!r}".format(layer_id))
    if not style:
        return layer
    copy = layer_copy(project, layer_id)
    if not copy.styleManager().setCurrentStyle(style):
        raise SldRefusedError(404, "layer {!r} has no style {!r}".format(layer_id, style))
    return copy


def number(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError as error:
        raise SldRefusedError(400, "{} is not a number: {!r}".format(name, text)) from error


def map_settings(project: QgsProject, layers: list[QgsMapLayer], parameter) -> QgsMapSettings:  # noqa: ANN001
    """The settings of the view the parameters describe, layers given bottom first."""
    crs = QgsCoordinateReferenceSystem(parameter("CRS"))
    if not crs.isValid():
        raise SldRefusedError(400, "CRS {!r} is not a CRS QGIS knows".format(parameter("CRS")))
    bbox = [number(value, "BBOX") for value in parameter("BBOX").split(",")]
    width, height = int(number(parameter("WIDTH"), "WIDTH")), int(number(parameter("HEIGHT"), "HEIGHT"))
    if len(bbox) != 4 or not (0 < width <= MAX_SIZE and 0 < height <= MAX_SIZE):
        raise SldRefusedError(400, "BBOX needs four numbers and WIDTH, HEIGHT 1 to {} pixels".format(MAX_SIZE))
    settings = QgsMapSettings()
    settings.setLayers(list(reversed(layers)))
    settings.setDestinationCrs(crs)
    settings.setOutputSize(QSize(width, height))
    settings.setExtent(QgsRectangle(*bbox))
    settings.setOutputDpi(WMS_DPI)
    settings.setBackgroundColor(QColor(0, 0, 0, 0))
    settings.setFlag(QgsMapSettings.Antialiasing, True)
    settings.setTransformContext(project.transformContext())
    return settings


def png_of(settings: QgsMapSettings, access: QgsFeatureFilterProvider | None) -> bytes:
    """The view drawn on this thread, as PNG, the features `access` filters out left out."""
    image = QImage(settings.outputSize(), QImage.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    job = QgsMapRendererCustomPainterJob(settings, painter)
    if access is not None:
        job.setFeatureFilterProvider(access)
    job.renderSynchronously()
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data)


def preview_png(project: QgsProject | None, parameter, access: QgsAccessControl | None) -> bytes:  # noqa: ANN001
    """The PNG the request's parameters (`parameter(name)`) ask for, under the access controls `access`."""
    if project is None:
        raise SldRefusedError(404, "the request names no project")
    ids = [layer_id for layer_id in parameter("LAYERS").split(",") if layer_id]
    styles = parameter("STYLES").split(",") if parameter("STYLES") else [""] * len(ids)
    previewed = parameter("LAYER")
    if previewed not in ids or len(styles) != len(ids):
        raise SldRefusedError(400, "LAYERS must hold LAYER, and STYLES a style per layer")
    qml = decoded(parameter("QML"), "QML")
    layers = [
        styled_copy(project, layer_id, qml) if layer_id == previewed else view_layer(project, layer_id, style)
        for layer_id, style in zip(ids, styles, strict=True)
    ]
    unreadable = [layer.name() for layer in layers if access is not None and not access.layerReadPermission(layer)]
    if unreadable:
        raise SldRefusedError(403, "the request's rules do not let read {}".format(", ".join(unreadable)))
    return png_of(map_settings(project, layers, parameter), access)
