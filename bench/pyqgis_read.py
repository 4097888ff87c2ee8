"""Times QgsProject.read of a project file, with and without resolving its layers.

usage: pyqgis_read.py PROJECT RUNS -> prints JSON {"unresolved": [ms...], "resolved": [ms...]}
"""
import json
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from qgis.core import QgsApplication, QgsProject  # noqa: E402

path, runs = sys.argv[1], int(sys.argv[2])
app = QgsApplication([], False)
app.initQgis()
timings = {"unresolved": [], "resolved": []}
for mode, flags in (("unresolved", QgsProject.ReadFlags(QgsProject.FlagDontResolveLayers)), ("resolved", QgsProject.ReadFlags())):
    for _ in range(runs):
        project = QgsProject()
        start = time.perf_counter()
        assert project.read(path, flags), path
        timings[mode].append((time.perf_counter() - start) * 1000)
        project.clear()
print(json.dumps(timings))
app.exitQgis()
