"""Writes the projects of the access property test (test/ows-access-properties.test.ts) from a JSON
spec: a GeoPackage of polygon layers and a small raster (an ASCII grid), then projects over them. The first
project holds every layer whole; the others, each a role's reference, only some layers, each with
an OGR subset string (which features it keeps).

usage: write_access_properties_projects.py SPEC.json

    {"gpkg": path, "raster_path": path.asc, "raster": name,
     "layers": [{"name", "colour": "r,g,b,a", "fields": [[name, "string" | "int"], ...],
                 "features": [{"x", "y", "values": [...]}]}],
     "projects": [{"output": path.qgs, "layers": {name: subset or ""}, "raster": bool}]}

Every project publishes its vector layers by WMS, WFS, WFS-T and WMTS, its raster by WMS, WCS and
WMTS, and has a layout "sheet" (40 mm square, one map of every layer) for GetPrint.
"""

import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from polygon_layers import flat_colour, publish_by_wfs, write_polygon_layer
from qgis.core import (
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsLayoutItemMap,
    QgsLayoutPoint,
    QgsLayoutSize,
    QgsPrintLayout,
    QgsProject,
    QgsRasterLayer,
    QgsRectangle,
    QgsUnitTypes,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QVariant

with open(sys.argv[1], encoding="utf-8") as file:
    spec = json.load(file)
app = QgsApplication([], False)
app.initQgis()
TYPES = {"string": QVariant.String, "int": QVariant.Int}
EXTENT = QgsRectangle(0, 0, 4, 4)


def write_geopackage():
    context = QgsProject.instance().transformContext()
    for index, layer in enumerate(spec["layers"]):
        fields = [(name, TYPES[kind]) for name, kind in layer["fields"]]
        rows = [
            (QgsRectangle(row["x"] + 0.1, row["y"] + 0.1, row["x"] + 0.9, row["y"] + 0.9), row["values"])
            for row in layer["features"]
        ]
        write_polygon_layer(spec["gpkg"], layer["name"], fields, rows, context, new_file=index == 0)


def write_raster():
    """A 4 by 4 pixel raster over the extent, a value a pixel, as an ASCII grid."""
    values = [" ".join(str(10 + 15 * (4 * row + column)) for column in range(4)) for row in range(4)]
    header = ["ncols 4", "nrows 4", "xllcorner 0", "yllcorner 0", "cellsize 1"]
    with open(spec["raster_path"], "w", encoding="ascii") as file:
        file.write("\n".join(header + values) + "\n")


def add_layout(project, layers):
    layout = QgsPrintLayout(project)
    layout.initializeDefaults()
    layout.setName("sheet")
    layout.pageCollection().page(0).setPageSize(QgsLayoutSize(40, 40, QgsUnitTypes.LayoutMillimeters))
    frame = QgsLayoutItemMap(layout)
    frame.attemptMove(QgsLayoutPoint(0, 0))
    frame.attemptResize(QgsLayoutSize(40, 40))
    frame.setExtent(EXTENT)
    frame.setLayers(layers)
    frame.setFrameEnabled(False)
    layout.addLayoutItem(frame)
    project.layoutManager().addLayout(layout)


def write_project(wanted):
    project = QgsProject.instance()
    project.clear()
    project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    vectors = []
    for layer in spec["layers"]:
        name = layer["name"]
        if name not in wanted["layers"]:
            continue
        source = QgsVectorLayer(f"{spec['gpkg']}|layername={name}", name, "ogr")
        assert source.isValid(), name
        if wanted["layers"][name]:
            assert source.setSubsetString(wanted["layers"][name]), wanted["layers"][name]
        flat_colour(source, layer["colour"])
        project.addMapLayer(source)
        vectors.append(source)
    rasters = []
    if wanted["raster"]:
        raster = QgsRasterLayer(spec["raster_path"], spec["raster"], "gdal")
        assert raster.isValid(), spec["raster_path"]
        raster.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
        project.addMapLayer(raster)
        rasters.append(raster)
    vector_ids = [layer.id() for layer in vectors]
    every_id = vector_ids + [layer.id() for layer in rasters]
    publish_by_wfs(project, vector_ids)
    project.writeEntry("WCSLayers", "/", [layer.id() for layer in rasters])
    project.writeEntryBool("WMTSLayers", "Project", False)
    project.writeEntry("WMTSLayers", "Layer", every_id)
    project.writeEntry("WMTSPngLayers", "Layer", every_id)
    project.writeEntry("WMSExtent", "/", ["0", "0", "4", "4"])
    add_layout(project, vectors + rasters)
    assert project.write(wanted["output"]), wanted["output"]


write_geopackage()
write_raster()
for each in spec["projects"]:
    write_project(each)
app.exitQgis()
