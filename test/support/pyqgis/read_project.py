"""Reads a QGIS project with QGIS's own reader and prints what it found, as JSON.

usage: read_project.py PROJECT (a path or a postgresql:?... URI)
prints {"title": ..., "author": ..., "layers": {name: {"valid": bool, "provider": str, "temporal": ...}}},
"temporal" being null or, for active temporal properties, {"mode": int, "begin": UTC ISO, "end": UTC ISO}
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsProject  # noqa: E402
from qgis.PyQt.QtCore import Qt  # noqa: E402


def temporal(layer):
    properties = layer.temporalProperties()
    if properties is None or not properties.isActive():
        return None
    fixed = properties.fixedTemporalRange()
    return {
        "mode": int(properties.mode()),
        "begin": fixed.begin().toUTC().toString(Qt.ISODate),
        "end": fixed.end().toUTC().toString(Qt.ISODate),
    }


app = QgsApplication([], False)
app.initQgis()
project = QgsProject.instance()
if not project.read(sys.argv[1]):
    sys.exit(f"QGIS could not read {sys.argv[1]}: {project.error()}")
layers = {
    layer.name(): {"valid": layer.isValid(), "provider": layer.providerType(), "temporal": temporal(layer)}
    for layer in project.mapLayers().values()
}
print(json.dumps({"title": project.title(), "author": project.metadata().author(), "layers": layers}))
app.exitQgis()
