"""The connection to Steward: a daemon thread that registers the instance and answers requests.

Wire format (DESIGN.md section 5): JSON, one UTF-8 message per `\n`-terminated line, at most
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


def encode(message):
    return (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")


class StewardClient(threading.Thread):
    """Connects to host:port, retrying every 5 seconds, and serves `handlers` by method name.

    Each handler takes the request's `params` object ({} when the request has none).
    `on_connected` is called each time a connection is made, before any request is served.
    """

    def __init__(self, host, port, token, handlers, log, on_connected=lambda: None):
        super().__init__(name="steward-monitor", daemon=True)
        self._address = (host, port)
        self._token = token
        self._handlers = handlers
        self._log = log
        self._on_connected = on_connected

    def run(self):
        while True:
            self._log("Try to connect...")
            try:
                sock = socket.create_connection(self._address, timeout=RETRY_SECONDS)
            except OSError:
                time.sleep(RETRY_SECONDS)
                continue
            self._log("Connected with Steward server")
            self._on_connected()
            self._serve(sock)
            self._log("Connection with Steward server lost")
            time.sleep(RETRY_SECONDS)

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
            self._log("Steward monitor error: {!r}".format(error))
        finally:
            sock.close()

    def _hello(self):
        return {
            "type": "hello",
            "version": PROTOCOL_VERSION,
            "token": self._token,
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
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
