"""Global tables with multi-region strong consistency (MultiRegionConsistency STRONG; docs/global-tables.md
"Multi-Region strong consistency"): the writes of a replica set are committed to one strong log
(global_tables/strong_log.py) before they are acknowledged, and a strongly consistent read in any region sees
every write acknowledged before it.

With a strong log (``--strong-etcd``: etcd members spanning the regions), ``write`` runs a write of an item in
four steps, the item held by this server meanwhile (one write of an item at a time per server):

1. read the item's newest record in the log and apply it to the local replica if the replica is behind;
2. evaluate the write against the local item (engine/writes.py ``dry_run``: the condition, the new item),
   admitted under the capacity model as every write is;
3. commit the new state (a change with a new version: the hybrid clock's stamp past the record's) to the log,
   on condition that the record read in 1 is still the newest. A write committed from another region in between
   fails the commit: ReplicatedWriteConflictException, nothing written. A log that does not answer: 503
   (ServiceUnavailable; the write may or may not have been committed);
4. apply the change to the local replica (global_tables/apply.py: last writer wins, so the follower applying it
   as well changes nothing) and answer.

Every region follows the log (``follow``, run by the host's background task): it applies the records committed
since the revision it has applied. ``catch_up`` does the same before a strongly consistent read, so the read
sees every write the log acknowledged before it (a linearizable read of the log, then a local read).

Without a strong log every region of the set is served by this server (regions of one server, each a namespace of
the same store): a write runs through the write path as any write does, serialized with every other request of
the server, and ``spread`` applies its result to the other regions' replicas in the same turn, before the answer
is sent; conflicts cannot happen, and every read sees the newest write. The replicator of global tables
(global_tables/replicator.py) also ships the changes of these tables as it does for any global table: the same
versions, so a change already applied is dropped; it repairs a replica a crash left behind.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TypeVar

from dynastore import messages
from dynastore.engine import keys, writes
from dynastore.engine.capacity import admission
from dynastore.engine.context import Context
from dynastore.errors import ReplicatedWriteConflictException, ServiceUnavailable
from dynastore.global_tables import apply, versions
from dynastore.global_tables.changes import ReplicatedChange, change_from_bytes, change_to_bytes
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.global_tables.strong_log import StrongLog, StrongLogUnavailable, record_key
from dynastore.global_tables.versions import Version
from dynastore.model.namespace import Namespace
from dynastore.model.table_schema import DELETING, TableDef
from dynastore.model.values import Item
from dynastore.storage.itemcodec import decode_item

__all__ = ["StrongTables"]

log = logging.getLogger("dynastore.global_tables")

T = TypeVar("T")


@dataclasses.dataclass
class _ItemHold:
    """An item held by this server's writes of it: the asyncio lock and how many wait for it."""

    lock: asyncio.Lock
    users: int = 0


