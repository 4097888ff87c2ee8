"""PyQGIS as QGIS Desktop for publishing: makes a project beside its data, reads projects, draws them.

usage:
  publish_oracle.py make FOLDER GPKG TIFF [PROJECT]
                                            writes FOLDER/project.qgs (or PROJECT, a .qgs or .qgz) reading
                                            FOLDER/data/GPKG (layer points) and FOLDER/data/TIFF with relative
                                            paths, points drawn in red
  publish_oracle.py read PROJECT            prints {"layers": {name: {"valid", "features", "source"}}}
  publish_oracle.py draw PROJECT OUT.png W H XMIN YMIN XMAX YMAX
                                            draws every layer in EPSG:4326 at QGIS Server's 90.714 DPI
Run with QT_QPA_PLATFORM=offscreen.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsMapRendererSequentialJob,
    QgsMapSettings,
    QgsMarkerSymbol,
    QgsProject,
    QgsRasterLayer,
    QgsRectangle,
    QgsSingleSymbolRenderer,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QSize  # noqa: E402
from qgis.PyQt.QtGui import QColor  # noqa: E402

SERVER_DPI = 25.4 / 0.28


def make(folder, gpkg, tiff, path=None):
    project = QgsProject.instance()
    project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    project.setTitle("published from Desktop")
    raster = QgsRasterLayer(os.path.join(folder, "data", tiff), "colours", "gdal")
    points = QgsVectorLayer(os.path.join(folder, "data", gpkg) + "|layername=points", "places", "ogr")
    for layer in (raster, points):
        if not layer.isValid():
            sys.exit(f"layer {layer.name()} is not valid")
    symbol = QgsMarkerSymbol.createSimple({"name": "square", "color": "255,0,0,255", "size": "4", "outline_style": "no"})
    points.setRenderer(QgsSingleSymbolRenderer(symbol))
    project.addMapLayer(raster)
    project.addMapLayer(points)
    if not project.write(path or os.path.join(folder, "project.qgs")):
        sys.exit(f"could not write the project: {project.error()}")


def read(path):
    project = QgsProject.instance()
    if not project.read(path):
        sys.exit(f"QGIS could not read {path}: {project.error()}")
    layers = {}
    for layer in project.mapLayers().values():
        features = layer.featureCount() if isinstance(layer, QgsVectorLayer) else None
        layers[layer.name()] = {"valid": layer.isValid(), "features": features, "source": layer.source()}
    print(json.dumps({"layers": layers}))


def draw(path, out, width, height, *extent):
    project = QgsProject.instance()
    if not project.read(path):
        sys.exit(f"QGIS could not read {path}: {project.error()}")
    settings = QgsMapSettings()
    settings.setLayers([node.layer() for node in project.layerTreeRoot().findLayers()])
    settings.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    settings.setExtent(QgsRectangle(*[float(value) for value in extent]))
    settings.setOutputSize(QSize(int(width), int(height)))
    settings.setOutputDpi(SERVER_DPI)
    settings.setBackgroundColor(QColor(0, 0, 0, 0))
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    job.renderedImage().save(out, "PNG")


app = QgsApplication([], False)
app.initQgis()
command, *arguments = sys.argv[1:]
{"make": make, "read": read, "draw": draw}[command](*arguments)
app.exitQgis()
