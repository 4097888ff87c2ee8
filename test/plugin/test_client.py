"""Unit tests of the plugin's connection thread; stdlib only, so they run without QGIS."""

import io
import json
import socket
import threading
import time
import unittest

from steward_monitor import client
from steward_monitor.invalidation import PendingInvalidations


class ReadLinesTest(unittest.TestCase):
    def setUp(self):
        self._max_line = client.MAX_LINE
        client.MAX_LINE = 8

    def tearDown(self):
        client.MAX_LINE = self._max_line

    def lines(self, data):
        return list(client.read_lines(io.BufferedReader(io.BytesIO(data))))

    def test_splits_lines_and_drops_an_unfinished_last_one(self):
        self.assertEqual(self.lines(b'{"a":1}\n\n{"b"'), [b'{"a":1}\n', b"\n"])

    def test_skips_an_oversized_line_and_resumes(self):
        self.assertEqual(self.lines(b"x" * 30 + b"\nok\n"), [b"ok\n"])


class FakeSteward:
    """A one-connection-at-a-time server standing in for the registry."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]

    def accept(self):
        self.server.settimeout(5)
        connection, _ = self.server.accept()
        connection.settimeout(5)
        return connection, connection.makefile("rb")

    def close(self):
        self.server.close()


def receive(stream):
    return json.loads(stream.readline())


class FastRetryTest(unittest.TestCase):
    """Retries after 0.1 s rather than 5 s."""

    def setUp(self):
        self._retry = client.RETRY_SECONDS
        client.RETRY_SECONDS = 0.1

    def tearDown(self):
        client.RETRY_SECONDS = self._retry


class StewardClientTest(FastRetryTest):
    def setUp(self):
        super().setUp()
        self.log = []
        self.steward = FakeSteward()

        def fail(_params):
            raise RuntimeError("boom")

        self.invalidations = PendingInvalidations()
        handlers = {"stats": lambda _params: {"count": 1}, "logs": fail, "invalidate": self.invalidations.request}
        self.connections = 0

        def connected():
            self.connections += 1

        self.warnings = []
        self.client = client.StewardClient(
            [("127.0.0.1", self.steward.port)],
            "tok",
            handlers,
            self.log.append,
            connected,
            "3.40.6-Bratislava",
            warn=self.warnings.append,
        )
        self.client.start()

    def tearDown(self):
        super().tearDown()
        self.steward.close()

    def test_says_hello_then_answers_requests(self):
        connection, stream = self.steward.accept()
        with connection:
            hello = receive(stream)
            self.assertEqual({k: hello[k] for k in ("type", "version", "token")}, {"type": "hello", "version": 1, "token": "tok"})
            self.assertIsInstance(hello["pid"], int)
            self.assertEqual(hello["qgis_version"], "3.40.6-Bratislava")
            connection.sendall(b"not json\n" + b'{"id":"x"}\n' + b'{"id":1,"method":"stats"}\n')
            self.assertEqual(receive(stream), {"id": 1, "result": {"count": 1}})
            connection.sendall(b'{"id":2,"method":"logs"}\n{"id":3,"method":"nope"}\n')
            self.assertEqual(receive(stream), {"id": 2, "error": "boom"})
            self.assertEqual(receive(stream), {"id": 3, "error": "unknown method"})
        self.assertEqual(self.log[:2], ["Try to connect...", "Connected with Steward server"])

    def test_queues_an_invalidation_answers_at_once_and_refuses_a_bad_one(self):
        connection, stream = self.steward.accept()
        with connection:
            receive(stream)
            map_value = "postgresql:?service=s&schema=a b&project=p"
            connection.sendall(json.dumps({"id": 4, "method": "invalidate", "params": {"map": map_value}}).encode() + b"\n")
            self.assertEqual(receive(stream), {"id": 4, "result": True})
            connection.sendall(b'{"id":5,"method":"invalidate","params":{}}\n{"id":6,"method":"invalidate","params":[1]}\n')
            self.assertEqual(receive(stream)["id"], 5)
            self.assertEqual(receive(stream), {"id": 6, "error": "params must be an object"})
        self.assertEqual(self.invalidations.take(), {map_value})

    def test_reconnects_after_the_connection_drops(self):
        first, first_stream = self.steward.accept()
        receive(first_stream)
        first_stream.close()  # the file holds the socket open until it is closed too
        first.close()
        second, second_stream = self.steward.accept()
        with second:
            self.assertEqual(receive(second_stream)["type"], "hello")
        self.assertEqual(self.log.count("Connected with Steward server"), 2)
        self.assertEqual(self.connections, 2, "on_connected runs on each connection")
        # A lost connection is a warning: it shows at QGIS Server's default log level.
        self.assertEqual(self.warnings[:1], ["Connection with Steward server lost"])
        self.assertNotIn("Connection with Steward server lost", self.log)


class FailoverTest(FastRetryTest):
    def test_parses_comma_separated_hosts_with_or_without_a_port(self):
        self.assertEqual(
            client.parse_addresses("a, b:7001,,[::1]:7002,[fe80::1]", 7000),
            [("a", 7000), ("b", 7001), ("::1", 7002), ("fe80::1", 7000)],
        )
        self.assertEqual(client.parse_addresses("a,b:7001", None), [("b", 7001)])

    def test_registers_with_the_next_steward_when_its_own_dies(self):
        first, second = FakeSteward(), FakeSteward()
        addresses = [("127.0.0.1", first.port), ("127.0.0.1", second.port)]
        steward_client = client.StewardClient(addresses, "", {}, lambda _message: None)
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
    def test_tries_once_per_retry_period_and_warns_nothing_while_no_steward_answers(self):
        """With the API down the plugin's only work is a round of attempts per period, none per request."""
        closed, also_closed = FakeSteward(), FakeSteward()
        addresses = [("127.0.0.1", closed.port), ("127.0.0.1", also_closed.port)]
        closed.close()
        also_closed.close()
        attempts, log, warnings = [], [], []
        steward_client = client.StewardClient(addresses, "", {}, log.append, warn=warnings.append)
        real_connect = client.socket.create_connection

        def counted_connect(address, timeout):
            if address in addresses:  # other tests' clients still retry in the background
                attempts.append(address)
            return real_connect(address, timeout)

        client.socket.create_connection = counted_connect
        try:
            steward_client.start()
            time.sleep(10.5 * client.RETRY_SECONDS)
        finally:
            client.socket.create_connection = real_connect
        rounds = log.count("Try to connect...")
        self.assertTrue(8 <= rounds <= 12, "{} rounds of attempts in 10.5 retry periods".format(rounds))
        self.assertLessEqual(len(attempts), 2 * rounds, "each address once a round")
        self.assertEqual(warnings, [], "a Steward that is down is not an error to repeat in QGIS Server's log")


