"""Unit tests of the plugin's reading of Steward's rules (steward_monitor/access.py): what a
STEWARD_ACCESS value grants, and that anything unreadable or meant for another project opens nothing."""

from __future__ import annotations

import base64
import json
import unittest

from steward_monitor.access import REFUSE_ALL, RequestRules, parse

RULES = {
    "map": "/p/town/town.qgs",
    "key": "viewer:abc",
    "write": False,
    "layers": {"secret": {"read": False}, "roads": {"hidden": ["owner"], "filter": "\"kind\" = 'public'"}},
}


def encoded(data: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


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
        for damaged in ("%%%", base64.urlsafe_b64encode(b"[1, 2]").decode(), "bm90IGpzb24"):
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
        self.assertIsNone(request.of("", "/p/town/town.qgs"))


if __name__ == "__main__":
    unittest.main()
