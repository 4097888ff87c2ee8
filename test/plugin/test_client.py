"""Unit tests of the plugin's connection thread, its own log and its safe point; stdlib only, so
they run without QGIS."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
import unittest
from typing import Any, BinaryIO

from steward_monitor import client
from steward_monitor.invalidation import PendingInvalidations
from steward_monitor.pluginlog import FAILURE_INTERVAL_SECONDS, PluginLog
from steward_monitor.safepoint import SafePoint


class RecordedLog:
    """Stands in for the plugin's log: keeps what the thread says, by kind."""

    def __init__(self) -> None:
        self.infos: list[str] = []
        self.warnings: list[str] = []
        self.failures: list[str] = []

    def info(self, message: str) -> None:
        self.infos.append(message)

    def warning(self, message: str) -> None:
        self.warnings.append(message)

    def failure(self, where: str) -> None:
        self.failures.append(where)


def local(port: int) -> client.Address:
    return (socket.AF_INET, ("127.0.0.1", port))


class ReadLinesTest(unittest.TestCase):
    def setUp(self) -> None:
        self._max_line = client.MAX_LINE
        client.MAX_LINE = 8

    def tearDown(self) -> None:
        client.MAX_LINE = self._max_line

    def lines(self, data: bytes) -> list[bytes]:
        return list(client.read_lines(io.BufferedReader(io.BytesIO(data))))

    def test_splits_lines_and_drops_an_unfinished_last_one(self) -> None:
        self.assertEqual(self.lines(b'{"a":1}\n\n{"b"'), [b'{"a":1}\n', b"\n"])

    def test_skips_an_oversized_line_and_resumes(self) -> None:
        self.assertEqual(self.lines(b"x" * 30 + b"\nok\n"), [b"ok\n"])


