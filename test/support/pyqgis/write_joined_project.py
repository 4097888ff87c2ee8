"""Writes a project whose layer `zones` joins the fields of layer `facts` by `code` (QGIS's
default prefix, `facts_`, and a second join of `facts` taking `rating` alone as `r_`), drawn by
categories of the joined `facts_owner`; the GeoPackage beside it. Prints the names of the fields
QGIS gives `zones`, as JSON.

usage: write_joined_project.py OUTPUT.qgs
"""

import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from polygon_layers import write_polygon_layer
from qgis.core import (
    QgsApplication,
    QgsCategorizedSymbolRenderer,
    QgsCoordinateReferenceSystem,
    QgsProject,
    QgsRectangle,
    QgsRendererCategory,
    QgsSymbol,
    QgsVectorLayer,
    QgsVectorLayerJoinInfo,
)
from qgis.PyQt.QtCore import QVariant

output = sys.argv[1]
geopackage = os.path.splitext(output)[0] + ".gpkg"
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))

square = QgsRectangle(0, 0, 1, 1)
write_polygon_layer(
    geopackage, "zones", [("code", QVariant.Int)], [(square, [1]), (square, [2])], project.transformContext(), True
)
write_polygon_layer(
    geopackage,
    "facts",
    [("code", QVariant.Int), ("owner", QVariant.String), ("rating", QVariant.Double)],
    [(square, [1, "ann", 0.5]), (square, [2, "bob", 0.9])],
    project.transformContext(),
    False,
)
layers = {}
for name in ("zones", "facts"):
    layers[name] = QgsVectorLayer(f"{geopackage}|layername={name}", name, "ogr")
    assert layers[name].isValid(), name
    project.addMapLayer(layers[name])

whole = QgsVectorLayerJoinInfo()
whole.setJoinLayer(layers["facts"])
whole.setJoinFieldName("code")
whole.setTargetFieldName("code")
assert layers["zones"].addJoin(whole)
rating = QgsVectorLayerJoinInfo()
rating.setJoinLayer(layers["facts"])
rating.setJoinFieldName("code")
rating.setTargetFieldName("code")
rating.setPrefix("r_")
rating.setJoinFieldNamesSubset(["rating"])
assert layers["zones"].addJoin(rating)

categories = [
    QgsRendererCategory(owner, QgsSymbol.defaultSymbol(layers["zones"].geometryType()), owner)
    for owner in ("ann", "bob")
]
layers["zones"].setRenderer(QgsCategorizedSymbolRenderer("facts_owner", categories))
assert project.write(output), "QGIS could not write the project"
print(json.dumps(layers["zones"].fields().names()))
app.exitQgis()
