"""The Desktop plugin (desktop/steward_publish) as QGIS Desktop runs it, headless.

usage:
  desktop_publish.py publish PROJECT URL TOKEN NAME
      loads the plugin as QGIS's plugin manager does (classFactory, initGui, unload) with a stand-in
      for QGIS's interface, then publishes PROJECT as NAME with its publish function and prints
      {"status", "answer", "files", "kept", "menu"} (status 0 and Steward's message when refused)
Run with QT_QPA_PLATFORM=offscreen.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "desktop"))

from qgis.core import QgsApplication  # noqa: E402
from qgis.PyQt.QtWidgets import QMainWindow  # noqa: E402


class Interface:
    """What of QGIS's interface the plugin uses to set itself up."""

    def __init__(self):
        self.window = QMainWindow()
        self.menus = []

    def mainWindow(self):  # noqa: N802
        return self.window

    def addPluginToWebMenu(self, menu, action):  # noqa: N802
        self.menus.append((menu, action.text()))

    def removePluginWebMenu(self, menu, action):  # noqa: N802
        self.menus.remove((menu, action.text()))


def publish(project, url, token, name):
    import steward_publish  # noqa: PLC0415
    from steward_publish.upload import PublishError, publish_project  # noqa: PLC0415

    iface = Interface()
    plugin = steward_publish.classFactory(iface)
    plugin.initGui()
    menu = list(iface.menus)
    plugin.unload()
    try:
        answer, packed = publish_project(project, url, token, name)
    except PublishError as error:
        print(json.dumps({"status": error.status, "message": error.message, "menu": menu}))
        return
    print(json.dumps({"status": 0, "answer": answer, "files": packed.files, "kept": packed.kept, "menu": menu}))


app = QgsApplication([], False)
app.initQgis()
command, *arguments = sys.argv[1:]
{"publish": publish}[command](*arguments)
app.exitQgis()
