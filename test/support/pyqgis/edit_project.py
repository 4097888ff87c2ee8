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
The project is read from INPUT and written to OUTPUT by QGIS.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsLayerTree,
    QgsLayerTreeGroup,
    QgsMapLayer,
    QgsProject,
    QgsRasterLayer,
    QgsVectorLayer,
)
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
else:
    sys.exit(f"unknown edit {edit}")
if not project.write(output):
    sys.exit(f"QGIS could not write {output}: {project.error()}")
app.exitQgis()
