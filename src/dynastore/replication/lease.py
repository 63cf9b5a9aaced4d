"""A node's etcd lease: the write lease a leader holds its leader key by (docs/cluster.md "Leases").

The node refreshes its lease every ``KEEPALIVE_INTERVAL``; a refresh sent at ``t`` guarantees the lease lives until
``t + LEASE_TTL`` at least, so the node takes itself as leader only until ``t + LEASE_TTL - LEASE_MARGIN``
(``valid_until``). When the lease is gone (expired, or not heard of for longer than it lives) the node is told
(``on_lapsed``) and a new lease is taken.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from dynastore.replication import etcd_client
from dynastore.replication.etcd_client import EtcdClient, EtcdUnavailable

__all__ = ["KEEPALIVE_INTERVAL", "LEASE_MARGIN", "LEASE_TTL", "Lease"]

LEASE_TTL = 3  # seconds: how long after its last refresh a silent node keeps the write lease
LEASE_MARGIN = 0.75  # seconds before its lease could lapse that a leader stops serving
KEEPALIVE_INTERVAL = 0.5
RETRY_AFTER = 0.3  # seconds between attempts to take a lease while etcd does not answer


class Lease:
    """The node's current etcd lease: ``lease_id`` (None while it has none) and ``valid_until`` (time.monotonic():
    until when the node may take itself as leader)."""

    def __init__(self, etcd: EtcdClient, on_lapsed: Callable[[str], None]) -> None:
        self._etcd = etcd
        self._on_lapsed = on_lapsed
        self.lease_id: int | None = None
        self.valid_until = 0.0
        self._let_lapse = False

    def held(self) -> bool:
        """Whether the node holds a lease it may campaign with now."""
        return self.lease_id is not None and time.monotonic() < self.valid_until

    def let_lapse(self) -> None:
        """Stop refreshing the current lease (a leader that could not resign: its leader key must go with the
        lease rather than name this node for as long as it runs); a new one is taken after it."""
        self._let_lapse = True

    async def keep(self) -> None:
        """Hold a lease for as long as the node runs: take one, refresh it on the etcd thread until it is gone,
        take another."""
        while True:
            try:
                sent = time.monotonic()
                lease_id = await self._etcd.run(lambda client: etcd_client.grant_lease(client, LEASE_TTL))
            except EtcdUnavailable:
                await asyncio.sleep(RETRY_AFTER)
                continue
            self.valid_until = sent + LEASE_TTL - LEASE_MARGIN
            self.lease_id = lease_id
            refreshing = self._etcd.keep_alive(lease_id, KEEPALIVE_INTERVAL, self._refreshed)
            try:
                await asyncio.wrap_future(refreshing)
            finally:
                refreshing.cancel()
            self.lease_id = None
            self._on_lapsed("its etcd lease expired")

    def _refreshed(self, sent: float, ttl: int | None) -> bool:
        """After a refresh (on the etcd thread): whether the lease lives on, and until when the node may lead."""
        if self._let_lapse:
            self._let_lapse = False
            return False
        if ttl is None:  # etcd did not answer: the lease lives as long as a refresh sent then could keep it
            return sent <= self.valid_until + LEASE_TTL
        if ttl <= 0:
            return False
        self.valid_until = sent + min(ttl, LEASE_TTL) - LEASE_MARGIN
        return True
