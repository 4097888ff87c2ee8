"""Writes a project as a QGIS Desktop user with web layers leaves it, with QGIS's own writer, and
prints what QGIS reads of it again, as JSON.

usage: write_web_corpus_project.py OUTPUT GEOPACKAGE CSV TILE_URL WMS_URL
layers: an XYZ basemap, a WMS layer, a memory layer, a virtual layer over the GeoPackage's
polygons, a delimited-text layer of CSV points and the polygons themselves; the project's CRS is
EPSG:3857. prints {"crs": authid, "tree": [names in tree order],
"layers": {name: {"valid": bool, "provider": str, "crs": authid}}} as QGIS reads the written file
"""

import json
import os
import sys
from pathlib import Path
from urllib.parse import quote

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsCoordinateReferenceSystem, QgsProject, QgsRasterLayer, QgsVectorLayer

output, geopackage, csv, tiles, wms = sys.argv[1:6]
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
project.setTitle("Web corpus")
# QGIS saves an in-memory layer's definition, never its features.
sketch = QgsVectorLayer("Point?crs=EPSG:4326&field=name:string(20)", "sketch", "memory")
csv_uri = f"{Path(csv).as_uri()}?type=csv&xField=x&yField=y&crs=EPSG:4326&spatialIndex=no&subsetIndex=no&watchFile=no"
virtual_uri = f"?layer=ogr:{quote(geopackage)}%7Clayername%3Dpolygons:parcels:UTF-8&query=SELECT%20*%20FROM%20parcels"
layers = [
    QgsRasterLayer(f"type=xyz&url={quote(tiles, safe=':/')}&zmax=4&zmin=0", "basemap", "wms"),
    QgsRasterLayer(f"crs=EPSG:4326&format=image/png&layers=world&styles&url={wms}", "world", "wms"),
    sketch,
    QgsVectorLayer(virtual_uri, "parcels_sql", "virtual"),
    QgsVectorLayer(csv_uri, "wells", "delimitedtext"),
    QgsVectorLayer(f"{geopackage}|layername=polygons", "polygons", "ogr"),
]
for layer in layers:
    project.addMapLayer(layer)
if not project.write(output):
    sys.exit(f"QGIS could not write {output}: {project.error()}")
written = {layer.name(): layer.isValid() for layer in layers}
if not all(written.values()):
    sys.exit(f"QGIS made layers that are not valid: {written}")
project.clear()
if not project.read(output):
    sys.exit(f"QGIS could not read {output}: {project.error()}")
read = {
    layer.name(): {"valid": layer.isValid(), "provider": layer.providerType(), "crs": layer.crs().authid()}
    for layer in project.mapLayers().values()
}
tree = [node.name() for node in project.layerTreeRoot().findLayers()]
print(json.dumps({"crs": project.crs().authid(), "tree": tree, "layers": read}))
app.exitQgis()
