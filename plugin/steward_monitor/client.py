"""The connection to Steward: a daemon thread that registers the instance and answers requests.

Wire format (docs/monitoring-protocol.md): JSON, one UTF-8 message per `\n`-terminated line, at most
1 MiB a line. Everything here runs on the client's own thread, never on the rendering path.
"""

import json
import os
import socket
import threading
import time

MAX_LINE = 1024 * 1024
RETRY_SECONDS = 5
PROTOCOL_VERSION = 1


def read_lines(stream):
    """Yields complete lines; an oversized line is skipped without being held in memory."""
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line.endswith(b"\n"):
            if len(line) <= MAX_LINE:
                return  # end of stream (possibly mid-line)
            _skip_rest_of_line(stream)
            continue
        yield line


def _skip_rest_of_line(stream):
    while True:
        chunk = stream.readline(MAX_LINE)
        if not chunk or chunk.endswith(b"\n"):
            return


def parse_addresses(hosts, port):
    """`host[:port]` entries of a comma-separated STEWARD_HOST, each without a port taking `port`."""
    addresses = []
    for entry in hosts.split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, separator, own_port = entry.rpartition(":")
        if separator and own_port.isdigit() and "]" not in own_port:
            addresses.append((host.strip("[]"), int(own_port)))
        elif port is not None:
            addresses.append((entry.strip("[]"), port))
    return addresses


def encode(message):
    return (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")


class StewardClient(threading.Thread):
    """Connects to one of `addresses` ((host, port) pairs of Steward processes) and serves `handlers`.

    After a connection is lost (or when none of them answers) it waits 5 seconds, then tries the
    addresses in turn, starting after the one last connected to: when its Steward process dies the
    instance registers with another one.

    Each handler takes the request's `params` object ({} when the request has none).
    `on_connected` is called each time a connection is made, before any request is served.
    `warn` (`log` when not given) takes what an operator should see at QGIS Server's default log
    level: a lost connection, an error.
    `qgis_version` (Qgis.QGIS_VERSION) goes in the hello: Steward learns from it which QGIS
    Server it administers.
    """

    def __init__(self, addresses, token, handlers, log, on_connected=lambda: None, qgis_version="", warn=None):
        super().__init__(name="steward-monitor", daemon=True)
        self._addresses = list(addresses)
        self._token = token
        self._handlers = handlers
        self._log = log
        self._warn = warn or log
        self._on_connected = on_connected
        self._qgis_version = qgis_version

    def run(self):
        last = -1
        while True:
            self._log("Try to connect...")
            connected = self._connect(last)
            if connected is None:
                time.sleep(RETRY_SECONDS)
                continue
            last, sock = connected
            self._log("Connected with Steward server")
            self._on_connected()
            self._serve(sock)
            self._warn("Connection with Steward server lost")
            time.sleep(RETRY_SECONDS)

    def _connect(self, last):
        """(index, socket) of the first address after `last` that accepts a connection, else None."""
        count = len(self._addresses)
        for step in range(1, count + 1):
            index = (last + step) % count
            try:
                return index, socket.create_connection(self._addresses[index], timeout=RETRY_SECONDS)
            except OSError:
                continue
        return None

    def _serve(self, sock):
        try:
            sock.settimeout(None)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            sock.sendall(encode(self._hello()))
            with sock.makefile("rb") as stream:
                for line in read_lines(stream):
                    reply = self._answer(line)
                    if reply is not None:
                        sock.sendall(reply)
        except OSError:
            pass
        except Exception as error:  # keep the thread alive: it reconnects after any failure
            self._warn("Steward monitor error: {!r}".format(error))
        finally:
            sock.close()

    def _hello(self):
        return {
            "type": "hello",
            "version": PROTOCOL_VERSION,
            "token": self._token,
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
            "qgis_version": self._qgis_version,
        }

    def _answer(self, line):
        try:
            request = json.loads(line)
        except ValueError:
            return None
        if not isinstance(request, dict) or not isinstance(request.get("id"), int):
            return None
        handler = self._handlers.get(request.get("method"))
        if handler is None:
            return encode({"id": request["id"], "error": "unknown method"})
        params = request.get("params", {})
        if not isinstance(params, dict):
            return encode({"id": request["id"], "error": "params must be an object"})
        try:
            reply = encode({"id": request["id"], "result": handler(params)})
        except Exception as error:  # report it to Steward rather than killing the thread
            return encode({"id": request["id"], "error": str(error) or type(error).__name__})
        if len(reply) > MAX_LINE:
            return encode({"id": request["id"], "error": "reply larger than 1 MiB"})
        return reply
