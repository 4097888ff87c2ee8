"""Writes projects the way QGIS Desktop fills them, with QGIS's own writer, for the project edits oracle.

usage: make_corpus.py FOLDER GEOPACKAGE RASTER
writes FOLDER/library/library.qgs (a project whose group and layer the corpus embeds) and
FOLDER/corpus/corpus.qgz: layers polygons, lines, points, rgb, a virtual layer; groups and a nested
group; an embedded group; two map themes; a layout with a map (fixed layer set) and a legend (own
model); a report with a legend in its header and a map in its body; a relation points -> polygons; a join of lines to polygons; snapping with individual layer
settings; an auxiliary field on points (the .qgd inside the .qgz); labels; an expression field;
temporal properties; elevation properties where the release has them (3.26 and later); a second style in the style manager of polygons; a project variable;
transaction and evaluation settings.
"""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsAuxiliaryLayer,
    QgsCoordinateReferenceSystem,
    QgsDateTimeRange,
    QgsExpressionContextUtils,
    QgsField,
    QgsLayout,
    QgsLayoutItemLegend,
    QgsLayoutItemMap,
    QgsLayerTreeModel,
    QgsLayoutPoint,
    QgsLayoutSize,
    QgsMapLayerDependency,
    QgsMapLayerStyle,
    QgsMapThemeCollection,
    QgsPalLayerSettings,
    QgsPrintLayout,
    QgsProject,
    QgsPropertyDefinition,
    QgsRasterLayer,
    QgsReport,
    QgsReportSectionLayout,
    QgsRectangle,
    QgsRelation,
    QgsSnappingConfig,
    QgsTolerance,
    QgsVectorLayer,
    QgsVectorLayerJoinInfo,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtCore import QDateTime, QVariant, Qt  # noqa: E402

folder, geopackage, raster = sys.argv[1:4]
app = QgsApplication([], False)
app.initQgis()


def style_of(layer):
    style = QgsMapLayerStyle()
    style.readFromLayer(layer)
    return style.xmlData()


def vector(name, table=None):
    layer = QgsVectorLayer(f"{geopackage}|layername={table or name}", name, "ogr")
    assert layer.isValid(), name
    return layer


# The project the corpus embeds a group from.
os.makedirs(os.path.join(folder, "library"), exist_ok=True)
library_path = os.path.join(folder, "library", "library.qgs")
library = QgsProject.instance()
library.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
shared = library.layerTreeRoot().addGroup("shared")
library_layer = vector("library_points", "points")
library.addMapLayer(library_layer, False)
shared.addLayer(library_layer)
assert library.write(library_path), "QGIS could not write the library project"
library.clear()

project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
project.setTitle("corpus")
metadata = project.metadata()
metadata.setAuthor("QGIS Desktop user")
project.setMetadata(metadata)
QgsExpressionContextUtils.setProjectVariable(project, "region", "south")

root = project.layerTreeRoot()
polygons, lines, points = vector("polygons"), vector("lines"), vector("points")
rgb = QgsRasterLayer(raster, "rgb", "gdal")
assert rgb.isValid()
virtual = QgsVectorLayer(f"?layer=ogr:{geopackage}|layername=points:source&query=select * from source", "virtual", "virtual")
assert virtual.isValid(), virtual.dataProvider().error().message() if virtual.dataProvider() else "virtual"
for layer in (polygons, lines, points, rgb, virtual):
    project.addMapLayer(layer, False)
vectors = root.addGroup("vectors")
nested = vectors.addGroup("nested")
vectors.addLayer(polygons)
nested.addLayer(lines)
nested.addLayer(points)
root.addLayer(rgb)
root.addLayer(virtual)
embedded = project.createEmbeddedGroup("shared", library_path, [])
assert embedded is not None, "QGIS could not embed the library's group"
root.addChildNode(embedded)

# Style manager: a second style on polygons, the first staying current.
manager = polygons.styleManager()
manager.addStyleFromLayer("outline")
manager.setCurrentStyle("outline")
polygons.renderer().symbol().setColor(Qt.blue)
manager.setCurrentStyle("default")

# Labels, an expression field, temporal properties.
labels = QgsPalLayerSettings()
labels.fieldName = "name"
lines.setLabeling(QgsVectorLayerSimpleLabeling(labels))
lines.setLabelsEnabled(True)
points.addExpressionField("upper(name)", QgsField("shout", QVariant.String))
# Elevation: a z offset and scale on points, and the project's terrain offset (QGIS 3.26 and later).
elevation = points.elevationProperties()
if elevation is not None and hasattr(elevation, "setZOffset"):
    elevation.setZOffset(12.5)
    elevation.setZScale(2)
if hasattr(project, "elevationProperties"):
    project.elevationProperties().terrainProvider().setOffset(3)

temporal = rgb.temporalProperties()
temporal.setIsActive(True)
temporal.setFixedTemporalRange(
    QgsDateTimeRange(QDateTime(2024, 5, 1, 0, 0, 0, 0, Qt.UTC), QDateTime(2024, 5, 2, 0, 0, 0, 0, Qt.UTC))
)

