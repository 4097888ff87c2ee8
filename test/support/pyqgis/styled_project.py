"""A project whose one layer's styles and labels read a field, for the datasource repair test.

usage: styled_project.py OUTPUT GEOPACKAGE
The layer "parcels" reads GEOPACKAGE's "polygons" layer, categorized by its "name" field (the one
feature, "polygons-0", in pure red) and labelled with it.
"""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsCategorizedSymbolRenderer,
    QgsCoordinateReferenceSystem,
    QgsFillSymbol,
    QgsPalLayerSettings,
    QgsProject,
    QgsRendererCategory,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)

output, geopackage = sys.argv[1:]
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
layer = QgsVectorLayer(f"{geopackage}|layername=polygons", "parcels", "ogr")
assert layer.isValid(), geopackage
red = QgsFillSymbol.createSimple({"color": "255,0,0,255", "outline_style": "no"})
grey = QgsFillSymbol.createSimple({"color": "128,128,128,255", "outline_style": "no"})
layer.setRenderer(
    QgsCategorizedSymbolRenderer(
        "name", [QgsRendererCategory("polygons-0", red, "first"), QgsRendererCategory(None, grey, "other")]
    )
)
labels = QgsPalLayerSettings()
labels.fieldName = "name"
labels.enabled = True
layer.setLabeling(QgsVectorLayerSimpleLabeling(labels))
layer.setLabelsEnabled(True)
project.addMapLayer(layer)
project.writeEntryBool("Paths", "/Absolute", True)
if not project.write(output):
    sys.exit(f"QGIS could not write {output}: {project.error()}")
app.exitQgis()
