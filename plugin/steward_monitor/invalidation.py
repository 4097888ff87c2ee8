"""Projects Steward changed, to drop from QGIS Server's project cache before the next request.

QGIS Server 3.22 re-reads a .qgs file that changes on disk, but keeps a project stored in
PostgreSQL (MAP=postgresql:?...) cached until it restarts. Steward sends `invalidate` with the MAP
value after each write or removal; the socket thread only queues it here, and the main thread
drops the queued projects at its next safe point (safepoint.py), at the latest when the next
request starts, before QGIS Server looks that request's project up. Writes made while the
instance was not connected are not announced to it, so on each connection every database project
it has served is queued too. Stdlib only, so it is unit-tested without QGIS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Protocol


class ConfigCache(Protocol):
    def removeConfigCacheEntry(self, path: str) -> None: ...  # noqa: N802 (QgsServerInterface API)


class PendingInvalidations:
    """A set of MAP values shared by the socket thread (adds) and the main thread (drains)."""

    def __init__(
        self, on_removed: Callable[[str], None] = lambda _map: None, ring: Callable[[], None] = lambda: None
    ) -> None:
        self.queued: set[str] = set()
        self._lock = threading.Lock()
        self._on_removed = on_removed
        self._ring = ring

    def request(self, params: object) -> bool:
        """The `invalidate` handler: queues params["map"] and answers at once."""
        value = params.get("map") if isinstance(params, dict) else None
        if not isinstance(value, str) or not value:
            raise ValueError("invalidate needs params.map, a non-empty string")
        self.queue([value])
        return True

    def queue(self, maps: Iterable[str]) -> None:
        with self._lock:
            self.queued.update(maps)
        self._ring()

    def discard(self, value: str) -> None:
        with self._lock:
            self.queued.discard(value)

    def take(self) -> set[str]:
        """Empties the queue and returns what it held."""
        if not self.queued:  # unlocked fast path
            return set()
        with self._lock:
            maps = set(self.queued)
            self.queued.clear()
        return maps

    def apply(self, server_iface: ConfigCache, failed: Callable[[str], None]) -> None:
        """Removes every queued project from the config cache; calls `failed` (in its `except`
        block, so that it can log the traceback) with each MAP value it could not remove."""
        for value in self.take():
            try:
                server_iface.removeConfigCacheEntry(value)
                self._on_removed(value)
            except Exception:  # one bad entry must not keep the others cached
                failed(value)
