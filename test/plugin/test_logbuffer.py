"""Unit tests of the plugin's log capture: QGIS's messages and the filter's line per request."""

import re
import unittest

from qgis.core import Qgis

from steward_monitor.logbuffer import LogBuffer
from steward_monitor.stats import RequestStats

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"


class LogBufferTest(unittest.TestCase):
    def test_a_served_request_reads_as_one_line_among_qgis_messages(self):
        logs, stats = LogBuffer(), RequestStats()
        logs.on_message("Layer roads is invalid", "Server", Qgis.Warning)
        stats.begin("WMS", "GetMap", "/p/roads.qgs")
        logs.on_request(stats.end(), 200)
        warning, request = logs.lines()
        self.assertRegex(warning, "^" + STAMP + r" WARNING \[Server\] Layer roads is invalid$")
        self.assertRegex(
            request, "^" + STAMP + r" INFO \[Steward\] REQUEST:GetMap SERVICE:WMS MAP:/p/roads\.qgs answered 200 in \d+ ms$"
        )

    def test_the_record_is_the_finished_request_once_and_none_without_one(self):
        stats = RequestStats()
        self.assertIsNone(stats.end())
        stats.begin("WFS", "GetFeature", "/p/a.qgs")
        service, request, project, _started, elapsed = stats.end(failed=True)
        self.assertEqual((service, request, project), ("WFS", "GetFeature", "/p/a.qgs"))
        self.assertGreaterEqual(elapsed, 0)
        self.assertIsNone(stats.end(), "a request is counted once")
        self.assertEqual((stats.count, stats.failures), (1, 1))

    def test_the_oldest_lines_leave_first(self):
        logs = LogBuffer(max_lines=2)
        for number in range(3):
            logs.on_message("message {}".format(number), "Server", Qgis.Info)
        self.assertEqual([re.sub("^" + STAMP + " ", "", line) for line in logs.lines()], [
            "INFO [Server] message 1",
            "INFO [Server] message 2",
        ])


if __name__ == "__main__":
    unittest.main()
