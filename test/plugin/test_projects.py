"""Unit tests of the plugin's record of cached projects, with PyQGIS's real QgsProject objects."""

from __future__ import annotations

import unittest

from qgis.core import QgsApplication, QgsProject, QgsVectorLayer
from qgis.PyQt import sip

from steward_monitor.projects import CachedProjects


def project_with_layers(*names: str) -> QgsProject:
    project = QgsProject()
    for name in names:
        project.addMapLayer(QgsVectorLayer("Point?crs=EPSG:4326", name, "memory"))
    project.addMapLayer(QgsVectorLayer("/nowhere/gone.gpkg|layername=gone", "gone", "ogr"))
    return project


class CachedProjectsTest(unittest.TestCase):
    def test_summarises_a_project_once_and_knows_it_after(self) -> None:
        cached, project = CachedProjects(), project_with_layers("roads")
        self.assertFalse(cached.knows(project))
        cached.seen("/p/a.qgs", project)
        self.assertTrue(cached.knows(project))
        summary = cached.summary("/p/a.qgs")
        self.assertEqual((summary["layers"], summary["invalid_layers"]), (2, ["gone"]))
        project.addMapLayer(QgsVectorLayer("Point?crs=EPSG:4326", "added", "memory"))
        cached.seen("/p/a.qgs", project)
        self.assertEqual(cached.summary("/p/a.qgs")["layers"], 2, "the same object is not counted again")

    def test_a_project_deleted_by_its_owner_leaves_the_record(self) -> None:
        cached, project = CachedProjects(), project_with_layers()
        cached.seen("/p/a.qgs", project)
        sip.delete(project)
        self.assertIsNone(cached.summary("/p/a.qgs"))
        self.assertEqual(cached.snapshot(), {"projects": []})

    def test_a_new_object_for_the_same_map_replaces_the_old_one_for_good(self) -> None:
        cached, old, new = CachedProjects(), project_with_layers(), project_with_layers("roads", "rivers")
        cached.seen("/p/a.qgs", old)
        cached.seen("/p/a.qgs", new)
        self.assertFalse(cached.knows(old))
        sip.delete(old)  # deleting the object it replaced keeps the new one listed
        self.assertEqual(cached.summary("/p/a.qgs")["layers"], 3)
        self.assertTrue(cached.knows(new))

    def test_records_the_current_project_under_its_file_name(self) -> None:
        cached, current = CachedProjects(), QgsProject.instance()
        current.setFileName("/p/current.qgs")
        cached.record_served("/p/current.qgs")
        self.assertTrue(cached.knows(current))
        self.assertEqual(cached.summary("/p/current.qgs")["map"], "/p/current.qgs")
        cached.record_served("current.qgs")  # another spelling of the same project: known by its object
        self.assertEqual([entry["map"] for entry in cached.snapshot()["projects"]], ["/p/current.qgs"])

    def test_forget_drops_the_project(self) -> None:
        cached, project = CachedProjects(), project_with_layers()
        cached.seen("postgresql:?project=a", project)
        cached.forget("postgresql:?project=a")
        self.assertFalse(cached.knows(project))
        self.assertEqual(cached.snapshot(), {"projects": []})


if __name__ == "__main__":
    application = QgsApplication([], False)
    application.initQgis()
    unittest.main(exit=False)
    application.exitQgis()
