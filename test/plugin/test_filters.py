"""In-process tests of the plugin inside QGIS Server: its filter, its main thread's safe point and
its socket thread, with QgsServer().handleRequest(QgsBufferServerRequest(...)) serving requests on
this (the main) thread, and this test standing in for Steward on the other end of the socket.

Run with the PyQGIS of the release under test (test/plugin-python.test.ts runs it on each).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import FrameType
from typing import Any

from qgis.core import (
    Qgis,
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsMessageLog,
    QgsProject,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QCoreApplication, Qt
from qgis.server import QgsBufferServerRequest, QgsBufferServerResponse, QgsServer
from test_client import FakeSteward, receive

from steward_monitor import plugin

POINT = {"type": "Feature", "properties": {"name": "a"}, "geometry": {"type": "Point", "coordinates": [2, 48]}}
POINTS = {"type": "FeatureCollection", "features": [POINT]}
GET_MAP = (
    "SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=points&STYLES=&CRS=EPSG:4326&BBOX=40,0,50,10"
    "&WIDTH=8&HEIGHT=8&FORMAT=image/png"
)

# What the socket thread must never call: QGIS, Qt, GDAL, and the C functions that read the
# environment (the time zone, the resolver) or format local time.
FORBIDDEN_MODULES = ("qgis", "PyQt5", "PyQt6", "sip", "osgeo")
FORBIDDEN_CALLS = (
    {("time", name) for name in ("localtime", "mktime", "strftime", "ctime", "asctime", "tzset")}
    | {
        ("_socket", name)
        for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo")
    }
    | {("datetime", name) for name in ("now", "today", "fromtimestamp", "astimezone", "timestamp")}
)
PYTHON_DIRS = tuple(os.path.dirname(os.path.dirname(module.__file__ or "")) for module in (sys.modules["qgis"],))


def _owner(function: Any) -> str:
    owner = getattr(function, "__self__", None)
    if isinstance(owner, type):
        return owner.__module__
    return getattr(function, "__module__", None) or type(owner).__module__


class ThreadCalls:
    """Records, through a profile function, what the plugin's socket thread calls that it must not."""

    def __init__(self) -> None:
        self.forbidden: list[str] = []

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if threading.current_thread().name != "steward-monitor":
            return
        if event == "c_call":
            module, name = _owner(arg), getattr(arg, "__name__", "?")
            if module.startswith(FORBIDDEN_MODULES) or (module, name) in FORBIDDEN_CALLS:
                self.forbidden.append("{}.{}".format(module, name))
        elif event == "call" and frame.f_code.co_filename.startswith(PYTHON_DIRS):
            path, name = frame.f_code.co_filename, frame.f_code.co_name
            if "/qgis/" not in path and "/osgeo/" not in path:
                return
            # QGIS wraps `import` in Python: harmless for a module loaded already, but a new one
            # runs its initialisation (C code, perhaps) on this thread.
            imported = frame.f_locals.get("name") if name == "_import" else None
            if imported is None or imported not in sys.modules:
                self.forbidden.append("{}:{} {}".format(path, name, imported or ""))


