"""WFS-T Transactions of the QGIS Server processes of one host take turns.

SQLite has one writer at a time, and GDAL opens its GeoPackage transactions with a plain BEGIN:
when two processes of the pool write one GeoPackage at once, the one that read before it wrote
gets "database is locked" at once, whatever busy timeout SQLite has (waiting could deadlock), and
its insert fails. Every process therefore takes an exclusive lock on one file of the host's
temporary folder while it serves a Transaction; readers take none. The kernel releases the lock
of a process that dies. Stdlib only, so it is unit-tested without QGIS.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Callable

# A turn that never comes (a transaction stuck elsewhere) is given up: the request then writes
# anyway, as it would without turns, with SQLite's busy timeout.
LONGEST_WAIT_S = 60.0
POLL_S = 0.005


def lock_path() -> str:
    """The lock file of this user's processes on this host (read at start-up: TMPDIR)."""
    return os.path.join(tempfile.gettempdir(), "steward-qgis-transactions-{}.lock".format(os.getuid()))


class WriteTurns:
    def __init__(self, path: str, on_failure: Callable[[str], None], longest_wait_s: float = LONGEST_WAIT_S) -> None:
        self._path = path
        self._on_failure = on_failure
        self._longest_wait_s = longest_wait_s
        self._fd: int | None = None
        self.holding = False

    def begin(self, request: str) -> None:
        """Waits for this process's turn when `request` (the REQUEST parameter) is a Transaction."""
        self.end()  # a request that never completed keeps no turn
        if request.lower() != "transaction":
            return
        try:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self.holding = self._wait(self._fd)
        except OSError:
            self._on_failure("the transaction turn ({})".format(self._path))

    def _wait(self, fd: int) -> bool:
        deadline = time.monotonic() + self._longest_wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    self._on_failure("the transaction turn (waited {:g} s)".format(self._longest_wait_s))
                    return False
                time.sleep(POLL_S)

    def end(self) -> None:
        """Gives the turn up, if this process holds it."""
        if self.holding and self._fd is not None:
            self.holding = False
            fcntl.flock(self._fd, fcntl.LOCK_UN)
