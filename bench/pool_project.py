"""Writes the pool benchmark's project: the photo raster under the parcels.

usage: pool_project.py OUTPUT.qgs PHOTO.tif PARCELS.gpkg

Reprojecting and resampling the photo and drawing 4900 polygons keep one core busy for hundreds of
milliseconds a map, so the time a request spends outside QGIS Server's rendering is small.
"""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsProject,
    QgsRasterLayer,
    QgsVectorLayer,
)

output, photo, parcels = sys.argv[1:4]
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
raster = QgsRasterLayer(photo, "photo", "gdal")
assert raster.isValid(), "the photo did not open"
project.addMapLayer(raster)
vector = QgsVectorLayer(f"{parcels}|layername=parcels", "parcels", "ogr")
assert vector.isValid(), "the parcels did not open"
vector.setOpacity(0.6)
project.addMapLayer(vector)
assert project.write(output), "the project could not be written"
app.exitQgis()
