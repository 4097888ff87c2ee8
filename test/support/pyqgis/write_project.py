"""Writes a QGIS project with QGIS's own writer, for tests of projects made outside Steward.

usage: write_project.py OUTPUT(.qgs|.qgz|postgresql:...) GEOPACKAGE RASTER [SVG IMAGE]

With SVG and IMAGE, the polygons are filled with them besides their simple fill, as QGIS
Desktop's style dock would add an SVG fill and a raster image fill.
"""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsBookmark,
    QgsCoordinateReferenceSystem,
    QgsProject,
    QgsRasterFillSymbolLayer,
    QgsRasterLayer,
    QgsReferencedRectangle,
    QgsRectangle,
    QgsSVGFillSymbolLayer,
    QgsVectorLayer,
)

output, geopackage, raster = sys.argv[1:4]
fills = sys.argv[4:6]
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
project.setTitle("made in QGIS")
metadata = project.metadata()
metadata.setAuthor("QGIS Desktop user")
project.setMetadata(metadata)
for name in ("polygons", "lines"):
    layer = QgsVectorLayer(f"{geopackage}|layername={name}", name, "ogr")
    assert layer.isValid(), name
    if name == "polygons" and fills:
        svg, image = fills
        symbol = layer.renderer().symbol()
        symbol.appendSymbolLayer(QgsSVGFillSymbolLayer(svg))
        symbol.appendSymbolLayer(QgsRasterFillSymbolLayer(image))
    project.addMapLayer(layer)
rgb = QgsRasterLayer(raster, "rgb", "gdal")
assert rgb.isValid()
project.addMapLayer(rgb)
project.writeEntry("StewardTest", "/marker", "kept")
extent = QgsReferencedRectangle(QgsRectangle(1, 44, 3, 46), project.crs())
bookmark = QgsBookmark()
bookmark.setName("home")
bookmark.setExtent(extent)
project.bookmarkManager().addBookmark(bookmark)
assert project.write(output), "QGIS could not write the project"
app.exitQgis()
