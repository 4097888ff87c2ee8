"""PyQGIS as the oracle for Steward's styles.

Reads a JSON job on stdin, {"operations": [{"op": ..., ...}, ...]}, runs each operation with
PyQGIS and writes one JSON list of results on stdout. Run with QT_QPA_PLATFORM=offscreen.
"""

import json
import struct
import sys

from osgeo import gdal, ogr, osr
from qgis.core import (
    QgsApplication,
    QgsCategorizedSymbolRenderer,
    QgsColorRampShader,
    QgsContrastEnhancement,
    QgsCoordinateReferenceSystem,
    QgsGraduatedSymbolRenderer,
    QgsMapLayer,
    QgsMapRendererSequentialJob,
    QgsMapSettings,
    QgsMultiBandColorRenderer,
    QgsPointXY,
    QgsProject,
    QgsRasterLayer,
    QgsRasterMinMaxOrigin,
    QgsRasterShader,
    QgsRectangle,
    QgsRendererCategory,
    QgsRendererRange,
    QgsSimpleFillSymbolLayer,
    QgsSimpleLineSymbolLayer,
    QgsSimpleMarkerSymbolLayer,
    QgsSingleBandGrayRenderer,
    QgsSingleBandPseudoColorRenderer,
    QgsSingleSymbolRenderer,
    QgsSymbol,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QSize
from qgis.PyQt.QtGui import QColor, QImage

gdal.UseExceptions()
CATEGORIES = QgsMapLayer.StyleCategories(QgsMapLayer.Symbology | QgsMapLayer.Rendering)
SYMBOL_LAYERS = {"marker": QgsSimpleMarkerSymbolLayer, "line": QgsSimpleLineSymbolLayer, "fill": QgsSimpleFillSymbolLayer}
GEOMETRIES = {
    "point": (ogr.wkbPoint, "POINT (5 5)"),
    "line": (ogr.wkbLineString, "LINESTRING (0 5, 10 5)"),
    "polygon": (ogr.wkbPolygon, "POLYGON ((2 2, 8 2, 8 8, 2 8, 2 2))"),
}
# The "classes" layer's points: x (y is 5), kind, pop.
CLASSED_POINTS = ((2, "a", 5.0), (5, "b", 15.0), (8, "z", 25.0))
CLASS_COLOUR = {"marker": "color", "line": "line_color", "fill": "color"}
RAMP_TYPES = {
    "INTERPOLATED": QgsColorRampShader.Interpolated,
    "DISCRETE": QgsColorRampShader.Discrete,
    "EXACT": QgsColorRampShader.Exact,
}


def make_data(directory):
    """A GeoPackage with point, line and polygon layers; a 3-band Byte and a 1-band Float32 GeoTIFF."""
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    source = ogr.GetDriverByName("GPKG").CreateDataSource(directory + "/vector.gpkg")
    for name, (geometry_type, wkt) in GEOMETRIES.items():
        layer = source.CreateLayer(name, srs, geometry_type)
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetGeometry(ogr.CreateGeometryFromWkt(wkt))
        layer.CreateFeature(feature)
    classes = source.CreateLayer("classes", srs, ogr.wkbPoint)
    classes.CreateField(ogr.FieldDefn("kind", ogr.OFTString))
    classes.CreateField(ogr.FieldDefn("pop", ogr.OFTReal))
    for x, kind, pop in CLASSED_POINTS:
        feature = ogr.Feature(classes.GetLayerDefn())
        feature.SetField("kind", kind)
        feature.SetField("pop", pop)
        feature.SetGeometry(ogr.CreateGeometryFromWkt(f"POINT ({x} 5)"))
        classes.CreateFeature(feature)
    source = None
    rgb = gdal.GetDriverByName("GTiff").Create(directory + "/rgb.tif", 20, 20, 3, gdal.GDT_Byte)
    for band, value in ((1, 10), (2, 100), (3, 200)):
        rgb.GetRasterBand(band).Fill(value)
    gray = gdal.GetDriverByName("GTiff").Create(directory + "/gray.tif", 20, 20, 1, gdal.GDT_Float32)
    # Column c holds 5 * c: 0 at the left edge, 95 at the right.
    row = struct.pack("<20f", *(5.0 * c for c in range(20)))
    gray.GetRasterBand(1).WriteRaster(0, 0, 20, 20, row * 20)
    for dataset in (rgb, gray):
        dataset.SetGeoTransform((0, 0.5, 0, 10, 0, -0.5))
        dataset.SetProjection(srs.ExportToWkt())
    rgb = gray = None
    return {"ok": True}


def open_layer(spec):
    if spec["kind"] == "raster":
        layer = QgsRasterLayer(spec["source"], spec.get("name", "raster"), "gdal")
    else:
        layer = QgsVectorLayer(spec["source"], spec.get("name", "vector"), "ogr")
    if not layer.isValid():
        raise RuntimeError("cannot open " + spec["source"])
    return layer


def enhancement(ce):
    if ce is None:
        return None
    return {
        "algorithm": QgsContrastEnhancement.contrastEnhancementAlgorithmString(ce.contrastEnhancementAlgorithm()),
        "min": ce.minimumValue(),
        "max": ce.maximumValue(),
    }


def raster_properties(layer):
    renderer = layer.renderer()
    found = {
        "renderer": renderer.type(),
        "limits": QgsRasterMinMaxOrigin.limitsString(renderer.minMaxOrigin().limits()),
        "brightness": layer.brightnessFilter().brightness(),
        "contrast": layer.brightnessFilter().contrast(),
        "gamma": layer.brightnessFilter().gamma(),
        "saturation": layer.hueSaturationFilter().saturation(),
    }
    if renderer.type() == "singlebandgray":
        found["bands"] = {"gray": renderer.grayBand()}
        found["enhancements"] = {"gray": enhancement(renderer.contrastEnhancement())}
    else:
        found["bands"] = {"red": renderer.redBand(), "green": renderer.greenBand(), "blue": renderer.blueBand()}
        found["enhancements"] = {
            "red": enhancement(renderer.redContrastEnhancement()),
            "green": enhancement(renderer.greenContrastEnhancement()),
            "blue": enhancement(renderer.blueContrastEnhancement()),
        }
    return found


def vector_properties(layer):
    renderer = layer.renderer()
    symbol = renderer.symbol()
    symbol_layer = symbol.symbolLayer(0)
    return {
        "renderer": renderer.type(),
        "symbol": ["marker", "line", "fill"][symbol.type()],
        "class": symbol_layer.layerType(),
        "properties": symbol_layer.properties(),
        "opacity": layer.opacity(),
        "symbol_layers": symbol.symbolLayerCount(),
    }


def properties(layer):
    return raster_properties(layer) if isinstance(layer, QgsRasterLayer) else vector_properties(layer)


def load(operation):
    """Loads a QML into a fresh layer; says whether QGIS accepted it and what QGIS then holds."""
    layer = open_layer(operation["layer"])
    message, ok = layer.loadNamedStyle(operation["qml"])
    result = {"ok": bool(ok), "message": message}
    if ok:
        result["properties"] = properties(layer)
        if "save" in operation:
            layer.saveNamedStyle(operation["save"], CATEGORIES)
    return result


def reference_vector(operation):
    """QGIS's own QML for a single symbol made from properties, through the PyQGIS API."""
    layer = open_layer(operation["layer"])
    # changeSymbolLayer() and the renderer take ownership; building the symbol from a Python
    # list of layers makes sip free the layer twice in QGIS 3.22.
    symbol = QgsSymbol.defaultSymbol(layer.geometryType())
    symbol.changeSymbolLayer(0, SYMBOL_LAYERS[operation["symbol"]].create(operation["properties"]))
    layer.setRenderer(QgsSingleSymbolRenderer(symbol))
    layer.setOpacity(operation["opacity"])
    layer.saveNamedStyle(operation["save"], CATEGORIES)
    return {"ok": True}


def class_symbol(layer, operation, colour):
    """The symbol of one class: the shared properties in the class's colour."""
    kind = operation["symbol"]
    symbol = QgsSymbol.defaultSymbol(layer.geometryType())
    properties = {**operation["properties"], CLASS_COLOUR[kind]: colour}
    symbol.changeSymbolLayer(0, SYMBOL_LAYERS[kind].create(properties))
    return symbol


def reference_classes(operation):
    """QGIS's own QML for a categorized or graduated renderer, through the PyQGIS API."""
    layer = open_layer(operation["layer"])
    if operation["renderer"] == "categorized":
        categories = [
            QgsRendererCategory(c["value"], class_symbol(layer, operation, c["colour"]), c["label"])
            for c in operation["classes"]
        ]
        layer.setRenderer(QgsCategorizedSymbolRenderer(operation["field"], categories))
    else:
        ranges = [
            QgsRendererRange(r["lower"], r["upper"], class_symbol(layer, operation, r["colour"]), r["label"])
            for r in operation["classes"]
        ]
        layer.setRenderer(QgsGraduatedSymbolRenderer(operation["field"], ranges))
    layer.setOpacity(operation["opacity"])
    layer.saveNamedStyle(operation["save"], CATEGORIES)
    return {"ok": True}


def reference_pseudocolor(operation):
    """QGIS's own QML for a singleband pseudocolor renderer, through the PyQGIS API."""
    layer = open_layer(operation["layer"])
    ramp = QgsColorRampShader(operation["min"], operation["max"])
    ramp.setColorRampType(RAMP_TYPES[operation["interpolation"]])
    ramp.setColorRampItemList(
        [
            QgsColorRampShader.ColorRampItem(stop["value"], QColor(*stop["rgba"]), stop["label"])
            for stop in operation["stops"]
        ]
    )
    shader = QgsRasterShader()
    shader.setRasterShaderFunction(ramp)
    renderer = QgsSingleBandPseudoColorRenderer(layer.dataProvider(), operation["band"], shader)
    renderer.setClassificationMin(operation["min"])
    renderer.setClassificationMax(operation["max"])
    layer.setRenderer(renderer)
    layer.saveNamedStyle(operation["save"], CATEGORIES)
    return {"ok": True}


def contrast(layer, band, algorithm, limits_range):
    ce = QgsContrastEnhancement(layer.dataProvider().dataType(band))
    ce.setContrastEnhancementAlgorithm(QgsContrastEnhancement.contrastEnhancementAlgorithmFromString(algorithm))
    ce.setMinimumValue(limits_range["min"])
    ce.setMaximumValue(limits_range["max"])
    return ce


def reference_raster(operation):
    """QGIS's own QML for a gray or RGB renderer made through the PyQGIS API."""
    layer = open_layer(operation["layer"])
    provider = layer.dataProvider()
    bands, ranges, algorithm = operation["bands"], operation["ranges"], operation["algorithm"]
    if operation["renderer"] == "singlebandgray":
        renderer = QgsSingleBandGrayRenderer(provider, bands["gray"])
        renderer.setContrastEnhancement(contrast(layer, bands["gray"], algorithm, ranges["gray"]))
    else:
        renderer = QgsMultiBandColorRenderer(provider, bands["red"], bands["green"], bands["blue"])
        renderer.setRedContrastEnhancement(contrast(layer, bands["red"], algorithm, ranges["red"]))
        renderer.setGreenContrastEnhancement(contrast(layer, bands["green"], algorithm, ranges["green"]))
        renderer.setBlueContrastEnhancement(contrast(layer, bands["blue"], algorithm, ranges["blue"]))
    origin = renderer.minMaxOrigin()
    origin.setLimits(QgsRasterMinMaxOrigin.limitsFromString(operation["limits"]))
    renderer.setMinMaxOrigin(origin)
    layer.setRenderer(renderer)
    rendering = operation["rendering"]
    layer.brightnessFilter().setBrightness(rendering["brightness"])
    layer.brightnessFilter().setContrast(rendering["contrast"])
    layer.brightnessFilter().setGamma(rendering["gamma"])
    layer.hueSaturationFilter().setSaturation(rendering["saturation"])
    layer.saveNamedStyle(operation["save"], CATEGORIES)
    return {"ok": True}


def colour(image, x, y):
    """Unpremultiplied RGBA of a pixel of an ARGB32 image."""
    c = QColor.fromRgba(image.pixel(x, y))
    return [c.red(), c.green(), c.blue(), c.alpha()]


def sample(image, settings, points):
    image = image.convertToFormat(QImage.Format_ARGB32)
    pixels = [settings.mapToPixel().transform(QgsPointXY(x, y)) for x, y in points]
    return [colour(image, int(pixel.x()), int(pixel.y())) for pixel in pixels]


def draw(layers, extent, points):
    settings = QgsMapSettings()
    settings.setLayers(layers)
    settings.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    settings.setExtent(QgsRectangle(*extent))
    settings.setOutputSize(QSize(200, 200))
    settings.setBackgroundColor(QColor(0, 0, 0, 0))
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    return sample(job.renderedImage(), settings, points)


def render(operation):
    """Draws one layer with a QML and gives the RGBA colours at map points."""
    layer = open_layer(operation["layer"])
    message, ok = layer.loadNamedStyle(operation["qml"])
    if not ok:
        return {"ok": False, "message": message}
    return {"ok": True, "pixels": draw([layer], operation["extent"], operation["points"])}


def make_project(operation):
    """Writes a project holding the given layers, each with QGIS's default style."""
    current = QgsProject.instance()
    current.clear()
    current.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    for spec in operation["layers"]:
        current.addMapLayer(open_layer(spec))
    return {"ok": current.write(operation["path"])}


def project(operation):
    """Reads a project: each layer's styles, and the colours drawn with each requested style."""
    current = QgsProject.instance()
    current.clear()
    if not current.read(operation["path"]):
        return {"ok": False, "message": current.error()}
    layers = {layer.name(): layer for layer in current.mapLayers().values()}
    found = {
        name: {"valid": layer.isValid(), "styles": layer.styleManager().styles(), "current": layer.styleManager().currentStyle()}
        for name, layer in layers.items()
    }
    drawn = []
    for request in operation["renders"]:
        layer = layers[request["layer"]]
        manager = layer.styleManager()
        if request.get("style"):
            manager.setOverrideStyle(request["style"])
        drawn.append(draw([layer], request["extent"], request["points"]))
        if request.get("style"):
            manager.restoreOverrideStyle()
    return {"ok": True, "layers": found, "pixels": drawn}


def png(operation):
    """The RGBA colours of a PNG at pixel positions."""
    image = QImage(operation["path"]).convertToFormat(QImage.Format_ARGB32)
    return {"ok": not image.isNull(), "pixels": [colour(image, x, y) for x, y in operation["points"]]}


OPERATIONS = {
    "make_data": lambda operation: make_data(operation["dir"]),
    "load": load,
    "reference_vector": reference_vector,
    "reference_raster": reference_raster,
    "reference_classes": reference_classes,
    "reference_pseudocolor": reference_pseudocolor,
    "render": render,
    "make_project": make_project,
    "project": project,
    "png": png,
}


def main():
    job = json.load(sys.stdin)
    app = QgsApplication([], False)
    app.initQgis()
    results = [OPERATIONS[operation["op"]](operation) for operation in job["operations"]]
    json.dump(results, sys.stdout)
    QgsProject.instance().clear()
    app.exitQgis()


if __name__ == "__main__":
    main()
