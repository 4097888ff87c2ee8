"""Reads a project with QGIS and prints, as JSON, the structure project edits must leave as QGIS would.

usage: project_summary.py PROJECT
Layers are named rather than identified (a layer added by Steward and the same layer added by PyQGIS
get different ids); a reference QGIS cannot resolve appears as "?<id>". "messages" are what QGIS
logged while reading the project, its warnings about dangling references included.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsExpressionContextUtils,
    QgsLayerTreeGroup,
    QgsLayerTreeLayer,
    QgsLayoutItemLegend,
    QgsLayoutItemMap,
    QgsProject,
    QgsRenderContext,
    QgsReport,
)
from qgis.server import QgsServerProjectUtils  # noqa: E402

app = QgsApplication([], False)
app.initQgis()
messages = []
QgsApplication.messageLog().messageReceived.connect(
    lambda message, tag, level: messages.append(f"{tag}: {message}") if int(level) >= 1 else None
)
project = QgsProject.instance()
if not project.read(sys.argv[1]):
    sys.exit(f"QGIS could not read {sys.argv[1]}: {project.error()}")


def name_of(layer_or_id):
    if layer_or_id is None:
        return None
    if isinstance(layer_or_id, str):
        layer = project.mapLayer(layer_or_id)
        return layer.name() if layer else f"?{layer_or_id}"
    return layer_or_id.name()


def renderer_of(layer):
    if layer.type() != layer.VectorLayer:
        renderer = layer.renderer()
        return renderer.type() if renderer else None
    renderer = layer.renderer()
    if renderer is None:
        return None
    colors = [symbol.color().name() for symbol in renderer.symbols(QgsRenderContext())]
    return {"type": renderer.type(), "colors": colors}


def styles_of(layer):
    manager = layer.styleManager()
    current = manager.currentStyle()
    styles = {}
    for name in manager.styles():
        manager.setCurrentStyle(name)
        styles[name] = renderer_of(layer)
    manager.setCurrentStyle(current)
    return {"current": current, "styles": styles}


def vector_of(layer):
    joins = [
        {
            # The auxiliary layer's id changes on every read.
            "layer": "auxiliary storage" if "_auxiliarystorage_" in join.joinLayerId() else name_of(join.joinLayerId()),
            "joinField": join.joinFieldName(),
            "targetField": join.targetFieldName(),
            "prefix": join.prefix(),
        }
        for join in layer.vectorJoins()
    ]
    auxiliary = layer.auxiliaryLayer()
    auxiliary_values = None
    if auxiliary is not None:
        fields = [field.name() for field in layer.fields() if field.name().startswith("auxiliary_storage_")]
        auxiliary_values = sorted(
            f"{field}={feature[field]}" for feature in layer.getFeatures() for field in fields
        )
    return {
        "fields": [field.name() for field in layer.fields()],
        "joins": joins,
        "labels": layer.labelsEnabled(),
        "expressionFields": [
            layer.expressionField(index) for index in range(layer.fields().count()) if layer.fields().fieldOrigin(index) == 4
        ],
        "auxiliary": auxiliary_values,
    }


def elevation_of(layer):
    properties = layer.elevationProperties()
    if properties is None or not hasattr(properties, "zOffset"):
        return None
    return {"zOffset": properties.zOffset(), "zScale": properties.zScale()}


def layer_of(layer):
    entry = {
        "type": int(layer.type()),
        "provider": layer.providerType(),
        "source": layer.source(),
        "valid": layer.isValid(),
        "crs": layer.crs().authid(),
        "temporal": bool(layer.temporalProperties() and layer.temporalProperties().isActive()),
        "elevation": elevation_of(layer),
        "styles": styles_of(layer),
        "embedded": project.layerIsEmbedded(layer.id()) != "",
        "dependencies": sorted(name_of(dependency.layerId()) for dependency in layer.dependencies()),
    }
    if layer.type() == layer.VectorLayer:
        entry.update(vector_of(layer))
    return entry


def tree_of(group):
    children = []
    for child in group.children():
        if isinstance(child, QgsLayerTreeGroup):
            children.append(
                {
                    "group": child.name(),
                    "checked": child.itemVisibilityChecked(),
                    "expanded": child.isExpanded(),
                    "exclusive": child.isMutuallyExclusive(),
                    "server": [child.customProperty(key) for key in ("wmsShortName", "wmsTitle", "wmsAbstract")],
                    "embedded": child.customProperty("embedded") == 1 or child.customProperty("embedded") == "1",
                    "children": tree_of(child),
                }
            )
        elif isinstance(child, QgsLayerTreeLayer):
            children.append({"layer": child.name() if child.layer() else f"?{child.layerId()}", "checked": child.itemVisibilityChecked()})
    return children


def theme_of(name):
    record = project.mapThemeCollection().mapThemeState(name)
    return sorted(
        (
            {
                "layer": name_of(layer_record.layer()),
                "style": layer_record.currentStyle if layer_record.usingCurrentStyle else None,
                "visible": layer_record.isVisible,
            }
            for layer_record in record.layerRecords()
        ),
        key=lambda item: item["layer"] or "",
    )


def items_of(layout):
    maps, legends = [], []
    for item in layout.items():
        if isinstance(item, QgsLayoutItemMap):
            maps.append(
                {
                    "layers": [name_of(layer) for layer in item.layers()],
                    "keepLayerSet": item.keepLayerSet(),
                    "styleOverrides": sorted(name_of(layer_id) for layer_id in item.layerStyleOverrides()),
                }
            )
        elif isinstance(item, QgsLayoutItemLegend):
            legends.append({"autoUpdate": item.autoUpdateModel(), "tree": tree_of(item.model().rootGroup())})
    return {"maps": maps, "legends": legends}


def layout_of(layout):
    atlas = layout.atlas()
    return {
        "name": layout.name(),
        **items_of(layout),
        "atlas": {"enabled": atlas.enabled(), "coverage": name_of(atlas.coverageLayer())},
    }


def section_of(section):
    parts = {"header": section.header(), "footer": section.footer(), "body": getattr(section, "body", lambda: None)()}
    return {
        **{name: items_of(part) for name, part in parts.items() if part is not None},
        "sections": [section_of(child) for child in section.childSections()],
    }


def report_of(report):
    return {"name": report.name(), **section_of(report)}



def services_of():
    """What QGIS Server reads of the project's service settings (QgsServerProjectUtils), layers by name."""
    utils = QgsServerProjectUtils
    wfs = [name_of(layer_id) for layer_id in utils.wfsLayerIds(project)]

    def listed(key, path):
        return [name_of(value) if value in project.mapLayers() else value for value in project.readListEntry(key, path)[0]]

    extent = utils.wmsExtent(project)
    return {
        "capabilities": utils.owsServiceCapabilities(project),
        "title": utils.owsServiceTitle(project),
        "abstract": utils.owsServiceAbstract(project),
        "keywords": utils.owsServiceKeywords(project),
        "onlineResource": utils.owsServiceOnlineResource(project),
        "fees": utils.owsServiceFees(project),
        "accessConstraints": utils.owsServiceAccessConstraints(project),
        "contact": [
            utils.owsServiceContactPerson(project),
            utils.owsServiceContactOrganization(project),
            utils.owsServiceContactPosition(project),
            utils.owsServiceContactMail(project),
            utils.owsServiceContactPhone(project),
        ],
        "wmsCrs": utils.wmsOutputCrsList(project),
        "wmsExtent": None if extent.isNull() else [extent.xMinimum(), extent.yMinimum(), extent.xMaximum(), extent.yMaximum()],
        "wmsMaxSize": [utils.wmsMaxWidth(project), utils.wmsMaxHeight(project)],
        "wmsImageQuality": utils.wmsImageQuality(project),
        "featureInfo": [
            utils.wmsFeatureInfoAddWktGeometry(project),
            utils.wmsFeatureInfoSegmentizeWktGeometry(project),
            utils.wmsFeatureInfoPrecision(project),
            utils.wmsFeatureInfoUseAttributeFormSettings(project),
        ],
        "wmsUseLayerIds": utils.wmsUseLayerIds(project),
        "wfs": wfs,
        "wfsPrecision": {name_of(layer_id): utils.wfsLayerPrecision(project, layer_id) for layer_id in utils.wfsLayerIds(project)},
        "wfst": [
            [name_of(layer_id) for layer_id in utils.wfstInsertLayerIds(project)],
            [name_of(layer_id) for layer_id in utils.wfstUpdateLayerIds(project)],
            [name_of(layer_id) for layer_id in utils.wfstDeleteLayerIds(project)],
        ],
        "wcs": [name_of(layer_id) for layer_id in utils.wcsLayerIds(project)],
        "wmts": {
            key: {
                "project": project.readBoolEntry(key, "Project")[0],
                "groups": listed(key, "Group"),
                "layers": listed(key, "Layer"),
            }
            for key in ("WMTSLayers", "WMTSPngLayers", "WMTSJpegLayers")
        },
        "wmtsGrids": grids_of(),
    }


