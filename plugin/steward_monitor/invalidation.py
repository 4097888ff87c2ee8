"""Projects Steward changed, to drop from QGIS Server's project cache before the next request.

QGIS Server 3.22 re-reads a .qgs file that changes on disk, but keeps a project stored in
PostgreSQL (MAP=postgresql:?...) cached until it restarts. Steward sends `invalidate` with the MAP
value after each write or removal; the socket thread only queues it here, and the server filter drains the
queue in requestReady(), on the thread that loads projects, before the request's project is loaded.
Writes made while the instance was not connected are not announced to it, so on each connection
every database project it has served is queued too. Stdlib only, so it is unit-tested without QGIS.
"""

import threading


class PendingInvalidations:
    """A set of MAP values shared by the socket thread (adds) and the request thread (drains)."""

    def __init__(self, on_removed=lambda _map: None):
        # Always the same set, so that the request thread can test it without a call.
        self.queued = set()
        self._lock = threading.Lock()
        self._on_removed = on_removed

    def request(self, params):
        """The `invalidate` handler: queues params["map"] and answers at once."""
        value = params.get("map") if isinstance(params, dict) else None
        if not isinstance(value, str) or not value:
            raise ValueError("invalidate needs params.map, a non-empty string")
        self.queue([value])
        return True

    def queue(self, maps):
        with self._lock:
            self.queued.update(maps)

    def discard(self, value):
        with self._lock:
            self.queued.discard(value)

    def take(self):
        """Empties the queue and returns what it held."""
        if not self.queued:  # unlocked fast path
            return set()
        with self._lock:
            maps = set(self.queued)
            self.queued.clear()
        return maps

    def apply(self, server_iface):
        """Removes every queued project from the config cache; returns the MAP values that failed."""
        failed = []
        for value in self.take():
            try:
                server_iface.removeConfigCacheEntry(value)
                self._on_removed(value)
            except Exception:  # one bad entry must not keep the others cached
                failed.append(value)
        return failed
