"""Writes a project of web, in-memory and file layers with QGIS's own writer, as QGIS Desktop saves
a project with a basemap, and prints whether QGIS reads each layer as valid, as JSON.

usage: write_provider_project.py OUTPUT GEOPACKAGE TILE_URL WMS_URL
TILE_URL holds {z}, {x} and {y}; WMS_URL serves a layer named "world" in EPSG:4326.
"""
import json
import os
import sys
from urllib.parse import quote

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsFeature,
    QgsGeometry,
    QgsPointXY,
    QgsProject,
    QgsRasterLayer,
    QgsVectorLayer,
)

output, geopackage, tiles, wms = sys.argv[1:5]
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
sketch = QgsVectorLayer("Point?crs=EPSG:4326&field=name:string(20)", "sketch", "memory")
for x, y in ((2, 45), (3, 46)):
    feature = QgsFeature(sketch.fields())
    feature.setAttributes(["here"])
    feature.setGeometry(QgsGeometry.fromPointXY(QgsPointXY(x, y)))
    sketch.dataProvider().addFeatures([feature])
sketch.updateExtents()
layers = [
    QgsRasterLayer(f"type=xyz&url={quote(tiles, safe=':/')}&zmax=4&zmin=0", "basemap", "wms"),
    QgsRasterLayer(f"crs=EPSG:4326&format=image/png&layers=world&styles&url={wms}", "world", "wms"),
    sketch,
    QgsVectorLayer(f"{geopackage}|layername=polygons", "polygons", "ogr"),
]
for layer in layers:
    project.addMapLayer(layer)
if not project.write(output):
    sys.exit(f"QGIS could not write {output}: {project.error()}")
print(json.dumps({layer.name(): layer.isValid() for layer in layers}))
app.exitQgis()