class PluginInQgisServerTest(unittest.TestCase):
    """One QGIS Server and one plugin for every test, as in a QGIS Server process."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.work = tempfile.mkdtemp(prefix="steward-filters-")
        cls.project = write_project(cls.work)
        cls.steward = FakeSteward()
        os.environ.update({"STEWARD_HOST": "localhost", "STEWARD_PORT": str(cls.steward.port)})
        cls.calls = ThreadCalls()
        threading.setprofile(cls.calls)  # the socket thread the plugin starts is profiled
        cls.server = QgsServer()
        cls.monitor = plugin.StewardMonitor(cls.server.serverInterface())
        threading.setprofile(None)  # type: ignore[arg-type]
        cls.connection, cls.stream = cls.steward.accept()
        cls.hello = receive(cls.stream)
        cls.next_id = 0
        cls.qgis_log: list[tuple[str, str]] = []
        QgsApplication.messageLog().messageReceived[str, str, Qgis.MessageLevel].connect(
            lambda message, tag, _level: cls.qgis_log.append((tag, message)), Qt.DirectConnection
        )
        cls.asking = ThreadPoolExecutor(1)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.asking.shutdown()
        cls.connection.close()
        cls.steward.close()
        shutil.rmtree(cls.work)

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Sends a request as Steward does and reads its reply."""
        type(self).next_id += 1
        request: dict[str, Any] = {"id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.connection.sendall(json.dumps(request).encode() + b"\n")
        reply = receive(self.stream)
        self.assertEqual(reply["id"], self.next_id)
        return reply

    def ask_later(self, method: str, params: dict[str, Any]) -> Future[dict[str, Any]]:
        """Asks from another thread, while this one serves requests as QGIS Server's main thread."""
        return self.asking.submit(self.ask, method, params)

    def serve(self, query: str) -> tuple[int, bytes]:
        request = QgsBufferServerRequest("http://localhost/ows/?" + query)
        response = QgsBufferServerResponse()
        self.server.handleRequest(request, response)
        return response.statusCode(), bytes(response.body())

    def map_query(self, query: str) -> str:
        return "MAP={}&{}".format(self.project, query)

    def cached_token(self) -> int | None:
        entry = self.monitor._projects.entries.get(self.project)
        return None if entry is None else entry[1]

    def lines(self) -> list[str]:
        return self.ask("logs")["result"]["lines"]

    def test_1_says_hello_with_the_version_in_ascii(self) -> None:
        version = self.hello["qgis_version"]
        self.assertRegex(version, r"^3\.\d+\.\d+$")
        self.assertEqual(self.hello["qgis_release"], Qgis.QGIS_RELEASE_NAME)
        self.assertEqual(self.hello["pid"], os.getpid())

    def test_2_counts_requests_served_and_failed(self) -> None:
        before = self.ask("stats")["result"]
        self.assertEqual(self.serve(self.map_query("SERVICE=WMS&REQUEST=GetCapabilities"))[0], 200)
        status, body = self.serve(self.map_query(GET_MAP.replace("LAYERS=points", "LAYERS=nowhere")))
        self.assertEqual(status, 400, body[:200])
        stats = self.ask("stats")["result"]
        self.assertEqual(stats["count"], before["count"] + 2)
        self.assertEqual(stats["failures"], before["failures"] + 1)
        self.assertEqual((stats["service"], stats["request"], stats["project"]), ("WMS", "GetMap", self.project))
        self.assertGreaterEqual(stats["requests"]["GetCapabilities"], 1)
        self.assertIn(self.project, self.ask("metadata")["result"]["cache"]["projects"])

    def test_3_logs_qgis_messages_and_a_line_per_request(self) -> None:
        QgsMessageLog.logMessage("a message of the test", "Server", Qgis.Warning)
        self.assertEqual(self.serve(self.map_query(GET_MAP))[0], 200)
        lines = self.lines()
        self.assertTrue(any(line.endswith(" WARNING [Server] a message of the test") for line in lines), lines[-5:])
        request_line = "INFO [Steward] REQUEST:GetMap SERVICE:WMS MAP:{} answered 200 in ".format(self.project)
        self.assertIn(request_line, lines[-1])

    def test_3b_answers_only_the_lines_after_a_cursor(self) -> None:
        everything = self.ask("logs")["result"]
        cursor = everything["next"]
        self.assertEqual(self.ask("logs", {"since": cursor})["result"], {"lines": [], "next": cursor})
        QgsMessageLog.logMessage("after the cursor", "Server", Qgis.Warning)
        newer = self.ask("logs", {"since": cursor})["result"]
        self.assertEqual(len(newer["lines"]), 1, newer)
        self.assertTrue(newer["lines"][0].endswith(" WARNING [Server] after the cursor"))
        self.assertEqual(newer["next"], cursor + 1)
        # A cursor that is not a count, as an older Steward never sends: the whole log.
        whole = self.ask("logs", {"since": "x"})["result"]["lines"]
        self.assertGreater(len(whole), len(everything["lines"]))
        self.assertTrue(whole[-1].endswith(" WARNING [Server] after the cursor"))

    def test_4_writes_the_plugins_own_lines_to_qgis_log_from_the_main_thread_once(self) -> None:
        said = threading.Thread(target=self.monitor._log.warning, args=("said on another thread",))
        said.start()
        said.join()
        self.assertEqual(sum("said on another thread" in line for line in self.lines()), 1, "recorded at once")
        self.assertNotIn(("Steward", "said on another thread"), self.qgis_log, "not yet in QGIS's log")
        self.serve(self.map_query("SERVICE=WMS&REQUEST=GetCapabilities"))
        self.assertEqual(self.qgis_log.count(("Steward", "said on another thread")), 1, "at the safe point")
        self.assertEqual(sum("said on another thread" in line for line in self.lines()), 1, "and not recorded twice")

    def test_5_drops_an_invalidated_project_before_the_next_request_loads_it(self) -> None:
        self.serve(self.map_query(GET_MAP))
        loaded = self.cached_token()
        self.assertIsNotNone(loaded)
        self.assertEqual(self.ask("invalidate", {"map": self.project}), {"id": self.next_id, "result": True})
        self.assertEqual(self.cached_token(), loaded, "the socket thread only queued it")
        self.assertEqual(self.serve(self.map_query(GET_MAP))[0], 200)
        self.assertNotIn(self.cached_token(), (None, loaded), "dropped, then loaded again by the request")

    def test_6_reloads_at_the_next_safe_point_and_answers_pending_without_one(self) -> None:
        self.serve(self.map_query(GET_MAP))
        loaded = self.cached_token()
        started = time.monotonic()
        reply = self.ask("reload", {"map": self.project})
        self.assertEqual(reply["result"], {"map": self.project, "status": "pending"})
        self.assertGreaterEqual(time.monotonic() - started, 1.4, "it waited for the main thread")
        self.assertEqual(self.cached_token(), loaded, "nothing ran QGIS off the main thread")
        self.serve("SERVICE=WMS&REQUEST=GetCapabilities")  # any request: the reload runs as it starts
        reloaded = self.cached_token()
        self.assertNotIn(reloaded, (None, loaded))

        answer = self.ask_later("reload", {"map": self.project})
        while not self.monitor._safe_point.pending:
            time.sleep(0.01)
        self.serve("SERVICE=WMS&REQUEST=GetCapabilities")
        result = answer.result(timeout=5)["result"]
        self.assertEqual((result["status"], result["project"]["layers"]), ("reloaded", 1))
        self.assertNotIn(self.cached_token(), (None, reloaded))

    def test_7_reloads_between_requests_when_the_main_thread_runs_the_event_loop(self) -> None:
        answer = self.ask_later("reload", {"map": self.project})
        self.spin_until(answer.done)
        self.assertEqual(answer.result()["result"]["status"], "reloaded")

        refused = self.ask_later("reload", {"map": os.path.join(self.work, "missing.qgs")})
        self.spin_until(refused.done)
        self.assertIn(refused.result()["result"]["status"], ("refused", "failed"))

    def spin_until(self, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 5
        while not done() and time.monotonic() < deadline:
            QCoreApplication.processEvents()
            time.sleep(0.01)

    def test_8_a_failing_hook_is_logged_with_its_traceback_once_and_the_request_served(self) -> None:
        stats = self.monitor._stats

        def broken(*_args: object) -> None:
            raise RuntimeError("stats broke")

        stats_type = type(stats)
        original = stats_type.begin
        stats_type.begin = broken  # type: ignore[method-assign]
        try:
            for _ in range(3):
                self.assertEqual(self.serve(self.map_query("SERVICE=WMS&REQUEST=GetCapabilities"))[0], 200)
        finally:
            stats_type.begin = original  # type: ignore[method-assign]
        failures = [line for line in self.lines() if "Steward monitor failure in requestReady" in line]
        self.assertEqual(len(failures), 1, "rate-limited")
        self.assertIn("RuntimeError: stats broke", failures[0])
        self.assertIn("Traceback", failures[0])

    def test_9_the_socket_thread_never_called_qgis_qt_or_the_environment(self) -> None:
        for method in ("metadata", "about", "stats", "logs", "projects"):
            self.assertIn("result", self.ask(method), method)
        about = self.ask("about")["result"]
        self.assertEqual(about["process"]["pid"], os.getpid())
        self.assertTrue(about["fonts"])
        self.assertEqual(self.ask("nope"), {"id": self.next_id, "error": "unknown method"})
        self.assertEqual(self.ask("reload", {})["error"], "reload needs params.map, a non-empty string")
        stats_type = type(self.monitor._stats)
        original = stats_type.snapshot

        def broken(_self: object) -> dict[str, Any]:
            raise RuntimeError("snapshot broke")

        stats_type.snapshot = broken  # type: ignore[method-assign]
        try:
            self.assertEqual(self.ask("stats")["error"], "snapshot broke")
        finally:
            stats_type.snapshot = original  # type: ignore[method-assign]
        failure = [line for line in self.lines() if "Steward monitor failure in the stats handler" in line]
        self.assertEqual(len(failure), 1, "a failure on the socket thread is logged there, with its traceback")
        self.assertIn("RuntimeError: snapshot broke", failure[0])
        self.assertEqual(self.calls.forbidden, [])


def write_project(directory: str) -> str:
    data = os.path.join(directory, "points.geojson")
    with open(data, "w", encoding="utf-8") as file:
        json.dump(POINTS, file)
    project = QgsProject()
    project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    project.addMapLayer(QgsVectorLayer(data, "points", "ogr"))
    path = os.path.join(directory, "points.qgs")
    assert project.write(path), "the test project could not be written"
    return path


if __name__ == "__main__":
    application = QgsApplication([], False)
    application.initQgis()
    unittest.main(exit=False)
    application.exitQgis()
