"""Unit tests of the plugin's log capture: QGIS's messages, the filter's line per request and the
plugin's own messages."""

from __future__ import annotations

import re
import time
import unittest

from qgis.core import Qgis

from steward_monitor.logbuffer import LogBuffer, local_offset_seconds
from steward_monitor.stats import RequestStats

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"


class LogBufferTest(unittest.TestCase):
    def test_a_served_request_reads_as_one_line_among_qgis_messages(self) -> None:
        logs, stats = LogBuffer(), RequestStats()
        logs.on_message("Layer roads is invalid", "Server", Qgis.Warning)
        stats.begin("WMS", "GetMap", "/p/roads.qgs")
        served = stats.end()
        assert served is not None
        logs.on_request(served, 200)
        warning, request = logs.read().lines
        self.assertRegex(warning, "^" + STAMP + r" WARNING \[Server\] Layer roads is invalid$")
        self.assertRegex(
            request,
            "^" + STAMP + r" INFO \[Steward\] REQUEST:GetMap SERVICE:WMS MAP:/p/roads\.qgs answered 200 in \d+ ms$",
        )

    def test_the_record_is_the_finished_request_once_and_none_without_one(self) -> None:
        stats = RequestStats()
        self.assertIsNone(stats.end())
        stats.begin("WFS", "GetFeature", "/p/a.qgs")
        served = stats.end(failed=True)
        assert served is not None
        service, request, project, _started, elapsed = served
        self.assertEqual((service, request, project), ("WFS", "GetFeature", "/p/a.qgs"))
        self.assertGreaterEqual(elapsed or 0, 0)
        self.assertIsNone(stats.end(), "a request is counted once")
        self.assertEqual((stats.count, stats.failures), (1, 1))

    def test_the_oldest_lines_leave_first(self) -> None:
        logs = LogBuffer(max_lines=2)
        for number in range(3):
            logs.on_message("message {}".format(number), "Server", Qgis.Info)
        self.assertEqual(
            [re.sub("^" + STAMP + " ", "", line) for line in logs.read().lines],
            ["INFO [Server] message 1", "INFO [Server] message 2"],
        )

    def test_a_reader_gets_only_the_lines_after_its_cursor(self) -> None:
        logs = LogBuffer(max_lines=3)
        logs.add("one", "Steward", Qgis.Info)
        logs.on_message("two", "Server", Qgis.Warning)
        first = logs.read()
        self.assertEqual((len(first.lines), first.next), (2, 2))
        self.assertEqual(logs.read(first.next), ([], 2))
        for word in ("three", "four", "five"):
            logs.on_message(word, "Server", Qgis.Info)
        later = logs.read(first.next)
        self.assertEqual([line.rsplit(" ", 1)[1] for line in later.lines], ["three", "four", "five"])
        self.assertEqual(later.next, 5)
        # A cursor past the last line (a reader of an earlier process) gets every line kept.
        self.assertEqual(len(logs.read(99).lines), 3)

    def test_times_are_local_at_the_offset_of_the_start_and_say_it(self) -> None:
        offset = local_offset_seconds()
        logs = LogBuffer(offset)
        logs.add("hello", "Steward", Qgis.Info)
        stamp = logs.read().lines[0].split(" ")[0]
        sign = "+" if offset >= 0 else "-"
        self.assertTrue(stamp.endswith("{}{:02d}:{:02d}".format(sign, abs(offset) // 3600, abs(offset) // 60 % 60)))
        self.assertEqual(stamp[:16], time.strftime("%Y-%m-%dT%H:%M", time.localtime())[:16])
        west = LogBuffer(-(5 * 3600 + 30 * 60))
        west.add("x", "Steward", Qgis.Info)
        self.assertRegex(west.read().lines[0], r"^\S+-05:30 INFO \[Steward\] x$")

    def test_messages_under_the_muted_tag_are_not_recorded_again(self) -> None:
        logs = LogBuffer()
        logs.add("Connected with Steward server", "Steward", Qgis.Info)
        with logs.muted("Steward"):
            logs.on_message("Connected with Steward server", "Steward", Qgis.Info)  # the echo in QGIS's log
            logs.on_message("Layer roads is invalid", "Server", Qgis.Warning)
        logs.on_message("later", "Steward", Qgis.Info)
        self.assertEqual(
            [re.sub("^" + STAMP + " ", "", line) for line in logs.read().lines],
            [
                "INFO [Steward] Connected with Steward server",
                "WARNING [Server] Layer roads is invalid",
                "INFO [Steward] later",
            ],
        )


if __name__ == "__main__":
    unittest.main()