# A relation points -> polygons, and lines joined to polygons.
relation = QgsRelation()
relation.setId("points_in_polygons")
relation.setName("points in polygons")
relation.setReferencingLayer(points.id())
relation.setReferencedLayer(polygons.id())
relation.addFieldPair("name", "name")
assert relation.isValid(), relation.validationError()
project.relationManager().addRelation(relation)
join = QgsVectorLayerJoinInfo()
join.setJoinLayer(polygons)
join.setJoinFieldName("name")
join.setTargetFieldName("name")
join.setPrefix("zone_")
assert lines.addJoin(join)

# Auxiliary storage: a field on points, saved in the .qgd inside the .qgz.
auxiliary = project.auxiliaryStorage().createAuxiliaryLayer(points.fields().field("fid"), points)
points.setAuxiliaryLayer(auxiliary)
auxiliary = points.auxiliaryLayer()
definition = QgsPropertyDefinition("note", QgsPropertyDefinition.DataTypeString, "note", "")
assert auxiliary.addAuxiliaryField(definition)
index = points.fields().lookupField("auxiliary_storage__note")
assert index >= 0, [field.name() for field in points.fields()]
points.startEditing()
for feature in list(points.getFeatures()):
    points.changeAttributeValue(feature.id(), index, f"aux-{feature['name']}")
assert points.commitChanges(), points.commitErrors()

# Snapping with individual layer settings for every vector layer.
snapping = project.snappingConfig()
snapping.setEnabled(True)
snapping.setMode(QgsSnappingConfig.AdvancedConfiguration)
for layer in (polygons, lines, points):
    snapping.setIndividualLayerSettings(
        layer,
        QgsSnappingConfig.IndividualLayerSettings(True, QgsSnappingConfig.VertexFlag, 12, QgsTolerance.Pixels, 0, 0),
    )
project.setSnappingConfig(snapping)

# Map themes: all layers, and one without rgb.
themes = project.mapThemeCollection()
model = QgsLayerTreeModel(root)
themes.insert("everything", QgsMapThemeCollection.createThemeFromCurrentState(root, model))
root.findLayer(rgb.id()).setItemVisibilityChecked(False)
themes.insert("vectors only", QgsMapThemeCollection.createThemeFromCurrentState(root, model))
root.findLayer(rgb.id()).setItemVisibilityChecked(True)

# A layout: a map with a fixed layer set, and a legend with its own model.
layout = QgsPrintLayout(project)
layout.initializeDefaults()
layout.setName("atlas page")
frame = QgsLayoutItemMap(layout)
frame.attemptMove(QgsLayoutPoint(10, 10))
frame.attemptResize(QgsLayoutSize(150, 150))
frame.setExtent(QgsRectangle(1, 44, 3, 46))
frame.setLayers([points, lines, polygons, rgb])
frame.setKeepLayerSet(True)
layout.addLayoutItem(frame)
legend = QgsLayoutItemLegend(layout)
legend.setLinkedMap(frame)
legend.setAutoUpdateModel(False)
legend.attemptMove(QgsLayoutPoint(170, 10))
layout.addLayoutItem(legend)
frame.setLayerStyleOverrides({layer.id(): style_of(layer) for layer in (points, lines)})
frame.setKeepLayerStyles(True)
layout.atlas().setCoverageLayer(points)
layout.atlas().setEnabled(True)
project.layoutManager().addLayout(layout)

# A report: its header holds a legend, its body section a map with a fixed layer set.
report = QgsReport(project)
report.setName("register")
header = QgsLayout(project)
header.initializeDefaults()
header_legend = QgsLayoutItemLegend(header)
header_legend.setAutoUpdateModel(False)
header.addLayoutItem(header_legend)
report.setHeader(header)
report.setHeaderEnabled(True)
section = QgsReportSectionLayout(report)
body = QgsLayout(project)
body.initializeDefaults()
body_map = QgsLayoutItemMap(body)
body_map.attemptResize(QgsLayoutSize(100, 100))
body_map.setExtent(QgsRectangle(1, 44, 3, 46))
body_map.setLayers([polygons, points])
body_map.setKeepLayerSet(True)
body.addLayoutItem(body_map)
section.setBody(body)
report.appendChild(section)
project.layoutManager().addLayout(report)

# References QGIS keeps when the layer goes: a data dependency, server and identify settings.
lines.setDependencies([QgsMapLayerDependency(points.id())])
project.writeEntry("WFSLayers", "/", [points.id(), lines.id()])
project.writeEntry("Identify", "/disabledLayers", [points.id()])

# Set last: an open transaction group would hold the GeoPackage while points are edited above.
project.setAutoTransaction(True)
project.setEvaluateDefaultValues(True)

output = os.path.join(folder, "corpus", "corpus.qgz")
os.makedirs(os.path.dirname(output), exist_ok=True)
assert project.write(output), "QGIS could not write the corpus project"
app.exitQgis()
