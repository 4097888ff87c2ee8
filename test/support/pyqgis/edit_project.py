"""Makes one of Steward's project edits through QgsProject, as the reference for the edits oracle.

usage: edit_project.py INPUT OUTPUT EDIT ARGS...
  add-layer NAME vector|raster DATASOURCE   a layer at the bottom of the layer tree (Steward's place)
  remove-layer NAME                         QgsProject.removeMapLayer
  put-style LAYER STYLE QML current|other   adds (or replaces) STYLE in LAYER's style manager from a
                                            .qml file, making it current or not
  make-current LAYER STYLE                  QgsMapLayerStyleManager.setCurrentStyle
  set-metadata TITLE ABSTRACT AUTHOR WMS_TITLE WMS_ABSTRACT
                                            QgsProject.setTitle, setMetadata and the WMS service
                                            entries, as the project properties dialog sets them
  set-tree JSON                             rebuilds the layer tree as Steward's PUT .../tree body
                                            describes it, moving the layers' nodes as Desktop's drag
                                            and drop does (and the custom order with an "order")
  set-datasource LAYER DATASOURCE           QgsMapLayer.setDataSource, as Desktop's "Change Data
                                            Source" does (same provider)
  set-services JSON                         the service settings of Steward's PATCH .../services
                                            body, as QGIS Desktop's Project Properties > QGIS
                                            Server writes them (QgsProjectProperties::apply)
The project is read from INPUT and written to OUTPUT by QGIS.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsDataProvider,
    QgsLayerTree,
    QgsLayerTreeGroup,
    QgsMapLayer,
    QgsProject,
    QgsRasterLayer,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QLocale  # noqa: E402
from qgis.PyQt.QtXml import QDomDocument  # noqa: E402

source, output, edit, *arguments = sys.argv[1:]
app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
if not project.read(source):
    sys.exit(f"QGIS could not read {source}: {project.error()}")


def layer_named(name):
    layers = project.mapLayersByName(name)
    if len(layers) != 1:
        sys.exit(f"the project has {len(layers)} layers named {name}")
    return layers[0]


SERVER_PROPERTIES = {"title": "wmsTitle", "short_name": "wmsShortName", "abstract": "wmsAbstract"}


def set_tree(wanted):
    root = project.layerTreeRoot()
    groups, embedded = {}, {}

    def index(group):
        for child in group.children():
            if not QgsLayerTree.isGroup(child):
                continue
            if child.customProperty("embedded") in (1, "1"):
                embedded[child.name()] = child
            else:
                groups.setdefault(child.name(), []).append(child)
                index(child)

    def build(parent, nodes):
        for node in nodes:
            visible = node.get("visible", True)
            if node["type"] == "layer":
                clone = root.findLayer(layer_named(node["name"]).id()).clone()
            elif node.get("embedded"):
                clone = embedded[node["name"]].clone()
            else:
                clone = QgsLayerTreeGroup(node["name"], visible)
                source = groups.get(node["name"], [None]).pop(0) if groups.get(node["name"]) else None
                for key in source.customProperties() if source else []:
                    clone.setCustomProperty(key, source.customProperty(key))
                for field, key in SERVER_PROPERTIES.items():
                    if node.get(field):
                        clone.setCustomProperty(key, node[field])
                    elif field in node:
                        clone.removeCustomProperty(key)
                clone.setExpanded(node.get("expanded", True))
            clone.setItemVisibilityChecked(visible)
            parent.addChildNode(clone)
            if node["type"] == "group" and not node.get("embedded"):
                build(clone, node.get("children", []))
                if node.get("mutually_exclusive"):
                    shown = [child.get("visible", True) for child in node.get("children", [])]
                    clone.setIsMutuallyExclusive(True, shown.index(True) if True in shown else -1)

    index(root)
    old = list(root.children())
    build(root, wanted["children"])
    for child in old:
        root.removeChildNode(child)
    if wanted.get("order"):
        root.setCustomLayerOrder([layer_named(name) for name in wanted["order"]])
    root.setHasCustomLayerOrder(bool(wanted.get("order")))


SERVICE_TEXTS = {
    "title": "WMSServiceTitle",
    "abstract": "WMSServiceAbstract",
    "online_resource": "WMSOnlineResource",
    "fees": "WMSFees",
    "access_constraints": "WMSAccessConstraints",
}
CONTACT = {
    "person": "WMSContactPerson",
    "organization": "WMSContactOrganization",
    "position": "WMSContactPosition",
    "mail": "WMSContactMail",
    "phone": "WMSContactPhone",
}
FEATURE_INFO_FLAGS = {
    "geometry": "WMSAddWktGeometry",
    "segmentize": "WMSSegmentizeFeatureInfoGeometry",
    "use_form_settings": "WMSFeatureInfoUseAttributeFormSettings",
}


def ids(names):
    return [layer_named(name).id() for name in names]


def set_wms(wms):
    # As QgsProjectProperties::apply writes the QGIS Server tab's WMS settings.
    if "crs" in wms:
        project.removeEntry("WMSEpsgList", "/")
        if wms["crs"]:
            project.writeEntry("WMSCrsList", "/", wms["crs"])
        else:
            project.removeEntry("WMSCrsList", "/")
    if "extent" in wms:
        if wms["extent"] is None:
            project.removeEntry("WMSExtent", "/")
        else:
            project.writeEntry("WMSExtent", "/", [str(value) for value in wms["extent"]])
    for field, key in (("max_width", "WMSMaxWidth"), ("max_height", "WMSMaxHeight"), ("image_quality", "WMSImageQuality")):
        if field in wms:
            if wms[field] is None:
                project.removeEntry(key, "/")
            else:
                project.writeEntry(key, "/", int(wms[field]))
    info = wms.get("feature_info", {})
    for field, key in FEATURE_INFO_FLAGS.items():
        if field in info:
            project.writeEntryBool(key, "/", info[field])
    if "precision" in info:
        project.writeEntry("WMSPrecision", "/", str(info["precision"]))
    if "use_layer_ids" in wms:
        project.writeEntryBool("WMSUseLayerIDs", "/", wms["use_layer_ids"])


def set_wfs(wfs):
    layers = wfs.get("layers", [])
    project.writeEntry("WFSLayers", "/", ids(layers))
    for name, precision in wfs.get("precision", {}).items():
        project.writeEntry("WFSLayersPrecision", "/" + layer_named(name).id(), int(precision))
    for operation, key in (("insert", "Insert"), ("update", "Update"), ("delete", "Delete")):
        project.writeEntry("WFSTLayers", key, ids(name for name in wfs.get(operation, []) if name in layers))


def set_wmts(wmts):
    publish = wmts.get("project", False)
    groups = wmts.get("groups", [])
    layers = wmts.get("layers", [])
    formats = wmts.get("formats", {})

    def has(name, format):
        return format in formats.get(name, ["image/png", "image/jpeg"])

    project.writeEntryBool("WMTSLayers", "Project", publish)
    project.writeEntry("WMTSLayers", "Group", groups)
    project.writeEntry("WMTSLayers", "Layer", ids(layers))
    for format, key in (("image/png", "WMTSPngLayers"), ("image/jpeg", "WMTSJpegLayers")):
        project.writeEntryBool(key, "Project", publish and has("", format))
        project.writeEntry(key, "Group", [name for name in groups if has(name, format)])
        project.writeEntry(key, "Layer", ids(name for name in layers if has(name, format)))
    grids = wmts.get("grids", [])
    # Desktop's grid table: a "crs,top,left,scale denominator,last level" entry per grid checked, its
    # numbers as QVariant::toString writes them (8000000.0 as "8e+06").
    number = lambda value: QLocale.c().toString(float(value), "g", QLocale.FloatingPointShortest)  # noqa: E731
    config = [
        f"{grid['crs']},{number(grid['top'])},{number(grid['left'])},{number(grid['scale_denominator'])},{grid['last_level']}"
        for grid in grids
    ]
    project.writeEntry("WMTSGrids", "CRS", [grid["crs"] for grid in grids])
    project.writeEntry("WMTSGrids", "Config", config)


def set_services(settings):
    for field, key in SERVICE_TEXTS.items():
        if field in settings:
            project.writeEntry(key, "/", settings[field])
    if "keywords" in settings:
        project.writeEntry("WMSKeywordList", "/", settings["keywords"])
    if "advertised" in settings:
        project.writeEntryBool("WMSServiceCapabilities", "/", settings["advertised"])
    for field, key in CONTACT.items():
        if field in settings.get("contact", {}):
            project.writeEntry(key, "/", settings["contact"][field])
    set_wms(settings.get("wms", {}))
    if "wfs" in settings:
        set_wfs(settings["wfs"])
    if "wcs" in settings:
        project.writeEntry("WCSLayers", "/", ids(settings["wcs"].get("layers", [])))
    if "wmts" in settings:
        set_wmts(settings["wmts"])


if edit == "add-layer":
    name, kind, datasource = arguments
    layer = QgsVectorLayer(datasource, name, "ogr") if kind == "vector" else QgsRasterLayer(datasource, name, "gdal")
    assert layer.isValid(), datasource
    project.addMapLayer(layer, False)
    project.layerTreeRoot().addLayer(layer)
elif edit == "remove-layer":
    project.removeMapLayer(layer_named(arguments[0]).id())
elif edit == "put-style":
    name, style, qml, current = arguments
    layer = layer_named(name)
    manager = layer.styleManager()
    previous = manager.currentStyle()
    if style not in manager.styles():
        manager.addStyleFromLayer(style)
    manager.setCurrentStyle(style)
    # The categories the file declares, as QGIS Desktop's "Load Style" offers them: a Symbology and
    # Rendering style leaves the labels alone.
    with open(qml, encoding="utf8") as file:
        declared = QDomDocument()
        declared.setContent(file.read())
    categories = QgsMapLayer.StyleCategories()
    for category in declared.documentElement().attribute("styleCategories").split("|"):
        categories |= getattr(QgsMapLayer, category)
    message, loaded = layer.loadNamedStyle(qml, categories)
    assert loaded, message
    if current != "current" and previous != style:
        # Switching away stores the layer's state, the loaded style, under `style`.
        manager.setCurrentStyle(previous)
elif edit == "make-current":
    name, style = arguments
    assert layer_named(name).styleManager().setCurrentStyle(style), style
elif edit == "set-metadata":
    title, abstract, author, wms_title, wms_abstract = arguments
    project.setTitle(title)
    metadata = project.metadata()
    metadata.setAbstract(abstract)
    metadata.setAuthor(author)
    project.setMetadata(metadata)
    project.writeEntry("WMSServiceTitle", "/", wms_title)
    project.writeEntry("WMSServiceAbstract", "/", wms_abstract)
elif edit == "set-tree":
    set_tree(json.loads(arguments[0]))
elif edit == "set-datasource":
    name, datasource = arguments
    layer = layer_named(name)
    layer.setDataSource(datasource, layer.name(), layer.providerType(), QgsDataProvider.ProviderOptions())
    assert layer.isValid(), datasource
elif edit == "set-services":
    set_services(json.loads(arguments[0]))
else:
    sys.exit(f"unknown edit {edit}")
if not project.write(output):
    sys.exit(f"QGIS could not write {output}: {project.error()}")
app.exitQgis()
