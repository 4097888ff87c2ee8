"""The connection to Steward: a daemon thread that registers the instance and answers requests.

Wire format (docs/monitoring-protocol.md): JSON, one UTF-8 message per `\\n`-terminated line, at most
1 MiB a line. The thread runs pure Python only: under FastCGI libfcgi points the process's
`environ` at each request's parameters and frees them afterwards, so nothing here may call QGIS,
Qt or C code that reads the environment (getenv): Steward's names are resolved before the thread
starts, the handlers answer from what the main thread prepared, and the thread's log lines wait in
the plugin's log for the main thread (pluginlog.py). Stdlib only, so it is unit-tested without QGIS.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, Protocol

MAX_LINE = 1024 * 1024
RETRY_SECONDS = 5
PROTOCOL_VERSION = 1

# (family, address as connect() takes it, numeric only): what resolve_addresses gives.
Address = tuple[int, tuple[Any, ...]]
Handler = Callable[[dict[str, Any]], Any]


class Log(Protocol):
    def info(self, message: str) -> None: ...
    def warning(self, message: str) -> None: ...
    def failure(self, where: str) -> None: ...


def read_lines(stream: BinaryIO) -> Iterator[bytes]:
    """Yields complete lines; an oversized line is skipped without being held in memory."""
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line.endswith(b"\n"):
            if len(line) <= MAX_LINE:
                return  # end of stream (possibly mid-line)
            _skip_rest_of_line(stream)
            continue
        yield line


def _skip_rest_of_line(stream: BinaryIO) -> None:
    while True:
        chunk = stream.readline(MAX_LINE)
        if not chunk or chunk.endswith(b"\n"):
            return


def parse_addresses(hosts: str, port: int | None) -> list[tuple[str, int]]:
    """`host[:port]` entries of a comma-separated STEWARD_HOST, each without a port taking `port`."""
    addresses = []
    for text in hosts.split(","):
        entry = text.strip()
        if not entry:
            continue
        host, separator, own_port = entry.rpartition(":")
        if separator and own_port.isdigit() and "]" not in own_port:
            addresses.append((host.strip("[]"), int(own_port)))
        elif port is not None:
            addresses.append((entry.strip("[]"), port))
    return addresses


def resolve_addresses(entries: list[tuple[str, int]], log: Log) -> list[Address]:
    """The numeric addresses of `entries`, each name resolved once. Call it on the main thread at
    start: glibc's resolver reads the environment (RES_OPTIONS, LOCALDOMAIN, HOSTALIASES)."""
    addresses: list[Address] = []
    for host, port in entries:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            log.warning("Steward address {}:{} cannot be resolved, and is left out: {}".format(host, port, error))
            continue
        addresses.extend((family, sockaddr) for family, _type, _proto, _name, sockaddr in found)
    return addresses


def encode(message: object) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")


class StewardClient(threading.Thread):
    """Connects to one of `addresses` (resolve_addresses' numeric addresses of the Steward
    processes) and serves `handlers`.

    After a connection is lost (or when none of them answers) it waits 5 seconds, then tries the
    addresses in turn, starting after the one last connected to: when its Steward process dies the
    instance registers with another one.

    Each handler takes the request's `params` object ({} when the request has none); one that
    raises ValueError refuses the request, any other exception is a failure, logged with its
    traceback. `on_connected` is called each time a connection is made, before any request is
    served. `hello` holds the fields of the hello besides its type, version and token (hostname,
    pid, QGIS version), read at start.
    """

    def __init__(
        self,
        addresses: list[Address],
        token: str,
        handlers: dict[str, Handler],
        log: Log,
        on_connected: Callable[[], None] = lambda: None,
        hello: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(name="steward-monitor", daemon=True)
        self._addresses = list(addresses)
        self._token = token
        self._handlers = handlers
        self._log = log
        self._on_connected = on_connected
        self._hello = {"type": "hello", "version": PROTOCOL_VERSION, "token": token, **(hello or {})}

    def run(self) -> None:
        last = -1
        while True:
            self._log.info("Try to connect...")
            connected = self._connect(last)
            if connected is None:
                time.sleep(RETRY_SECONDS)
                continue
            last, sock = connected
            self._log.info("Connected with Steward server")
            try:
                self._on_connected()
            except Exception:  # the connection is still worth serving
                self._log.failure("the connection's start")
            self._serve(sock)
            time.sleep(RETRY_SECONDS)

    def _connect(self, last: int) -> tuple[int, socket.socket] | None:
        """(index, socket) of the first address after `last` that accepts a connection, else None."""
        count = len(self._addresses)
        for step in range(1, count + 1):
            index = (last + step) % count
            family, address = self._addresses[index]
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(RETRY_SECONDS)
                sock.connect(address)  # numeric: CPython parses it without the resolver
            except OSError:
                sock.close()
                continue
            return index, sock
        return None

    def _serve(self, sock: socket.socket) -> None:
        try:
            sock.settimeout(None)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            sock.sendall(encode(self._hello))
            with sock.makefile("rb") as stream:
                for line in read_lines(stream):
                    reply = self._answer(line)
                    if reply is not None:
                        sock.sendall(reply)
            self._log.warning("Connection with Steward server lost")
        except OSError as error:
            self._log.warning("Connection with Steward server lost: {}".format(error))
        except Exception:  # keep the thread alive: it reconnects after any failure
            self._log.failure("the connection with Steward")
        finally:
            sock.close()

    def _answer(self, line: bytes) -> bytes | None:
        """The reply to a request line; None for a line that is not a request."""
        request = _parse_request(line)
        if request is None:
            return None
        try:
            reply = encode({"id": request["id"], "result": self._result(request)})
        except ValueError as refusal:  # the request's own fault: Steward hears why
            return encode({"id": request["id"], "error": str(refusal) or type(refusal).__name__})
        except Exception as error:  # report it to Steward rather than killing the thread
            self._log.failure("the {} handler".format(request["method"]))
            return encode({"id": request["id"], "error": str(error) or type(error).__name__})
        if len(reply) > MAX_LINE:
            return encode({"id": request["id"], "error": "reply larger than 1 MiB"})
        return reply

    def _result(self, request: dict[str, Any]) -> object:
        method = request.get("method")
        handler = self._handlers.get(method) if isinstance(method, str) else None
        if handler is None:
            raise ValueError("unknown method")
        params = request.get("params", {})
        if not isinstance(params, dict):
            raise ValueError("params must be an object")
        return handler(params)


def _parse_request(line: bytes) -> dict[str, Any] | None:
    """The request a line holds: a JSON object with an integer id; None for anything else."""
    try:
        request = json.loads(line)
    except ValueError:
        return None
    return request if isinstance(request, dict) and isinstance(request.get("id"), int) else None
