"""Styles written by QGIS itself, and QGIS's own drawing of a layer with a style.

  style_corpus.py write <sources.json> <out_dir>
      sources.json: {"points": ..., "lines": ..., "polygons": ..., "rgb": ..., "dem": ..., "classes": ...}
      (OGR/GDAL sources). Sets up a layer per renderer, saves its QML with saveNamedStyle as
      <out_dir>/<style>.qml and prints [{"style", "layer", "kind", "package"}] (layer: the key of
      its source; package: the files, relative to out_dir, the style draws with and is uploaded with).
  style_corpus.py render <jobs.json>
      jobs.json: [{"kind", "source", "qml", "crs", "extent": [xmin, ymin, xmax, ymax], "size", "dpi", "out"}]
      Draws each layer with its QML with QgsMapRendererParallelJob and writes a PNG to "out"; a job
      with "sld" draws with that SLD instead, read with loadSldStyle.
  style_corpus.py layer-level <sources.json> <out_dir>
      Writes QMLs of the points layer whose layer-level settings matter: scale-based visibility
      (hidden beyond 1:10,000), a symbology reference scale, a renderer on an expression field;
      prints [{"style", "layer", "kind", "package"}] as "write" does.
  style_corpus.py raster-sld <sources.json> <out_dir>
      Writes QMLs of raster styles whose SLD holds more than the corpus's: opacity, brightness,
      contrast, saturation, grayscale, inverted and colourized colours, scale-based visibility,
      clipping stretches, transparent classes, special labels and values; prints
      [{"style", "layer", "kind", "package"}] as "write" does.
  style_corpus.py save-sld <jobs.json>
      jobs.json: [{"kind", "source", "name", "qml", "out"}]: loads each QML into a layer named "name"
      and writes its SLD to "out" as Desktop's "Save as SLD" does (saveSldStyle).
  style_corpus.py sld <sld_file> <kind> <source>
      Reads an SLD into a layer with loadSldStyle and prints {"ok", "message", "renderer"}.
Run with QT_QPA_PLATFORM=offscreen.
"""

import json
import os
import sys

