"""How a region's changes reach another region of a replica set (docs/design.md "Global tables").

A ``Link`` is the replicator's view of one target region: ``send`` a batch of changes of one table,
``put_replica_set`` (create the replica table if it is missing, or give it the set's new list of regions),
``drop_replica``. A region of this same server (another namespace of the same store) is reached through a
``LocalLink``; a region served by another dynastore through global_tables/peers.py's ``RemoteLink``, plugged in
by ``LinkFactory`` for the configured peers (``Config.peers``).

``LinkDown``: the region cannot be reached, refused the call, or a transaction there holds an item of the batch
(global_tables/apply.py ``HeldByTransaction``); the replicator keeps its cursor and retries
with backoff, so the region catches up once it is back. ``ChangeRefused`` (global_tables/changes.py): the region
answered, and will not take a change (or the batch): the replicator gives up on it after a bounded number of
attempts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from dynastore.engine.context import Context
from dynastore.global_tables import apply, replicas
from dynastore.global_tables.changes import ChangeRefused, ReplicatedChange
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.model.table_schema import DELETING

__all__ = ["ContextFactory", "Link", "LinkDown", "LinkFactory", "LocalLink", "RemoteLinkMaker"]

# The context of a call by the replication service in the namespace (account, region) of this server.
ContextFactory = Callable[[str, str], Context]
# A link to a region served by another dynastore: (region, its URL) -> the link (global_tables/peers.py).
RemoteLinkMaker = Callable[[str, str], "Link"]


class LinkDown(Exception):
    """A region could not be reached or refused a call: retried later."""


class Link(Protocol):
    """One target region, as the replicator ships to it."""

    @property
    def region(self) -> str: ...

    async def send(self, account: str, table: str, changes: list[ReplicatedChange]) -> None:
        """Apply ``changes`` of ``table`` (of ``account``) in the region, last writer wins. Raises LinkDown, or
        ChangeRefused when the region refused a change (or the batch) and applied none of them."""
        ...

    async def put_replica_set(self, account: str, definition: dict[str, Any]) -> None:
        """Create the replica table in the region if it is missing, from ``definition``
        (``replicas.replica_set_definition``), else give it the set's regions as ``definition`` lists them.
        Idempotent. Raises LinkDown."""
        ...

    async def drop_replica(self, account: str, table: str) -> None:
        """Delete the replica table of ``table`` in the region (nothing if it has none). Raises LinkDown."""
        ...


class LocalLink:
    """A region of this same server: the changes are applied in its namespace directly."""

    def __init__(self, context_of: ContextFactory, region: str, clock: HybridClock | None = None) -> None:
        self._context_of = context_of
        self._region = region
        self._clock = clock  # this server's hybrid clock, told the stamps applied

    @property
    def region(self) -> str:
        return self._region

    async def send(self, account: str, table: str, changes: list[ReplicatedChange]) -> None:
        ctx = self._context_of(account, self._region)
        td = ctx.catalog.find(table)
        if td is None or td.status == DELETING:
            raise ChangeRefused(f"no replica of {table} in {self._region}", None)
        try:
            apply.apply_changes(ctx, td, changes, self._clock)
        except apply.HeldByTransaction as e:
            raise LinkDown(f"{self._region}: {e}") from None

    async def put_replica_set(self, account: str, definition: dict[str, Any]) -> None:
        replicas.ensure_replica_table(self._context_of(account, self._region), definition)

    async def drop_replica(self, account: str, table: str) -> None:
        replicas.drop_replica_table(self._context_of(account, self._region), table)


class LinkFactory:
    """The link of each target region: a RemoteLink for a region configured as a peer (``peers``: region -> URL,
    ``remote`` makes it: global_tables/peers.py), a LocalLink for any other. Links are kept, one per region."""

    def __init__(
        self,
        context_of: ContextFactory,
        peers: dict[str, str] | None = None,
        remote: RemoteLinkMaker | None = None,
        clock: HybridClock | None = None,
    ) -> None:
        self._context_of = context_of
        self._clock = clock
        self.peers = dict(peers or {})
        self.remote = remote
        self._links: dict[str, Link] = {}

    def link(self, region: str) -> Link:
        found = self._links.get(region)
        if found is None:
            found = self._make(region)
            self._links[region] = found
        return found

    def _make(self, region: str) -> Link:
        url = self.peers.get(region)
        if url is not None:
            if self.remote is None:
                raise LinkDown(f"region {region} is a peer, and no link to peers is available")
            return self.remote(region, url)
        return LocalLink(self._context_of, region, self._clock)
