"""Bounded capture of the instance's QgsMessageLog messages."""

import threading
from collections import deque
from datetime import datetime

from qgis.core import Qgis

MAX_LINES = 1000
MAX_LINE_CHARS = 2000

_LEVELS = {
    Qgis.Info: "INFO",
    Qgis.Warning: "WARNING",
    Qgis.Critical: "CRITICAL",
    Qgis.Success: "SUCCESS",
}


class LogBuffer:
    """Ring buffer of formatted log lines, newest last.

    Messages arrive from whichever thread logged them (rendering threads included), so appends
    and snapshots share a lock; both are short and never wait on I/O.
    """

    def __init__(self, max_lines=MAX_LINES):
        self._lines = deque(maxlen=max_lines)
        self._lock = threading.Lock()

    def on_message(self, message, tag, level):
        stamp = datetime.now().isoformat(timespec="seconds")
        line = "{} {} [{}] {}".format(stamp, _LEVELS.get(level, "INFO"), tag or "-", message)
        with self._lock:
            self._lines.append(line[:MAX_LINE_CHARS])

    def lines(self):
        with self._lock:
            return list(self._lines)