class FakeServerInterface:
    """Stands in for QgsServerInterface: records the config cache entries removed."""

    def __init__(self, failing=()):
        self.removed = []
        self._failing = failing

    def removeConfigCacheEntry(self, path):  # noqa: N802 (QgsServerInterface API)
        if path in self._failing:
            raise RuntimeError("cannot")
        self.removed.append(path)


class PendingInvalidationsTest(unittest.TestCase):
    def test_apply_removes_each_queued_map_once_and_drains_the_queue(self):
        pending = PendingInvalidations()
        self.assertIs(pending.request({"map": "postgresql:?project=a"}), True)
        pending.request({"map": "postgresql:?project=b"})
        pending.request({"map": "postgresql:?project=a"})
        iface = FakeServerInterface()
        self.assertEqual(pending.apply(iface), [])
        self.assertEqual(sorted(iface.removed), ["postgresql:?project=a", "postgresql:?project=b"])
        pending.apply(iface)
        self.assertEqual(len(iface.removed), 2, "the queue was drained")

    def test_queue_adds_many_at_once(self):
        pending = PendingInvalidations()
        pending.queue(["postgresql:?project=a", "postgresql:?project=b"])
        pending.request({"map": "postgresql:?project=a"})
        self.assertEqual(pending.take(), {"postgresql:?project=a", "postgresql:?project=b"})

    def test_a_failing_entry_does_not_keep_the_others(self):
        pending = PendingInvalidations()
        for name in ("bad", "good"):
            pending.request({"map": name})
        iface = FakeServerInterface(failing=("bad",))
        self.assertEqual(pending.apply(iface), ["bad"])
        self.assertEqual(iface.removed, ["good"])
        self.assertEqual(pending.take(), set())

    def test_reports_each_removed_map_and_forgets_a_discarded_one(self):
        removed = []
        pending = PendingInvalidations(removed.append)
        for name in ("bad", "good", "reloaded"):
            pending.request({"map": name})
        pending.discard("reloaded")
        self.assertEqual(pending.apply(FakeServerInterface(failing=("bad",))), ["bad"])
        self.assertEqual(removed, ["good"])

    def test_refuses_a_missing_or_empty_map(self):
        pending = PendingInvalidations()
        for params in ({}, {"map": ""}, {"map": 3}, None):
            with self.assertRaises(ValueError):
                pending.request(params)
        self.assertEqual(pending.take(), set())

    def test_adds_from_many_threads_are_all_applied(self):
        pending = PendingInvalidations()
        iface = FakeServerInterface()
        names = ["p{}".format(n) for n in range(400)]

        def add(chunk):
            for name in chunk:
                pending.request({"map": name})

        threads = [threading.Thread(target=add, args=(names[i::4],)) for i in range(4)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            pending.apply(iface)
        pending.apply(iface)
        self.assertEqual(sorted(iface.removed), sorted(names))


if __name__ == "__main__":
    unittest.main()
