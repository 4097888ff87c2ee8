"""The project the test scripts start from: QGIS started offscreen, an empty project in EPSG:4326,
and the fixtures' polygons, lines (GeoPackage) and rgb (GeoTIFF) layers, opened and valid but not
yet added to it."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsCoordinateReferenceSystem, QgsProject, QgsRasterLayer, QgsVectorLayer  # noqa: E402


def fixture_project(geopackage, raster):
    """Returns the started application, the project and its layers to be."""
    app = QgsApplication([], False)
    app.initQgis()
    project = QgsProject.instance()
    project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    layers = [QgsVectorLayer(f"{geopackage}|layername={name}", name, "ogr") for name in ("polygons", "lines")]
    layers.append(QgsRasterLayer(raster, "rgb", "gdal"))
    for layer in layers:
        assert layer.isValid(), layer.name()
    return app, project, layers