class FakeSteward:
    """A one-connection-at-a-time server standing in for the registry."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.server.getsockname()[1]

    def accept(self) -> tuple[socket.socket, BinaryIO]:
        self.server.settimeout(5)
        connection, _ = self.server.accept()
        connection.settimeout(5)
        return connection, connection.makefile("rb")

    def close(self) -> None:
        self.server.close()


def receive(stream: BinaryIO) -> Any:
    return json.loads(stream.readline())


class FastRetryTest(unittest.TestCase):
    """Retries after 0.1 s rather than 5 s."""

    def setUp(self) -> None:
        self._retry = client.RETRY_SECONDS
        client.RETRY_SECONDS = 0.1  # type: ignore[assignment]

    def tearDown(self) -> None:
        client.RETRY_SECONDS = self._retry


class StewardClientTest(FastRetryTest):
    def setUp(self) -> None:
        super().setUp()
        self.log = RecordedLog()
        self.steward = FakeSteward()

        def fail(_params: dict[str, Any]) -> Any:
            raise RuntimeError("boom")

        self.invalidations = PendingInvalidations()
        handlers = {"stats": lambda _params: {"count": 1}, "logs": fail, "invalidate": self.invalidations.request}
        self.connections = 0

        def connected() -> None:
            self.connections += 1

        hello = {"qgis_version": "3.22.16", "qgis_release": "Białowieża", "pid": 7}
        self.client = client.StewardClient([local(self.steward.port)], "tok", handlers, self.log, connected, hello)
        self.client.start()

    def tearDown(self) -> None:
        super().tearDown()
        self.steward.close()

    def test_says_hello_then_answers_requests(self) -> None:
        connection, stream = self.steward.accept()
        with connection:
            hello = receive(stream)
            self.assertEqual(
                hello,
                {
                    "type": "hello",
                    "version": 1,
                    "token": "tok",
                    "qgis_version": "3.22.16",
                    "qgis_release": "Białowieża",
                    "pid": 7,
                },
            )
            connection.sendall(b"not json\n" + b'{"id":"x"}\n' + b'{"id":1,"method":"stats"}\n')
            self.assertEqual(receive(stream), {"id": 1, "result": {"count": 1}})
            connection.sendall(b'{"id":2,"method":"logs"}\n{"id":3,"method":"nope"}\n{"id":4,"method":["x"]}\n')
            self.assertEqual(receive(stream), {"id": 2, "error": "boom"})
            self.assertEqual(receive(stream), {"id": 3, "error": "unknown method"})
            self.assertEqual(receive(stream), {"id": 4, "error": "unknown method"})
        self.assertEqual(self.log.infos[:2], ["Try to connect...", "Connected with Steward server"])
        self.assertEqual(self.log.failures, ["the logs handler"], "a handler that raised is a failure, logged")

    def test_queues_an_invalidation_answers_at_once_and_refuses_a_bad_one(self) -> None:
        connection, stream = self.steward.accept()
        with connection:
            receive(stream)
            map_value = "postgresql:?service=s&schema=a b&project=p"
            request = {"id": 4, "method": "invalidate", "params": {"map": map_value}}
            connection.sendall(json.dumps(request).encode() + b"\n")
            self.assertEqual(receive(stream), {"id": 4, "result": True})
            connection.sendall(
                b'{"id":5,"method":"invalidate","params":{}}\n{"id":6,"method":"invalidate","params":[1]}\n'
            )
            self.assertEqual(receive(stream), {"id": 5, "error": "invalidate needs params.map, a non-empty string"})
            self.assertEqual(receive(stream), {"id": 6, "error": "params must be an object"})
        self.assertEqual(self.invalidations.take(), {map_value})
        self.assertEqual(self.log.failures, [], "a refused request is the request's fault, not the plugin's")

    def test_reconnects_after_the_connection_drops(self) -> None:
        first, first_stream = self.steward.accept()
        receive(first_stream)
        first_stream.close()  # the file holds the socket open until it is closed too
        first.close()
        second, second_stream = self.steward.accept()
        with second:
            self.assertEqual(receive(second_stream)["type"], "hello")
        self.assertEqual(self.log.infos.count("Connected with Steward server"), 2)
        self.assertEqual(self.connections, 2, "on_connected runs on each connection")
        # A lost connection is a warning: it shows at QGIS Server's default log level.
        self.assertEqual(self.log.warnings[:1], ["Connection with Steward server lost"])


class FailoverTest(FastRetryTest):
    def test_parses_comma_separated_hosts_with_or_without_a_port(self) -> None:
        self.assertEqual(
            client.parse_addresses("a, b:7001,,[::1]:7002,[fe80::1]", 7000),
            [("a", 7000), ("b", 7001), ("::1", 7002), ("fe80::1", 7000)],
        )
        self.assertEqual(client.parse_addresses("a,b:7001", None), [("b", 7001)])

    def test_resolves_names_once_into_numeric_addresses_and_leaves_out_unknown_ones(self) -> None:
        log = RecordedLog()
        addresses = client.resolve_addresses([("localhost", 7000), ("::1", 7001), ("nowhere.invalid", 7002)], log)
        self.assertIn((socket.AF_INET, ("127.0.0.1", 7000)), addresses)
        self.assertIn((socket.AF_INET6, ("::1", 7001, 0, 0)), addresses)
        for _family, address in addresses:
            socket.inet_pton(_family, address[0])  # numeric: connect() needs no resolver for it
        self.assertEqual(len(log.warnings), 1)
        self.assertIn("nowhere.invalid:7002", log.warnings[0])

    def test_registers_with_the_next_steward_when_its_own_dies(self) -> None:
        first, second = FakeSteward(), FakeSteward()
        steward_client = client.StewardClient([local(first.port), local(second.port)], "", {}, RecordedLog())
        steward_client.start()
        connection, stream = first.accept()
        receive(stream)
        stream.close()
        connection.close()
        first.close()  # the first Steward is gone: nothing listens on its port any more
        connection, stream = second.accept()
        with connection:
            self.assertEqual(receive(stream)["type"], "hello")
        second.close()


class WithoutStewardTest(FastRetryTest):
    def test_tries_once_per_retry_period_and_warns_nothing_while_no_steward_answers(self) -> None:
        """With the API down the plugin's only work is a round of attempts per period, none per request."""
        closed, also_closed = FakeSteward(), FakeSteward()
        addresses = [local(closed.port), local(also_closed.port)]
        closed.close()
        also_closed.close()
        attempts: list[Any] = []
        log = RecordedLog()
        steward_client = client.StewardClient(addresses, "", {}, log)
        real_socket = client.socket.socket

        class CountedSocket(real_socket):  # type: ignore[misc, valid-type]
            def connect(self, address: Any) -> None:
                if (self.family, address) in addresses:  # other tests' clients still retry in the background
                    attempts.append(address)
                super().connect(address)

        client.socket.socket = CountedSocket  # type: ignore[misc]
        try:
            steward_client.start()
            time.sleep(10.5 * client.RETRY_SECONDS)
        finally:
            client.socket.socket = real_socket  # type: ignore[misc]
        rounds = log.infos.count("Try to connect...")
        self.assertTrue(8 <= rounds <= 12, "{} rounds of attempts in 10.5 retry periods".format(rounds))
        self.assertLessEqual(len(attempts), 2 * rounds, "each address once a round")
        self.assertEqual(log.warnings, [], "a Steward that is down is not an error to repeat in QGIS Server's log")


class FakeServerInterface:
    """Stands in for QgsServerInterface: records the config cache entries removed."""

    def __init__(self, failing: tuple[str, ...] = ()) -> None:
        self.removed: list[str] = []
        self._failing = failing

    def removeConfigCacheEntry(self, path: str) -> None:  # noqa: N802 (QgsServerInterface API)
        if path in self._failing:
            raise RuntimeError("cannot")
        self.removed.append(path)


