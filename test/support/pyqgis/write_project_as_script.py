"""Writes a project as a PyQGIS script does, asking no layer for its extent: QGIS 3.40 and later then
save vector layers without <extent>, where QGIS Desktop, which computes it as it draws, saves one.

usage: write_project_as_script.py OUTPUT GEOPACKAGE RASTER

Prints the extent QGIS finds for each layer once asked, as JSON by layer name.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsCoordinateReferenceSystem, QgsProject, QgsRasterLayer, QgsVectorLayer  # noqa: E402

output, geopackage, raster = sys.argv[1:4]
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
layers = [QgsVectorLayer(f"{geopackage}|layername={name}", name, "ogr") for name in ("polygons", "lines")]
layers.append(QgsRasterLayer(raster, "rgb", "gdal"))
for layer in layers:
    assert layer.isValid(), layer.name()
    project.addMapLayer(layer)
assert project.write(output), "QGIS could not write the project"
extents = {}
for layer in layers:
    box = layer.extent()
    extents[layer.name()] = [box.xMinimum(), box.yMinimum(), box.xMaximum(), box.yMaximum()]
print(json.dumps(extents))
app.exitQgis()
