"""The QGIS-facing part: a menu action, the settings dialog, progress and messages.

The packing and the upload are upload.publish_project's; this file only asks for the settings
(kept in QgsSettings), saves the project when it has changes, and shows what Steward answered.
"""

from __future__ import annotations

from typing import Any

from qgis.core import Qgis, QgsMessageLog, QgsProject, QgsSettings
from qgis.gui import QgisInterface
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import (
    QAction,
    QApplication,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QMessageBox,
    QProgressDialog,
    QWidget,
)

from .upload import PublishError, publish_project

MENU = "&Steward"
LOG_TAG = "Steward"
SETTINGS = "steward_publish"


def settings_value(key: str, default: str = "") -> str:
    return str(QgsSettings().value(f"{SETTINGS}/{key}", default))


def save_settings(values: dict[str, str]) -> None:
    settings = QgsSettings()
    for key, value in values.items():
        settings.setValue(f"{SETTINGS}/{key}", value)


class PublishDialog(QDialog):
    """The server's URL, its token, the project's name and whether to replace it."""

    def __init__(self, parent: QWidget | None, project_name: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Publish to Steward")
        self.url = QLineEdit(settings_value("url", "http://localhost:8080"))
        self.token = QLineEdit(settings_value("token"))
        self.token.setEchoMode(QLineEdit.Password)
        self.project = QLineEdit(project_name)
        self.replace = QCheckBox("Replace the project if it exists")
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QFormLayout(self)
        for label, widget in (("Server URL", self.url), ("Token", self.token), ("Project name", self.project)):
            layout.addRow(label, widget)
        layout.addRow(self.replace)
        layout.addRow(buttons)

    def values(self) -> dict[str, str]:
        return {"url": self.url.text().strip(), "token": self.token.text().strip(), "project": self.project.text()}


def layer_summary(answer: dict[str, Any]) -> str:
    """One line per layer of Steward's check: its name, status and findings."""
    lines = []
    for layer in answer.get("check", {}).get("layers", []):
        findings = "; ".join(finding.get("message", "") for finding in layer.get("findings", []))
        lines.append(f"{layer.get('name')}: {layer.get('status')}" + (f" ({findings})" if findings else ""))
    return "\n".join(lines)


class StewardPublishPlugin:
    def __init__(self, iface: QgisInterface) -> None:
        self.iface = iface
        self.action: QAction | None = None

    def initGui(self) -> None:  # noqa: N802 (the name QGIS calls)
        self.action = QAction("Publish this project to Steward…", self.iface.mainWindow())
        self.action.triggered.connect(self.run)
        self.iface.addPluginToWebMenu(MENU, self.action)

    def unload(self) -> None:
        if self.action is not None:
            self.iface.removePluginWebMenu(MENU, self.action)
            self.action = None

    def message(self, text: str, level: Qgis.MessageLevel = Qgis.Info) -> None:
        QgsMessageLog.logMessage(text, LOG_TAG, level)
        self.iface.messageBar().pushMessage("Steward", text.split("\n", maxsplit=1)[0], level=level, duration=10)

    def run(self) -> None:
        project = QgsProject.instance()
        if not project.fileName() or project.isDirty():
            self.iface.actionSaveProject().trigger()
        if not project.fileName() or project.isDirty():
            self.message("Save the project before publishing it.", Qgis.Warning)
            return
        dialog = PublishDialog(self.iface.mainWindow(), project.baseName())
        if dialog.exec() != QDialog.Accepted:
            return
        values = dialog.values()
        save_settings({"url": values["url"], "token": values["token"]})
        self.publish(project.fileName(), values, replace=dialog.replace.isChecked(), allow_broken=False)

    def publish(self, path: str, values: dict[str, str], *, replace: bool, allow_broken: bool) -> None:
        progress = QProgressDialog("Uploading the project and its data…", "", 0, 100, self.iface.mainWindow())
        progress.setCancelButton(None)
        progress.setWindowModality(Qt.WindowModal)

        def report(sent: int, total: int) -> None:
            progress.setValue(int(100 * sent / max(total, 1)))
            QApplication.processEvents()

        try:
            answer, packed = publish_project(
                path,
                values["url"],
                values["token"],
                values["project"],
                replace=replace,
                allow_broken=allow_broken,
                progress=report,
            )
        except PublishError as error:
            progress.close()
            self.refused(path, values, error, replace=replace)
            return
        progress.close()
        verb = "Published" if answer.get("created") else "Replaced"
        status = answer.get("check", {}).get("status", "")
        level = Qgis.Success if status == "ok" else Qgis.Warning
        kept = f"\nLayers not packed (not local files): {', '.join(packed.kept)}" if packed.kept else ""
        self.message(f"{verb} {values['project']} ({status}).\n{layer_summary(answer)}{kept}", level)

    def refused(self, path: str, values: dict[str, str], error: PublishError, *, replace: bool) -> None:
        """Offers to publish anyway (broken layers, 422) or to replace (409); else shows why."""
        retry = {422: "Publish anyway, with the broken layers?", 409: "Replace the project on the server?"}
        if error.status in retry:
            asked = QMessageBox.question(
                self.iface.mainWindow(), "Steward", f"{error.message}\n\n{retry[error.status]}"
            )
            if asked == QMessageBox.Yes:
                self.publish(
                    path,
                    values,
                    replace=replace or error.status == 409,
                    allow_broken=error.status == 422,
                )
                return
        self.message(f"Steward refused the project: {error}", Qgis.Critical)
