"""The plugin's own messages (connection, failures), from whichever thread has something to say.

A message is recorded at once in the log buffer Steward reads, and queued for QGIS's message log,
which it reaches from the main thread at its next safe point (`flush`): QGIS Server's logger
formats the local time, which reads the environment, and under FastCGI only the main thread may.
Failures are logged with their traceback, at most once a minute for each place they happen, the
others counted. Stdlib only, so it is unit-tested without QGIS.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from collections.abc import Callable

FAILURE_INTERVAL_SECONDS = 60.0
MAX_QUEUED = 1000  # messages waiting for the main thread; the oldest leave QGIS's log first

# (message, is_warning): what a message needs to be recorded or written to QGIS's log.
Record = Callable[[str, bool], None]


class PluginLog:
    """`record` keeps a message in the log buffer (any thread); `emit` writes it to QGIS's
    message log (main thread only); `ring` tells the main thread there is work at its next safe
    point (SafePoint.ring)."""

    def __init__(
        self,
        record: Record,
        emit: Record,
        ring: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._record = record
        self._emit = emit
        self._ring = ring
        self._clock = clock
        self._outbox: deque[tuple[str, bool]] = deque(maxlen=MAX_QUEUED)
        self._lock = threading.Lock()
        # Where a failure happened -> (when one was last logged, how many were not logged since).
        self._failures: dict[str, tuple[float, int]] = {}

    def info(self, message: str) -> None:
        self._add(message, False)

    def warning(self, message: str) -> None:
        """What an operator should see at QGIS Server's default log level (1, warnings)."""
        self._add(message, True)

    def failure(self, where: str) -> None:
        """Logs the exception being handled (call it in an `except` block) with its traceback."""
        now = self._clock()
        with self._lock:
            last, skipped = self._failures.get(where, (None, 0))
            if last is not None and now - last < FAILURE_INTERVAL_SECONDS:
                self._failures[where] = (last, skipped + 1)
                return
            self._failures[where] = (now, 0)
        since = " ({} more since the last one logged)".format(skipped) if skipped else ""
        self.warning("Steward monitor failure in {}{}:\n{}".format(where, since, traceback.format_exc().rstrip()))

    def _add(self, message: str, warning: bool) -> None:
        self._record(message, warning)
        self._outbox.append((message, warning))
        self._ring()

    def flush(self) -> None:
        """On the main thread: writes the queued messages to QGIS's message log."""
        while self._outbox:
            message, warning = self._outbox.popleft()
            self._emit(message, warning)