class StrongTables:
    """The writes and strongly consistent reads of MRSC tables, for every namespace of one server. ``log``: the
    strong log (None: every region of a set is served by this server); ``peers``: the regions served by other
    servers."""

    def __init__(self, clock: HybridClock, log: StrongLog | None = None, peers: frozenset[str] = frozenset()) -> None:
        self.clock = clock
        self.log = log
        self.peers = peers
        self._applied: dict[tuple[str, str, str], int] = {}  # (account, region, log id) -> revision applied
        self._holds: dict[tuple[str, bytes], _ItemHold] = {}  # (log id, record key) -> its hold

    @property
    def logged(self) -> bool:
        """Whether writes are committed to a strong log (else: regions of this server, ``spread``)."""
        return self.log is not None

    # ---- regions of one server --------------------------------------------------------------------------------
    def spread(self, ctx: Context, table: TableDef, key: Item) -> None:
        """After a write of ``table`` (of ``ctx``'s namespace) committed through the write path: apply the item's
        new state to the replicas of the set's other regions of this server."""
        item_key = keys.storage_key(table, key)
        with ctx.kv.read() as txn:
            version = versions.read(txn, item_key)
            raw = txn.get(item_key)
        if version is None:
            return  # nothing was written (a condition failed before the versioner ran)
        item = None if version.deleted or raw is None else decode_item(raw)
        change = ReplicatedChange(key, item, version, ctx.clock.now())
        for region in self._local_regions(table):
            other = ctx.engine.context(Namespace(ctx.namespace.account_id, region), apply.REPLICATION)
            replica = other.catalog.find(table.name)
            if replica is not None and replica.status != DELETING and replica.strong_log == table.strong_log:
                apply.apply_changes(other, replica, [change], self.clock)

    def _local_regions(self, table: TableDef) -> list[str]:
        return [r.region for r in table.replicas if r.status != DELETING and r.region not in self.peers]

    # ---- with a strong log ------------------------------------------------------------------------------------
    async def write(self, ctx: Context, table: TableDef, key: Item, plan: writes.Plan) -> writes.WriteResult:
        """Write one item of ``table`` through the strong log (the module's steps 1-4). Raises
        ConditionFailedError, ReplicatedWriteConflictException, ServiceUnavailable, or the capacity model's
        throttling error."""
        strong_log, log_id = self._log_of(table)
        record = record_key(key)
        item_key = keys.storage_key(table, key)
        async with self._held(log_id, record):
            revision, newest = await self._call(strong_log.read(log_id, record))
            if newest is not None:
                apply.apply_changes(ctx, table, [change_from_bytes(newest)], self.clock)
            ticket = admission.admit_write(ctx, table, item_key, plan.estimate_half_units, item=plan.admitted_item)
            try:
                evaluated = writes.dry_run(ctx, table, item_key, plan)
            except writes.ConditionFailedError as e:
                admission.settle_failed_write(ctx, ticket, e.old)
                raise
            new = evaluated.new
            version = Version(self.clock.now(), ctx.namespace.region, new is None)
            change = ReplicatedChange(key, new, version, ctx.clock.now())
            committed = await self._call(strong_log.commit(log_id, record, revision, change_to_bytes(change)))
            if committed is None:
                admission.settle_failed_write(ctx, ticket, evaluated.old)
                raise ReplicatedWriteConflictException()
            current = ctx.catalog.find(table.name) or table
            applied = apply.applied_writes(ctx, current, [change], self.clock)
        # The evaluated write, with the index effects of its application (the GSIs' units), if this call applied it
        # (else the follower did, and they are not known here).
        index = applied[0].index if applied else None
        result = writes.WriteResult(
            evaluated.existed,
            evaluated.old,
            evaluated.new,
            evaluated.old_size,
            evaluated.new_size,
            evaluated.updated_paths,
            index,
        )
        writes.settle(ctx, ticket, result)
        return result

    async def catch_up(self, ctx: Context, table: TableDef) -> int:
        """Apply to ``table`` (of ``ctx``'s namespace) every record committed to its strong log since the revision
        this replica has applied: afterwards it holds every write acknowledged before the call. Returns how many
        records were applied. Raises ServiceUnavailable when the log cannot be reached."""
        strong_log, log_id = self._log_of(table)
        place = (ctx.namespace.account_id, ctx.namespace.region, log_id)
        since = self._applied.get(place, 0)
        values, revision = await self._call(strong_log.changes_since(log_id, since))
        applied = 0
        if values:
            current = ctx.catalog.find(table.name)
            if current is None or current.strong_log != log_id:
                return 0  # the replica is gone (or was made again) meanwhile
            applied = apply.apply_changes(ctx, current, [change_from_bytes(v) for v in values], self.clock)
        if revision > self._applied.get(place, 0):
            self._applied[place] = revision
        return applied

    async def follow(self, ctx: Context) -> int:
        """One round of every region's following: catch up every MRSC replica of this server (``ctx``: any
        context of the engine). Returns how many records were applied; a log that cannot be reached is tried
        again next round."""
        if self.log is None:
            return 0
        applied = 0
        for table in ctx.catalog.every_table():
            if table.strong_log is None or table.status == DELETING:
                continue
            replica_ctx = ctx.engine.context(ctx.catalog.owner(table).namespace, apply.REPLICATION)
            try:
                applied += await self.catch_up(replica_ctx, table)
            except ServiceUnavailable:
                return applied
        return applied

    async def forget(self, log_id: str) -> None:
        """Drop a strong log whose replica set is gone."""
        if self.log is not None:
            await self._call(self.log.drop(log_id))

    def close(self) -> None:
        if self.log is not None:
            self.log.close()

    # ---- internals ----------------------------------------------------------------------------------------
    def _log_of(self, table: TableDef) -> tuple[StrongLog, str]:
        assert self.log is not None and table.strong_log is not None
        return self.log, table.strong_log

    @asynccontextmanager
    async def _held(self, log_id: str, record: bytes) -> AsyncIterator[None]:
        place = (log_id, record)
        hold = self._holds.get(place)
        if hold is None:
            hold = self._holds[place] = _ItemHold(asyncio.Lock())
        hold.users += 1
        try:
            async with hold.lock:
                yield
        finally:
            hold.users -= 1
            if not hold.users:
                del self._holds[place]

    @staticmethod
    async def _call(call: Awaitable[T]) -> T:
        try:
            return await call
        except StrongLogUnavailable as e:
            log.warning("strong log unavailable: %s", e)
            raise ServiceUnavailable(messages.STRONG_LOG_UNAVAILABLE) from None
