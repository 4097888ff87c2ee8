"""Writes the project of the access filter's tests: a GeoPackage beside it with two polygon layers,
`roads` (attributes kind and owner; two public features and one private) and `secret` (one
feature), both published by WMS, WFS and WFS-T, drawn red and blue without outlines.

usage: write_access_project.py OUTPUT.qgs [public]

Lon/lat squares of one degree: roads at (0,0) public, (2,0) private, (0,2) public; secret at (2,2).
With `public`, the project holds only what the tests' viewer may see: the public roads.
"""

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from polygon_layers import flat_colour, publish_by_wfs, write_polygon_layer
from qgis.core import (
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsProject,
    QgsRectangle,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QVariant

output = sys.argv[1]
public_only = sys.argv[2:] == ["public"]
geopackage = os.path.splitext(output)[0] + ".gpkg"
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))

FEATURES = {
    "roads": [((0, 0), "public", "ann"), ((2, 0), "private", "bob"), ((0, 2), "public", "cat")],
    "secret": [((2, 2), "public", "dan")],
}
if public_only:
    FEATURES = {"roads": [row for row in FEATURES["roads"] if row[1] == "public"]}
COLOURS = {"roads": "255,0,0,255", "secret": "0,0,255,255"}

FIELDS = [("kind", QVariant.String), ("owner", QVariant.String)]
for index, (name, rows) in enumerate(FEATURES.items()):
    squares = [(QgsRectangle(x, y, x + 1, y + 1), [kind, owner]) for (x, y), kind, owner in rows]
    write_polygon_layer(geopackage, name, FIELDS, squares, project.transformContext(), new_file=index == 0)
    layer = QgsVectorLayer(f"{geopackage}|layername={name}", name, "ogr")
    assert layer.isValid(), name
    flat_colour(layer, COLOURS[name])
    project.addMapLayer(layer)

publish_by_wfs(project, [layer.id() for layer in project.mapLayers().values()])
project.writeEntry("WMSExtent", "/", ["0", "0", "4", "4"])
assert project.write(output), "QGIS could not write the project"
app.exitQgis()
