"""Bounded capture of the instance's QgsMessageLog messages, with a line for each request served.

Steward runs QGIS Server at log level 1 (warnings) by default, where QGIS no longer logs each
request's parameters; the plugin's server filter records a line per request here instead, so that
the instance's logs still show what it served.
"""

import time
from collections import deque
from datetime import datetime

from qgis.core import Qgis

MAX_LINES = 1000
MAX_LINE_CHARS = 2000
REQUEST_TAG = "Steward"

_LEVELS = {
    Qgis.Info: "INFO",
    Qgis.Warning: "WARNING",
    Qgis.Critical: "CRITICAL",
    Qgis.Success: "SUCCESS",
}


def _request_message(served, status):
    service, request, project, _started, elapsed = served
    return "REQUEST:{} SERVICE:{} MAP:{} answered {} in {} ms".format(
        request, service, project, status, round(elapsed * 1000)
    )


def _message_recorder(append, now=time.time):
    def on_message(message, tag, level):
        append((now(), message, tag, level))

    return on_message


def _request_recorder(append, now=time.time, info=Qgis.Info):
    def on_request(served, status):
        """Records a request QGIS Server answered: `served` is RequestStats' record of it."""
        append((now(), (served, status), REQUEST_TAG, info))

    return on_request


def _format(entry):
    stamp, message, tag, level = entry
    if isinstance(message, tuple):  # a request's record, formatted here rather than while serving
        message = _request_message(*message)
    when = datetime.fromtimestamp(stamp).isoformat(timespec="seconds")
    return "{} {} [{}] {}".format(when, _LEVELS.get(level, "INFO"), tag or "-", message)[:MAX_LINE_CHARS]


class LogBuffer:
    """Ring buffer of log messages, newest last.

    Messages arrive from whichever thread logged them, rendering threads included, so taking one
    costs a clock reading and a deque append, which CPython makes atomic: no lock, no formatting.
    The socket thread formats the lines when Steward asks for them.

    `on_message` (QgsMessageLog's messageReceived slot) and `on_request` are plain functions with
    what they touch bound in: PyQt calls a slot that is a bound method through a weak reference to
    its object, making the method anew for each message.
    """

    def __init__(self, max_lines=MAX_LINES):
        self._entries = deque(maxlen=max_lines)
        self.on_message = _message_recorder(self._entries.append)
        self.on_request = _request_recorder(self._entries.append)

    def lines(self):
        while True:
            try:
                entries = list(self._entries)
                break
            except RuntimeError:  # appended to while copied: copy again
                continue
        return [_format(entry) for entry in entries]
