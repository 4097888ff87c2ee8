"""Unit tests of the plugin's reading of Steward's rules (steward_monitor/access.py): what a
STEWARD_ACCESS value grants, and that anything unreadable or meant for another project opens nothing;
and of the shorter filters it hands QGIS Server (access_expression.py, with QGIS's parser)."""

from __future__ import annotations

import base64
import json
import os
import tempfile
import unittest
import zlib

from qgis.core import (
    QgsApplication,
    QgsCoordinateTransformContext,
    QgsExpression,
    QgsExpressionContext,
    QgsFeature,
    QgsFeatureRequest,
    QgsField,
    QgsFields,
    QgsGeometry,
    QgsPointXY,
    QgsVectorFileWriter,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QVariant

from steward_monitor.access import REFUSE_ALL, RequestRules, parse
from steward_monitor.access_expression import shorter_filter
from steward_monitor.access_schema import without_hidden

RULES = {
    "map": "/p/town/town.qgs",
    "key": "viewer:abc",
    "write": False,
    "layers": {"secret": {"read": False}, "roads": {"hidden": ["owner"], "filter": "\"kind\" = 'public'"}},
}


def encoded(data: object) -> str:
    return base64.urlsafe_b64encode(zlib.compress(json.dumps(data).encode())).decode().rstrip("=")


class RulesTest(unittest.TestCase):
    def test_reads_layers_attributes_filters_and_edits(self) -> None:
        rules = parse(encoded(RULES))
        assert rules is not None
        self.assertFalse(rules.readable("secret"))
        self.assertTrue(rules.readable("roads"))
        self.assertTrue(rules.readable("parks"), "a layer no rule names is served whole")
        self.assertEqual(rules.hidden, {"roads": {"owner"}})
        self.assertEqual(rules.filters, {"roads": "\"kind\" = 'public'"})
        self.assertFalse(rules.write)
        self.assertEqual(rules.key, "viewer:abc")

    def test_no_value_serves_everything_and_a_damaged_one_nothing(self) -> None:
        self.assertIsNone(parse(""))
        undeflated = base64.urlsafe_b64encode(json.dumps(RULES).encode()).decode()
        for damaged in ("%%%", encoded([1, 2]), "bm90IGpzb24", undeflated):
            rules = parse(damaged)
            self.assertIs(rules, REFUSE_ALL, damaged)
            self.assertFalse(REFUSE_ALL.readable("roads"))

    def test_rules_for_another_project_refuse_every_layer(self) -> None:
        request = RequestRules()
        value = encoded(RULES)
        self.assertIs(request.of(value, "/p/other/other.qgs"), REFUSE_ALL)
        rules = request.of(value, "/p/town/town.qgs")
        self.assertIsNotNone(rules)
        self.assertIsNot(rules, REFUSE_ALL)
        self.assertIs(request.of(value, "/p/town/town.qgs"), rules, "parsed once per value")
        others = [encoded({**RULES, "key": str(index)}) for index in range(RequestRules.KEPT - 1)]
        for other in others:
            request.of(other, "/p/town/town.qgs")
        self.assertIs(request.of(value, "/p/town/town.qgs"), rules, "kept while others are asked about")
        request.of(encoded({**RULES, "key": "one more"}), "/p/town/town.qgs")
        self.assertIsNot(request.of(value, "/p/town/town.qgs"), rules, "forgotten past KEPT others")
        self.assertIsNone(request.of("", "/p/town/town.qgs"))


class ShorterFilterTest(unittest.TestCase):
    def test_writes_each_or_term_once_and_merges_equalities_to_strings(self) -> None:
        self.assertEqual(
            shorter_filter(
                "(\"owner\" <> 'x' OR \"owner\" = 'ann') OR (\"owner\" <> 'y' OR \"owner\" = 'ann')"
                ' OR (\'o\'\'k\' = "owner") OR ("team" = \'a\' AND "n" > 2) OR ("team" = \'a\' AND "n" > 2)'
            ),
            "((\"owner\" <> 'x') OR (\"owner\" <> 'y')) OR ((\"owner\" IN ('ann', 'o''k')) OR (team = 'a' AND n > 2))",
        )

    def test_keeps_two_inequalities_to_strings_of_a_column_no_value_equals_both(self) -> None:
        roles = " OR ".join(f"(\"owner\" <> 'owner_{index}' OR \"owner\" = 'ann')" for index in range(100))
        self.assertEqual(
            shorter_filter(f"{roles} OR (\"kind\" <> 'x')", frozenset({"owner", "kind"})),
            "((\"owner\" <> 'owner_0') OR (\"owner\" <> 'owner_1')) OR ((\"owner\" = 'ann') OR (\"kind\" <> 'x'))",
        )
        # Only a text column's: QGIS 3.44 compares a boolean to a string by its truth.
        self.assertEqual(shorter_filter(roles, frozenset({"kind"})).count("<>"), 100)
        # Numbers and intervals QGIS compares as such, and strings a collation may take for the
        # same (case, accents, width, spaces, punctuation) are not two a value cannot equal both of.
        unmerged = "\"a\" <> '1' OR \"a\" <> '1.0' OR \"a\" <> '1 day' OR \"a\" <> 'Ann' OR \"a\" <> 'ann '"
        self.assertEqual(shorter_filter(unmerged, frozenset({"a"})).count("<>"), 5)
        self.assertEqual(
            shorter_filter(
                "\"a\" <> 'ÀNN' OR \"a\" <> 'a-nn' OR \"a\" <> 'inf' OR \"a\" <> 'bob' OR \"a\" <> 'cat'",
                frozenset({"a"}),
            ),
            "(\"a\" <> 'ÀNN') OR (\"a\" <> 'bob')",
        )

    def test_a_shorter_filter_selects_what_its_filter_selects(self) -> None:
        written = (
            "\"c\" <> 'a_0' OR \"c\" <> 'A_0' OR \"c\" <> '1' OR \"c\" <> '2 days' OR \"c\" <> 'a_1'"
            ' OR "c" <> \'a_2\' OR "c" = \'z\' OR "c" = \'y\' OR "d" > 2'
        )
        shorter = shorter_filter(written, frozenset({"c"}))
        self.assertEqual(shorter.count("<>"), 2)
        # What a text column holds.
        values = [None, "a_0", "A_0", "a_1", "a_2", "1", "1.0", "2 days", "z", "", "true", "0", " a_0"]
        fields = QgsFields()
        fields.append(QgsField("c", QVariant.String))
        fields.append(QgsField("d", QVariant.Int))
        for value in values:
            for d in (None, 1, 3):
                feature = QgsFeature(fields)
                feature.setAttributes([value, d])
                context = QgsExpressionContext()
                context.setFeature(feature)
                context.setFields(fields)
                self.assertEqual(
                    bool(QgsExpression(shorter).evaluate(context)),
                    bool(QgsExpression(written).evaluate(context)),
                    (value, d),
                )

    def test_leaves_a_filter_with_nothing_to_merge_as_written(self) -> None:
        unmerged = ("\"kind\" = 'public'", '("a" = 1) OR ("a" = 2)', "(\"a\" = 'x') OR (\"b\" = 'x')")
        for written in (*unmerged, "bad (("):
            self.assertEqual(shorter_filter(written), written)

    def test_a_geopackage_layer_serves_what_a_filter_of_many_terms_selects(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            layer = numbered_geopackage(os.path.join(folder, "numbered.gpkg"), 300)
            # Numbers are not merged: 150 terms, which SQLite refuses nested one in the other.
            numbers = " OR ".join(f'("n" = {number})' for number in range(0, 300, 2))
            owners = " OR ".join(f"(\"owner\" <> 'owner_{index}' OR \"owner\" = 'ann')" for index in range(100))
            for written, selected in ((numbers, 150), (owners, 299)):
                shorter = shorter_filter(written, frozenset({"owner"}))
                self.assertEqual(len(list(layer.getFeatures(QgsFeatureRequest(QgsExpression(shorter))))), selected)

    def test_rules_carry_the_shorter_filters(self) -> None:
        roads = {"filter": "(\"kind\" = 'public') OR (\"kind\" = 'open')"}
        rules = RequestRules(shorter_filter).of(encoded({**RULES, "layers": {"roads": roads}}), RULES["map"])
        assert rules is not None
        self.assertEqual(rules.filters, {"roads": "(\"kind\" IN ('public', 'open'))"})


def numbered_geopackage(path: str, count: int) -> QgsVectorLayer:
    """A GeoPackage layer of `count` points numbered from 0 (`n`), their `owner` 'owner_{n}' but the last's NULL."""
    memory = QgsVectorLayer("Point?crs=EPSG:4326&field=n:integer&field=owner:string", "numbered", "memory")
    features = []
    for number in range(count):
        feature = QgsFeature(memory.fields())
        feature.setAttributes([number, f"owner_{number}" if number < count - 1 else None])
        feature.setGeometry(QgsGeometry.fromPointXY(QgsPointXY(number, 0)))
        features.append(feature)
    memory.dataProvider().addFeatures(features)
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    options.layerName = "numbered"
    error = QgsVectorFileWriter.writeAsVectorFormatV2(memory, path, QgsCoordinateTransformContext(), options)
    assert error[0] == QgsVectorFileWriter.NoError, error
    layer = QgsVectorLayer(f"{path}|layername=numbered", "numbered", "ogr")
    assert layer.isValid() and layer.featureCount() == count
    return layer


SCHEMA = (
    '<schema xmlns="http://www.w3.org/2001/XMLSchema" xmlns:qgs="http://www.qgis.org/gml">\n'
    ' <element type="qgs:roadsType" name="roads"/>\n'
    ' <complexType name="roadsType"><complexContent><extension base="gml:AbstractFeatureType"><sequence>\n'
    '  <element name="geometry" type="gml:PolygonPropertyType"/>\n'
    '  <element type="string" name="kind" nillable="true"/>\n'
    '  <element nillable="true" name="owner" type="string"/>\n'
    '  <element name="owner_note" type="string"/>\n'
    " </sequence></extension></complexContent></complexType>\n"
    ' <complexType name="parks_areaType"><sequence><element name="owner" type="string"/></sequence></complexType>\n'
    "</schema>"
)


class SchemaTest(unittest.TestCase):
    def test_leaves_out_the_hidden_attributes_of_each_layer_only(self) -> None:
        trimmed = without_hidden(SCHEMA, {"roads": {"owner"}, "parks area": {"missing"}})
        self.assertIn('name="owner_note"', trimmed)
        self.assertIn('name="kind"', trimmed)
        self.assertIn('<complexType name="parks_areaType"><sequence><element name="owner"', trimmed)
        self.assertEqual(trimmed, SCHEMA.replace('  <element nillable="true" name="owner" type="string"/>', "  "))

    def test_names_are_matched_as_written_in_xml(self) -> None:
        schema = SCHEMA.replace('name="kind"', 'name="a&amp;b"')
        self.assertNotIn("a&amp;b", without_hidden(schema, {"roads": {"a&b"}}))
        self.assertEqual(without_hidden(SCHEMA, {"roads": {"k.nd"}}), SCHEMA)


if __name__ == "__main__":
    application = QgsApplication([], False)
    application.initQgis()
    unittest.main(exit=False)
    application.exitQgis()