class PendingInvalidationsTest(unittest.TestCase):
    def test_apply_removes_each_queued_map_once_and_drains_the_queue(self) -> None:
        rings: list[None] = []
        pending = PendingInvalidations(ring=lambda: rings.append(None))
        self.assertIs(pending.request({"map": "postgresql:?project=a"}), True)
        pending.request({"map": "postgresql:?project=b"})
        pending.request({"map": "postgresql:?project=a"})
        self.assertEqual(len(rings), 3, "each queued invalidation rings for the main thread")
        iface, failed = FakeServerInterface(), []
        pending.apply(iface, failed.append)
        self.assertEqual((sorted(iface.removed), failed), (["postgresql:?project=a", "postgresql:?project=b"], []))
        pending.apply(iface, failed.append)
        self.assertEqual(len(iface.removed), 2, "the queue was drained")

    def test_queue_adds_many_at_once(self) -> None:
        pending = PendingInvalidations()
        pending.queue(["postgresql:?project=a", "postgresql:?project=b"])
        pending.request({"map": "postgresql:?project=a"})
        self.assertEqual(pending.take(), {"postgresql:?project=a", "postgresql:?project=b"})

    def test_a_failing_entry_does_not_keep_the_others(self) -> None:
        removed: list[str] = []
        pending = PendingInvalidations(removed.append)
        for name in ("bad", "good", "reloaded"):
            pending.request({"map": name})
        pending.discard("reloaded")
        iface, failed = FakeServerInterface(failing=("bad",)), []
        pending.apply(iface, failed.append)
        self.assertEqual((iface.removed, failed, removed), (["good"], ["bad"], ["good"]))
        self.assertEqual(pending.take(), set())

    def test_refuses_a_missing_or_empty_map(self) -> None:
        pending = PendingInvalidations()
        for params in ({}, {"map": ""}, {"map": 3}, None):
            with self.assertRaises(ValueError):
                pending.request(params)
        self.assertEqual(pending.take(), set())

    def test_adds_from_many_threads_are_all_applied(self) -> None:
        pending = PendingInvalidations()
        iface = FakeServerInterface()
        names = ["p{}".format(n) for n in range(400)]

        def add(chunk: list[str]) -> None:
            for name in chunk:
                pending.request({"map": name})

        threads = [threading.Thread(target=add, args=(names[i::4],)) for i in range(4)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            pending.apply(iface, self.fail)
        pending.apply(iface, self.fail)
        self.assertEqual(sorted(iface.removed), sorted(names))


class PluginLogTest(unittest.TestCase):
    def setUp(self) -> None:
        self.now = 1000.0
        self.recorded: list[tuple[str, bool]] = []
        self.emitted: list[tuple[str, bool]] = []
        self.rings = 0

        def ring() -> None:
            self.rings += 1

        self.log = PluginLog(
            lambda message, warning: self.recorded.append((message, warning)),
            lambda message, warning: self.emitted.append((message, warning)),
            ring,
            lambda: self.now,
        )

    def fail(self, where: str) -> None:
        try:
            raise KeyError("gone")
        except KeyError:
            self.log.failure(where)

    def test_records_at_once_and_reaches_qgis_only_when_the_main_thread_flushes(self) -> None:
        self.log.info("Try to connect...")
        self.log.warning("Connection with Steward server lost")
        self.assertEqual(self.recorded, [("Try to connect...", False), ("Connection with Steward server lost", True)])
        self.assertEqual((self.emitted, self.rings), ([], 2))
        self.log.flush()
        self.assertEqual(self.emitted, self.recorded)
        self.log.flush()
        self.assertEqual(len(self.emitted), 2, "each message reaches QGIS's log once")

    def test_a_failure_is_a_warning_with_its_traceback_at_most_once_a_minute_per_place(self) -> None:
        self.fail("requestReady")
        self.fail("requestReady")
        self.fail("responseComplete")
        self.now += FAILURE_INTERVAL_SECONDS - 1
        self.fail("requestReady")
        self.assertEqual(len(self.recorded), 2)
        first, warning = self.recorded[0]
        self.assertTrue(warning)
        self.assertTrue(first.startswith("Steward monitor failure in requestReady:\nTraceback"), first)
        self.assertIn("KeyError: 'gone'", first)
        self.assertIn("raise KeyError", first, "the traceback names the line that raised")
        self.now += 1
        self.fail("requestReady")
        self.assertTrue(
            self.recorded[2][0].startswith(
                "Steward monitor failure in requestReady (2 more since the last one logged):"
            )
        )


class SafePointTest(unittest.TestCase):
    def test_runs_every_drain_when_rung_even_after_one_fails(self) -> None:
        ran: list[str] = []
        failures: list[str] = []
        point = SafePoint(failures.append)

        def broken() -> None:
            raise RuntimeError("no")

        point.add_drain("broken", broken)
        point.add_drain("fine", lambda: ran.append("fine"))
        self.assertFalse(point.pending)
        point.ring()
        self.assertTrue(point.pending)
        point.run()
        self.assertEqual((ran, failures, bool(point.pending)), (["fine"], ["broken"], False))


if __name__ == "__main__":
    unittest.main()
