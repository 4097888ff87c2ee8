"""Unit tests of the plugin's connection thread; stdlib only, so they run without QGIS."""

import io
import json
import socket
import threading
import unittest

from steward_monitor import client


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


class StewardClientTest(unittest.TestCase):
    def setUp(self):
        self._retry = client.RETRY_SECONDS
        client.RETRY_SECONDS = 0.1
        self.log = []
        self.steward = FakeSteward()

        def fail():
            raise RuntimeError("boom")

        handlers = {"stats": lambda: {"count": 1}, "logs": fail}
        self.client = client.StewardClient("127.0.0.1", self.steward.port, "tok", handlers, self.log.append)
        self.client.start()

    def tearDown(self):
        client.RETRY_SECONDS = self._retry
        self.steward.close()

    def test_says_hello_then_answers_requests(self):
        connection, stream = self.steward.accept()
        with connection:
            hello = receive(stream)
            self.assertEqual({k: hello[k] for k in ("type", "version", "token")}, {"type": "hello", "version": 1, "token": "tok"})
            self.assertIsInstance(hello["pid"], int)
            connection.sendall(b"not json\n" + b'{"id":"x"}\n' + b'{"id":1,"method":"stats"}\n')
            self.assertEqual(receive(stream), {"id": 1, "result": {"count": 1}})
            connection.sendall(b'{"id":2,"method":"logs"}\n{"id":3,"method":"nope"}\n')
            self.assertEqual(receive(stream), {"id": 2, "error": "boom"})
            self.assertEqual(receive(stream), {"id": 3, "error": "unknown method"})
        self.assertEqual(self.log[:2], ["Try to connect...", "Connected with Steward server"])

    def test_reconnects_after_the_connection_drops(self):
        first, first_stream = self.steward.accept()
        receive(first_stream)
        first_stream.close()  # the file holds the socket open until it is closed too
        first.close()
        second, second_stream = self.steward.accept()
        with second:
            self.assertEqual(receive(second_stream)["type"], "hello")
        self.assertEqual(self.log.count("Connected with Steward server"), 2)


if __name__ == "__main__":
    unittest.main()
