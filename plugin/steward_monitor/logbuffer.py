"""Bounded capture of the instance's QgsMessageLog messages."""

import time
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


def _format(entry):
    stamp, message, tag, level = entry
    when = datetime.fromtimestamp(stamp).isoformat(timespec="seconds")
    return "{} {} [{}] {}".format(when, _LEVELS.get(level, "INFO"), tag or "-", message)[:MAX_LINE_CHARS]


class LogBuffer:
    """Ring buffer of log messages, newest last.

    Messages arrive from whichever thread logged them, rendering threads included, so taking one
    costs a clock reading and a deque append, which CPython makes atomic: no lock, no formatting.
    The socket thread formats the lines when Steward asks for them.
    """

    def __init__(self, max_lines=MAX_LINES):
        self._entries = deque(maxlen=max_lines)

    def on_message(self, message, tag, level):
        self._entries.append((time.time(), message, tag, level))

    def lines(self):
        while True:
            try:
                entries = list(self._entries)
                break
            except RuntimeError:  # appended to while copied: copy again
                continue
        return [_format(entry) for entry in entries]
