"""Tells whether QGIS reads a layer of a provider as valid, and how many features it reads of it.

usage: layer_validity.py PROVIDER DATASOURCE
prints {"valid": bool, "features": int}
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsVectorLayer  # noqa: E402

provider, datasource = sys.argv[1:3]
app = QgsApplication([], False)
app.initQgis()
layer = QgsVectorLayer(datasource, "layer", provider)
features = sum(1 for _ in layer.getFeatures()) if layer.isValid() else 0
print(json.dumps({"valid": layer.isValid(), "features": features}))
app.exitQgis()
