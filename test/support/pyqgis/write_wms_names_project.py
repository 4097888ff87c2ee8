"""Writes a project whose layers QGIS Server publishes under other names than theirs, as QGIS
Desktop saves one: short names (Layer Properties > QGIS Server > Short name), or layer ids when the
project's WMS settings say "Use layer ids as names" (WMSUseLayerIDs).

usage: write_wms_names_project.py OUTPUT GEOPACKAGE RASTER short-names|layer-ids|layer-ids-as-int

layer-ids writes WMSUseLayerIDs as QGIS Desktop does, a bool; layer-ids-as-int as a PyQGIS script
calling writeEntry with True does, an int (QGIS Server reads both).

Prints the name each layer is published under, as JSON by layer name.
"""
import json
import sys

from fixture_project import fixture_project

output, geopackage, raster, mode = sys.argv[1:5]
SHORT_NAMES = {"polygons": "parcels", "rgb": "ortho"}
app, project, layers = fixture_project(geopackage, raster)
published = {}
for layer in layers:
    short_name = SHORT_NAMES.get(layer.name()) if mode == "short-names" else None
    if short_name:
        # QGIS 3.38 moved the short name to the layer's server properties.
        server = layer.serverProperties()
        (server if hasattr(server, "setShortName") else layer).setShortName(short_name)
    # QGIS Desktop computes a layer's extent as it draws it; QGIS 3.40 writes only an extent computed.
    layer.extent()
    project.addMapLayer(layer)
    published[layer.name()] = layer.id() if mode.startswith("layer-ids") else short_name or layer.name()
if mode == "layer-ids":
    project.writeEntryBool("WMSUseLayerIDs", "/", True)
elif mode == "layer-ids-as-int":
    project.writeEntry("WMSUseLayerIDs", "/", True)
assert project.write(output), "QGIS could not write the project"
print(json.dumps(published))
app.exitQgis()
