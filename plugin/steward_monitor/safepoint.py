"""Work other threads leave for QGIS Server's main thread, done at its next safe point.

Under FastCGI (qgis_mapserv.fcgi) libfcgi points the process's `environ` at each request's
parameters and frees them once the request is answered, so any code that reads the environment
(QGIS, Qt, GDAL, glibc's resolver and time zone code) may only run on the main thread while it
serves a request, as QGIS Server's own code does. The socket thread therefore only queues what
needs QGIS (project drops and loads, log lines for QGIS's log) and rings; the main thread runs
the queue at its safe points: when a request starts (the server filter's requestReady, before
QGIS Server looks its project up) and, when QGIS Server runs Qt's event loop between requests
(qgis_mapserver does, qgis_mapserv.fcgi does not), from a timer while no request is being served.
Stdlib only, so it is unit-tested without QGIS.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable


class SafePoint:
    def __init__(self, on_failure: Callable[[str], None]) -> None:
        # The doorbell: not empty while work may wait. Always the same deque, so that the request
        # thread can test it without a call; producers queue their work first, then ring.
        self.pending: deque[None] = deque()
        self._drains: list[tuple[str, Callable[[], None]]] = []
        self._on_failure = on_failure

    def add_drain(self, name: str, drain: Callable[[], None]) -> None:
        """`drain` runs, on the main thread, the work of one kind queued so far."""
        self._drains.append((name, drain))

    def ring(self) -> None:
        self.pending.append(None)

    def run(self) -> None:
        """On the main thread: runs every drain, each whatever the others do."""
        self.pending.clear()
        for name, drain in self._drains:
            try:
                drain()
            except Exception:  # one failing kind of work must not hold the others back
                self._on_failure(name)
