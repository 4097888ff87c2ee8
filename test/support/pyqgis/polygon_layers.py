"""What the access tests' project writers share: polygon layers written into one GeoPackage, drawn
in one colour without outlines, and vector layers published by WFS and WFS-T."""

from qgis.core import (
    QgsFeature,
    QgsField,
    QgsFillSymbol,
    QgsGeometry,
    QgsSingleSymbolRenderer,
    QgsVectorFileWriter,
    QgsVectorLayer,
)


def write_polygon_layer(geopackage, name, fields, rows, context, new_file):
    """Writes `rows` ((QgsRectangle, [values]) each) as the GeoPackage's layer `name`, whose
    `fields` are (name, QVariant type) pairs; `new_file` replaces the file, else adds a layer."""
    memory = QgsVectorLayer("Polygon?crs=EPSG:4326", name, "memory")
    provider = memory.dataProvider()
    provider.addAttributes([QgsField(field, kind) for field, kind in fields])
    memory.updateFields()
    for rectangle, values in rows:
        feature = QgsFeature(memory.fields())
        feature.setGeometry(QgsGeometry.fromRect(rectangle))
        feature.setAttributes(values)
        provider.addFeature(feature)
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.layerName = name
    options.actionOnExistingFile = (
        QgsVectorFileWriter.CreateOrOverwriteFile if new_file else QgsVectorFileWriter.CreateOrOverwriteLayer
    )
    written = QgsVectorFileWriter.writeAsVectorFormatV2(memory, geopackage, context, options)
    assert written[0] == QgsVectorFileWriter.NoError, written


def flat_colour(layer, colour):
    """Draws `layer` in `colour` ("r,g,b,a") without outlines."""
    symbol = QgsFillSymbol.createSimple({"color": colour, "outline_style": "no"})
    layer.setRenderer(QgsSingleSymbolRenderer(symbol))


def publish_by_wfs(project, layer_ids):
    """Publishes the layers by WFS, with insert, update and delete allowed."""
    project.writeEntry("WFSLayers", "/", layer_ids)
    for operation in ("Update", "Insert", "Delete"):
        project.writeEntry("WFSTLayers", operation, layer_ids)