def grids_of():
    """The WMTS grids as QGIS Server reads them: a config per listed CRS, its numbers as numbers."""
    listed, defined = project.readListEntry("WMTSGrids", "CRS")
    configs = [config.split(",") for config in project.readListEntry("WMTSGrids", "Config")[0]]
    grids = [[crs, *map(float, values[:3]), int(values[3])] for crs, *values in configs if crs in listed]
    return grids if defined else None


snapping = project.snappingConfig()
root = project.layerTreeRoot()
summary = {
    "title": project.title(),
    "author": project.metadata().author(),
    "metadataTitle": project.metadata().title(),
    "abstract": project.metadata().abstract(),
    "wmsTitle": project.readEntry("WMSServiceTitle", "/")[0],
    "wmsAbstract": project.readEntry("WMSServiceAbstract", "/")[0],
    "crs": project.crs().authid(),
    "terrainOffset": (
        project.elevationProperties().terrainProvider().offset() if hasattr(project, "elevationProperties") else None
    ),
    "variables": QgsExpressionContextUtils.projectScope(project).variable("region"),
    "autoTransaction": project.autoTransaction(),
    "evaluateDefaultValues": project.evaluateDefaultValues(),
    "layers": {layer.name(): layer_of(layer) for layer in project.mapLayers().values()},
    "tree": tree_of(root),
    "customOrder": {
        "enabled": root.hasCustomLayerOrder(),
        "layers": [name_of(layer) for layer in root.customLayerOrder()],
    },
    "layerOrder": [name_of(layer) for layer in root.layerOrder()],
    "relations": sorted(
        (
            {
                "id": relation.id(),
                "name": relation.name(),
                "referencing": name_of(relation.referencingLayerId()),
                "referenced": name_of(relation.referencedLayerId()),
                "fields": sorted(relation.fieldPairs().items()),
                "valid": relation.isValid(),
            }
            for relation in project.relationManager().relations().values()
        ),
        key=lambda relation: relation["id"],
    ),
    "themes": {name: theme_of(name) for name in project.mapThemeCollection().mapThemes()},
    "layouts": [layout_of(layout) for layout in project.layoutManager().printLayouts()],
    "reports": [report_of(layout) for layout in project.layoutManager().layouts() if isinstance(layout, QgsReport)],
    "snapping": {
        "enabled": snapping.enabled(),
        "mode": int(snapping.mode()),
        "individual": sorted(name_of(layer) for layer in snapping.individualLayerSettings().keys()),
    },
    "wfsLayers": [name_of(layer_id) for layer_id in project.readListEntry("WFSLayers", "/")[0]],
    "identifyDisabled": [name_of(layer_id) for layer_id in project.readListEntry("Identify", "/disabledLayers")[0]],
    "services": services_of(),
    "messages": sorted(set(messages)),
}
print(json.dumps(summary, sort_keys=True))
app.exitQgis()
