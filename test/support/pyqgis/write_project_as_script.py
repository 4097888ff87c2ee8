"""Writes a project as a PyQGIS script does, asking no layer for its extent: QGIS 3.40 and later then
save vector layers without <extent>, where QGIS Desktop, which computes it as it draws, saves one.

usage: write_project_as_script.py OUTPUT GEOPACKAGE RASTER

Prints the extent QGIS finds for each layer once asked, as JSON by layer name.
"""
import json
import sys

from fixture_project import fixture_project

output, geopackage, raster = sys.argv[1:4]
app, project, layers = fixture_project(geopackage, raster)
for layer in layers:
    project.addMapLayer(layer)
assert project.write(output), "QGIS could not write the project"
extents = {}
for layer in layers:
    box = layer.extent()
    extents[layer.name()] = [box.xMinimum(), box.yMinimum(), box.xMaximum(), box.yMaximum()]
print(json.dumps(extents))
app.exitQgis()