from qgis.core import (
    Qgis,
    QgsApplication,
    Qgs25DRenderer,
    QgsCategorizedSymbolRenderer,
    QgsColorRampShader,
    QgsContrastEnhancement,
    QgsRasterContourRenderer,
    QgsCoordinateReferenceSystem,
    QgsDiagramLayerSettings,
    QgsDiagramSettings,
    QgsField,
    QgsFillSymbol,
    QgsGradientColorRamp,
    QgsGraduatedSymbolRenderer,
    QgsHeatmapRenderer,
    QgsHillshadeRenderer,
    QgsHueSaturationFilter,
    QgsInvertedPolygonRenderer,
    QgsLineSymbol,
    QgsMapLayer,
    QgsMapRendererParallelJob,
    QgsMapSettings,
    QgsMarkerSymbol,
    QgsMultiBandColorRenderer,
    QgsPalettedRasterRenderer,
    QgsPalLayerSettings,
    QgsPieDiagram,
    QgsPointClusterRenderer,
    QgsPointDisplacementRenderer,
    QgsRasterLayer,
    QgsRasterMinMaxOrigin,
    QgsRasterShader,
    QgsRectangle,
    QgsRendererCategory,
    QgsRendererRange,
    QgsRuleBasedLabeling,
    QgsRuleBasedRenderer,
    QgsSingleBandGrayRenderer,
    QgsSingleBandPseudoColorRenderer,
    QgsSingleCategoryDiagramRenderer,
    QgsSingleSymbolRenderer,
    QgsFontMarkerSymbolLayer,
    QgsSvgMarkerSymbolLayer,
    QgsTextFormat,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtCore import QSize, QSizeF, QVariant
from qgis.PyQt.QtGui import QColor, QFont

CATEGORIES = QgsMapLayer.AllStyleCategories
# An SVG of the designer's own, drawn from the folder QGIS Desktop had it in.
STAR_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100" viewBox="0 0 100 100">
<polygon points="50,2 63,38 98,38 69,60 80,95 50,73 20,95 31,60 2,38 37,38" fill="#ff8c00" stroke="#402000" stroke-width="4"/>
</svg>
"""


def text_format(size, colour):
    text = QgsTextFormat()
    text.setFont(QFont("DejaVu Sans"))
    text.setSize(size)
    text.setColor(QColor(colour))
    return text


def simple_labels(field, colour):
    settings = QgsPalLayerSettings()
    settings.fieldName = field
    settings.setFormat(text_format(12, colour))
    # QGIS 3.22 has the placement on QgsPalLayerSettings only; 3.40 and later on Qgis.LabelPlacement.
    placement = getattr(Qgis, "LabelPlacement", QgsPalLayerSettings)
    settings.placement = placement.OverPoint
    return settings


def marker_style(symbol_layer):
    symbol = QgsMarkerSymbol()
    symbol.changeSymbolLayer(0, symbol_layer)
    return QgsSingleSymbolRenderer(symbol)


def vector_styles(sources, out_dir):
    def layer(key):
        made = QgsVectorLayer(sources[key], key, "ogr")
        if not made.isValid():
            raise RuntimeError("cannot open " + sources[key])
        return made

    styles = []

    def add(style, key, made, package=()):
        styles.append((style, key, made, list(package)))

    made = layer("polygons")
    made.setRenderer(QgsSingleSymbolRenderer(QgsFillSymbol.createSimple({"color": "30,144,255", "outline_width": "1"})))
    add("single-symbol", "polygons", made)

    made = layer("points")
    categories = [
        QgsRendererCategory(f"points-{i}", QgsMarkerSymbol.createSimple({"color": c, "size": "6"}), f"c{i}")
        for i, c in enumerate(("255,0,0", "0,160,0", "0,0,255"))
    ]
    made.setRenderer(QgsCategorizedSymbolRenderer("name", categories))
    add("categorized", "points", made)

    made = layer("points")
    ranges = [
        QgsRendererRange(1.0, 1.8, QgsMarkerSymbol.createSimple({"color": "255,200,0", "size": "5"}), "west"),
        QgsRendererRange(1.8, 3.0, QgsMarkerSymbol.createSimple({"color": "128,0,128", "size": "8"}), "east"),
    ]
    made.setRenderer(QgsGraduatedSymbolRenderer("$x", ranges))
    add("graduated", "points", made)

    made = layer("lines")
    root = QgsRuleBasedRenderer.Rule(None)
    wide = QgsRuleBasedRenderer.Rule(
        QgsLineSymbol.createSimple({"line_color": "200,0,0", "line_width": "2"}), 0, 0, "$length > 0"
    )
    root.appendChild(wide)
    root.appendChild(QgsRuleBasedRenderer.Rule(QgsLineSymbol.createSimple({"line_color": "0,0,0"}), 0, 0, "ELSE"))
    made.setRenderer(QgsRuleBasedRenderer(root))
    add("rule-based", "lines", made)

    made = layer("points")
    displacement = QgsPointDisplacementRenderer("name")
    displacement.setEmbeddedRenderer(
        QgsSingleSymbolRenderer(QgsMarkerSymbol.createSimple({"color": "0,128,128", "size": "5"}))
    )
    displacement.setTolerance(40)
    made.setRenderer(displacement)
    add("point-displacement", "points", made)

    made = layer("points")
    cluster = QgsPointClusterRenderer()
    cluster.setEmbeddedRenderer(
        QgsSingleSymbolRenderer(QgsMarkerSymbol.createSimple({"color": "160,82,45", "size": "5"}))
    )
    cluster.setTolerance(40)
    made.setRenderer(cluster)
    add("point-cluster", "points", made)

    made = layer("points")
    heatmap = QgsHeatmapRenderer()
    heatmap.setRadius(30)
    heatmap.setColorRamp(QgsGradientColorRamp(QColor(255, 255, 255, 0), QColor(200, 0, 0)))
    made.setRenderer(heatmap)
    add("heatmap", "points", made)

    made = layer("polygons")
    inverted = QgsInvertedPolygonRenderer(
        QgsSingleSymbolRenderer(QgsFillSymbol.createSimple({"color": "90,90,90", "outline_style": "no"}))
    )
    made.setRenderer(inverted)
    add("inverted-polygons", "polygons", made)

    made = layer("polygons")
    made.setRenderer(Qgs25DRenderer())
    add("two-and-half-d", "polygons", made)

    made = layer("points")
    made.setRenderer(QgsSingleSymbolRenderer(QgsMarkerSymbol.createSimple({"color": "0,0,0", "size": "3"})))
    made.setLabeling(QgsVectorLayerSimpleLabeling(simple_labels("name", "#c00000")))
    made.setLabelsEnabled(True)
    add("simple-labels", "points", made)

    made = layer("points")
    made.setRenderer(QgsSingleSymbolRenderer(QgsMarkerSymbol.createSimple({"color": "0,0,0", "size": "3"})))
    root = QgsRuleBasedLabeling.Rule(None)
    root.appendChild(QgsRuleBasedLabeling.Rule(simple_labels("name", "#0000c0"), 0, 0, "\"name\" = 'points-1'"))
    root.appendChild(QgsRuleBasedLabeling.Rule(simple_labels("'other'", "#00a000"), 0, 0, "ELSE"))
    made.setLabeling(QgsRuleBasedLabeling(root))
    made.setLabelsEnabled(True)
    add("rule-based-labels", "points", made)

    made = layer("polygons")
    made.setRenderer(QgsSingleSymbolRenderer(QgsFillSymbol.createSimple({"color": "240,240,240"})))
    diagram = QgsDiagramSettings()
    diagram.categoryColors = [QColor(255, 0, 0), QColor(0, 0, 255)]
    diagram.categoryAttributes = ["1", "3"]
    diagram.categoryLabels = ["one", "three"]
    diagram.size = QSizeF(20, 20)
    diagram.enabled = True
    renderer = QgsSingleCategoryDiagramRenderer()
    renderer.setDiagram(QgsPieDiagram())
    renderer.setDiagramSettings(diagram)
    made.setDiagramRenderer(renderer)
    placement = QgsDiagramLayerSettings()
    placement.setPlacement(QgsDiagramLayerSettings.OverPoint)
    made.setDiagramLayerSettings(placement)
    add("diagrams", "polygons", made)

    made = layer("points")
    made.setRenderer(marker_style(QgsSvgMarkerSymbolLayer("/usr/share/qgis/svg/gpsicons/plane.svg", 8)))
    add("svg-marker-library", "points", made)

    os.makedirs(os.path.join(out_dir, "icons"), exist_ok=True)
    with open(os.path.join(out_dir, "icons", "star.svg"), "w") as handle:
        handle.write(STAR_SVG)
    made = layer("points")
    made.setRenderer(marker_style(QgsSvgMarkerSymbolLayer(os.path.join(out_dir, "icons", "star.svg"), 8)))
    add("svg-marker-package", "points", made, ["icons/star.svg"])

    made = layer("points")
    font_marker = QgsFontMarkerSymbolLayer("DejaVu Sans", "#", 8, QColor(0, 0, 160))
    made.setRenderer(marker_style(font_marker))
    add("font-marker", "points", made)
    return styles


def raster_layer(sources, key):
    made = QgsRasterLayer(sources[key], key, "gdal")
    if not made.isValid():
        raise RuntimeError("cannot open " + sources[key])
    return made


def raster_styles(sources):
    def layer(key):
        return raster_layer(sources, key)

    styles = []
    made = layer("dem")
    gray = QgsSingleBandGrayRenderer(made.dataProvider(), 1)
    stats = made.dataProvider().bandStatistics(1)
    made.setRenderer(gray)
    made.setContrastEnhancement(QgsContrastEnhancement.StretchToMinimumMaximum, QgsRasterMinMaxOrigin.MinMax)
    styles.append(("singleband-gray", "dem", made))

    made = layer("dem")
    ramp = QgsColorRampShader(stats.minimumValue, stats.maximumValue)
    ramp.setColorRampType(QgsColorRampShader.Interpolated)
    ramp.setColorRampItemList(
        [
            QgsColorRampShader.ColorRampItem(stats.minimumValue, QColor(0, 90, 0), "low"),
            QgsColorRampShader.ColorRampItem(stats.maximumValue, QColor(250, 250, 180), "high"),
        ]
    )
    shader = QgsRasterShader()
    shader.setRasterShaderFunction(ramp)
    made.setRenderer(QgsSingleBandPseudoColorRenderer(made.dataProvider(), 1, shader))
    styles.append(("singleband-pseudocolor", "dem", made))

    made = layer("rgb")
    made.setRenderer(QgsMultiBandColorRenderer(made.dataProvider(), 3, 1, 2))
    styles.append(("multiband-color", "rgb", made))

    made = layer("classes")
    classes = [
        QgsPalettedRasterRenderer.Class(value, colour, str(value))
        for value, colour in ((0, QColor(230, 25, 75)), (1, QColor(60, 180, 75)), (2, QColor(0, 130, 200)))
    ]
    made.setRenderer(QgsPalettedRasterRenderer(made.dataProvider(), 1, classes))
    styles.append(("paletted", "classes", made))

    made = layer("dem")
    made.setRenderer(QgsHillshadeRenderer(made.dataProvider(), 1, 315, 45))
    styles.append(("hillshade", "dem", made))

    made = layer("dem")
    contours = QgsRasterContourRenderer(made.dataProvider())
    contours.setContourInterval(10)
    contours.setContourSymbol(QgsLineSymbol.createSimple({"line_color": "120,60,0", "line_width": "0.5"}))
    made.setRenderer(contours)
    styles.append(("contours", "dem", made))
    return styles


def raster_sld_styles(sources):
    def layer(key):
        return raster_layer(sources, key)

    styles = []
    made = layer("dem")
    gray = QgsSingleBandGrayRenderer(made.dataProvider(), 1)
    gray.setGradient(QgsSingleBandGrayRenderer.WhiteToBlack)
    made.setRenderer(gray)
    made.setContrastEnhancement(QgsContrastEnhancement.ClipToMinimumMaximum, QgsRasterMinMaxOrigin.MinMax)
    made.renderer().contrastEnhancement().setMinimumValue(10.123456789)
    made.renderer().setOpacity(0.5)
    made.brightnessFilter().setBrightness(10)
    made.brightnessFilter().setContrast(-20)
    made.hueSaturationFilter().setSaturation(30)
    made.hueSaturationFilter().setGrayscaleMode(QgsHueSaturationFilter.GrayscaleLuminosity)
    made.hueSaturationFilter().setInvertColors(True)
    made.setScaleBasedVisibility(True)
    made.setMinimumScale(50000)
    made.setMaximumScale(1000)
    styles.append(("gray-clipped", "dem", made))

    made = layer("dem")
    made.setRenderer(QgsSingleBandGrayRenderer(made.dataProvider(), 1))
    made.setContrastEnhancement(QgsContrastEnhancement.StretchAndClipToMinimumMaximum, QgsRasterMinMaxOrigin.MinMax)
    made.hueSaturationFilter().setColorizeOn(True)
    made.hueSaturationFilter().setColorizeColor(QColor(200, 100, 50))
    made.hueSaturationFilter().setColorizeStrength(60)
    styles.append(("gray-colourized", "dem", made))

    for interpolation, name in ((QgsColorRampShader.Discrete, "discrete"), (QgsColorRampShader.Exact, "exact")):
        made = layer("dem")
        ramp = QgsColorRampShader(0, 100)
        ramp.setColorRampType(interpolation)
        ramp.setColorRampItemList(
            [
                QgsColorRampShader.ColorRampItem(1 / 3, QColor(0, 90, 0, 100), 'a<b&"c'),
                QgsColorRampShader.ColorRampItem(50.5, QColor(250, 250, 180), "mid"),
                QgsColorRampShader.ColorRampItem(float("inf"), QColor(1, 2, 3), "above"),
            ]
        )
        shader = QgsRasterShader()
        shader.setRasterShaderFunction(ramp)
        made.setRenderer(QgsSingleBandPseudoColorRenderer(made.dataProvider(), 1, shader))
        styles.append(("pseudocolor-" + name, "dem", made))

    made = layer("rgb")
    colour = QgsMultiBandColorRenderer(made.dataProvider(), 1, 2, 3)
    setters = (colour.setRedContrastEnhancement, colour.setGreenContrastEnhancement, colour.setBlueContrastEnhancement)
    algorithms = (
        QgsContrastEnhancement.StretchToMinimumMaximum,
        QgsContrastEnhancement.ClipToMinimumMaximum,
        QgsContrastEnhancement.StretchAndClipToMinimumMaximum,
    )
    for index, (setter, algorithm) in enumerate(zip(setters, algorithms)):
        enhancement = QgsContrastEnhancement(Qgis.DataType.Byte)
        enhancement.setContrastEnhancementAlgorithm(algorithm)
        enhancement.setMinimumValue(10 + index)
        enhancement.setMaximumValue(200 - index)
        setter(enhancement)
    made.setRenderer(colour)
    styles.append(("multiband-stretched", "rgb", made))

    made = layer("classes")
    classes = [
        QgsPalettedRasterRenderer.Class(0, QColor(230, 25, 75, 128), "zero"),
        QgsPalettedRasterRenderer.Class(2, QColor(0, 130, 200), ""),
    ]
    made.setRenderer(QgsPalettedRasterRenderer(made.dataProvider(), 1, classes))
    made.renderer().setOpacity(0.25)
    styles.append(("paletted-transparent", "classes", made))

    made = layer("dem")
    hillshade = QgsHillshadeRenderer(made.dataProvider(), 1, 300, 30)
    hillshade.setZFactor(2.5)
    hillshade.setMultiDirectional(True)
    made.setRenderer(hillshade)
    styles.append(("hillshade-multidirectional", "dem", made))
    return styles


def write_styles(sources_file, out_dir, make):
    with open(sources_file) as handle:
        sources = json.load(handle)
    written = []
    for style, key, made in make(sources):
        message, ok = made.saveNamedStyle(os.path.join(out_dir, style + ".qml"), CATEGORIES)
        if not ok:
            raise RuntimeError(f"saveNamedStyle {style}: {message}")
        kind = "raster" if isinstance(made, QgsRasterLayer) else "vector"
        written.append({"style": style, "layer": key, "kind": kind, "package": []})
    return written


def layer_level_styles(sources):
    def points():
        made = QgsVectorLayer(sources["points"], "points", "ogr")
        if not made.isValid():
            raise RuntimeError("cannot open " + sources["points"])
        return made

    styles = []
    made = points()
    made.setRenderer(QgsSingleSymbolRenderer(QgsMarkerSymbol.createSimple({"color": "255,0,0", "size": "6"})))
    made.setScaleBasedVisibility(True)
    made.setMinimumScale(10000)
    made.setMaximumScale(0)
    styles.append(("hidden-far", "points", made))

    made = points()
    renderer = QgsSingleSymbolRenderer(QgsMarkerSymbol.createSimple({"color": "0,0,255", "size": "2"}))
    renderer.setReferenceScale(20000000)
    made.setRenderer(renderer)
    styles.append(("reference-scale", "points", made))

    made = points()
    made.addExpressionField('upper("name")', QgsField("loud", QVariant.String))
    colours = ("255,0,0", "0,160,0", "0,0,255")
    categories = [
        QgsRendererCategory(f"POINTS-{i}", QgsMarkerSymbol.createSimple({"color": c, "size": "6"}), f"p{i}")
        for i, c in enumerate(colours)
    ]
    made.setRenderer(QgsCategorizedSymbolRenderer("loud", categories))
    styles.append(("virtual-field", "points", made))
    return styles


def write(sources_file, out_dir):
    with open(sources_file) as handle:
        sources = json.load(handle)
    written = []
    for kind, styles in (("vector", vector_styles(sources, out_dir)), ("raster", raster_styles(sources))):
        for style, key, made, *package in styles:
            path = os.path.join(out_dir, style + ".qml")
            message, ok = made.saveNamedStyle(path, CATEGORIES)
            if not ok:
                raise RuntimeError(f"saveNamedStyle {style}: {message}")
            written.append({"style": style, "layer": key, "kind": kind, "package": package[0] if package else []})
    return written


def open_layer(kind, source, name="layer"):
    made = QgsRasterLayer(source, name, "gdal") if kind == "raster" else QgsVectorLayer(source, name, "ogr")
    if not made.isValid():
        raise RuntimeError("cannot open " + source)
    return made


def render_all(jobs_file):
    with open(jobs_file) as handle:
        return [render(job) for job in json.load(handle)]


def render(job):
    made = open_layer(job["kind"], job["source"])
    if job.get("sld"):
        message, ok = made.loadSldStyle(job["sld"])
        if not ok:
            return {"ok": False, "message": message}
    else:
        message, ok = made.loadNamedStyle(job["qml"], CATEGORIES)
        if not ok:
            raise RuntimeError("loadNamedStyle: " + message)
    settings = QgsMapSettings()
    settings.setLayers([made])
    settings.setDestinationCrs(QgsCoordinateReferenceSystem(job["crs"]))
    settings.setExtent(QgsRectangle(*job["extent"]))
    settings.setOutputSize(QSize(job["size"], job["size"]))
    settings.setOutputDpi(job["dpi"])
    settings.setBackgroundColor(QColor(0, 0, 0, 0))
    settings.setFlag(Qgis.MapSettingsFlag.Antialiasing, True)
    settings.setFlag(Qgis.MapSettingsFlag.UseAdvancedEffects, True)
    settings.setFlag(Qgis.MapSettingsFlag.DrawLabeling, True)
    renderer = QgsMapRendererParallelJob(settings)
    renderer.start()
    renderer.waitForFinished()
    if not renderer.renderedImage().save(job["out"], "PNG"):
        raise RuntimeError("cannot write " + job["out"])
    return {"ok": True, "errors": [error.message for error in renderer.errors()]}


def save_sld_all(jobs_file):
    with open(jobs_file) as handle:
        jobs = json.load(handle)
    saved = []
    for job in jobs:
        made = open_layer(job["kind"], job["source"], job["name"])
        message, ok = made.loadNamedStyle(job["qml"], CATEGORIES)
        if not ok:
            raise RuntimeError("loadNamedStyle: " + message)
        message, ok = made.saveSldStyle(job["out"])
        saved.append({"ok": bool(ok), "message": message})
    return saved


def read_sld(sld_file, kind, source):
    made = open_layer(kind, source)
    message, ok = made.loadSldStyle(sld_file)
    renderer = made.renderer().type() if made.renderer() else None
    return {"ok": bool(ok), "message": message, "renderer": renderer}


def main():
    application = QgsApplication([], False)
    application.initQgis()
    command = sys.argv[1]
    if command == "write":
        result = write(sys.argv[2], sys.argv[3])
    elif command == "render":
        result = render_all(sys.argv[2])
    elif command == "layer-level":
        result = write_styles(sys.argv[2], sys.argv[3], layer_level_styles)
    elif command == "raster-sld":
        result = write_styles(sys.argv[2], sys.argv[3], raster_sld_styles)
    elif command == "save-sld":
        result = save_sld_all(sys.argv[2])
    else:
        result = read_sld(sys.argv[2], sys.argv[3], sys.argv[4])
    print(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
