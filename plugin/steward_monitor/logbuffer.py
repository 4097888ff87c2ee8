"""Bounded capture of the instance's QgsMessageLog messages, with a line for each request served.

Steward runs QGIS Server at log level 1 (warnings) by default, where QGIS no longer logs each
request's parameters; the plugin's server filter records a line per request here instead, so that
the instance's logs still show what it served.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

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

# (number, time, message or a request's record, tag, level)
Entry = tuple[int, float, Any, str, Any]


class LogPage(NamedTuple):
    """The lines after a reader's cursor, and the cursor to ask with next: the last line's number."""

    lines: list[str]
    next: int


def local_offset_seconds() -> int:
    """The local time's offset from UTC now. Reads the time zone (TZ): call it on the main thread."""
    return time.localtime().tm_gmtoff


def _request_message(served: tuple[str, str, str, float, float], status: int) -> str:
    service, request, project, _started, elapsed = served
    return "REQUEST:{} SERVICE:{} MAP:{} answered {} in {} ms".format(
        request, service, project, status, round(elapsed * 1000)
    )


def _stamp(seconds: float, offset: int) -> str:
    """`2026-11-26T15:02:11+01:00`: from gmtime and a fixed offset, never the time zone database
    (localtime reads TZ, which the socket thread must not)."""
    moment = time.gmtime(seconds + offset)
    sign, minutes = ("+" if offset >= 0 else "-"), abs(offset) // 60
    return "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{:02d}:{:02d}".format(
        moment.tm_year,
        moment.tm_mon,
        moment.tm_mday,
        moment.tm_hour,
        moment.tm_min,
        moment.tm_sec,
        sign,
        minutes // 60,
        minutes % 60,
    )


class LogBuffer:
    """Ring buffer of log messages, newest last.

    Messages arrive from whichever thread logged them, rendering threads included, so taking one
    costs a clock reading, the next number of a counter and a deque append, which CPython makes
    atomic: no lock, no formatting. The numbers let a reader ask only for the lines it has not read.
    The socket thread formats the lines when Steward asks for them, in the local time of the
    plugin's start (`offset`, seconds east of UTC), which each line states.

    `on_message` (QgsMessageLog's messageReceived slot) and `on_request` are plain functions with
    what they touch bound in: PyQt calls a slot that is a bound method through a weak reference to
    its object, making the method anew for each message.
    """

    def __init__(self, offset: int = 0, max_lines: int = MAX_LINES) -> None:
        self._offset = offset
        self._entries: deque[Entry] = deque(maxlen=max_lines)
        self._numbers = itertools.count(1)
        # The tag whose messages on_message ignores while the plugin writes its own, recorded already.
        self._muted: list[str | None] = [None]
        self.on_message = _message_recorder(self._entries.append, self._numbers, self._muted)
        self.on_request = _request_recorder(self._entries.append, self._numbers)

    def add(self, message: str, tag: str, level: Qgis.MessageLevel) -> None:
        self._entries.append((next(self._numbers), time.time(), message, tag, level))

    @contextmanager
    def muted(self, tag: str) -> Iterator[None]:
        """While it lasts, messages under `tag` that reach on_message are not recorded (again)."""
        self._muted[0] = tag
        try:
            yield
        finally:
            self._muted[0] = None

    def read(self, since: int = 0) -> LogPage:
        """The lines numbered after `since`; every line kept for a cursor past the last line."""
        while True:
            try:
                entries = list(self._entries)
                break
            except RuntimeError:  # appended to while copied: copy again
                continue
        last = entries[-1][0] if entries else 0
        after = 0 if since > last else since
        return LogPage([self._format(entry) for entry in entries if entry[0] > after], last)

    def _format(self, entry: Entry) -> str:
        _number, stamp, message, tag, level = entry
        if isinstance(message, tuple):  # a request's record, formatted here rather than while serving
            message = _request_message(*message)
        line = "{} {} [{}] {}".format(_stamp(stamp, self._offset), _LEVELS.get(level, "INFO"), tag or "-", message)
        return line[:MAX_LINE_CHARS]


def _message_recorder(
    append: Callable[[Entry], None],
    numbers: Iterator[int],
    muted: list[str | None],
    now: Callable[[], float] = time.time,
) -> Callable[[str, str, Qgis.MessageLevel], None]:
    def on_message(message: str, tag: str, level: Qgis.MessageLevel) -> None:
        if tag == muted[0]:
            return
        append((next(numbers), now(), message, tag, level))

    return on_message


def _request_recorder(
    append: Callable[[Entry], None],
    numbers: Iterator[int],
    now: Callable[[], float] = time.time,
    info: Qgis.MessageLevel = Qgis.Info,
) -> Callable[[tuple[str, str, str, float, float], int], None]:
    def on_request(served: tuple[str, str, str, float, float], status: int) -> None:
        """Records a request QGIS Server answered: `served` is RequestStats' record of it."""
        append((next(numbers), now(), (served, status), REQUEST_TAG, info))

    return on_request
