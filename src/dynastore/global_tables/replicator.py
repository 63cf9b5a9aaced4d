"""The replicator of global tables (docs/design.md "Global tables"): stamps every change of a global table with
its version, ships each region's own changes to the other regions of the set, seeds new replicas and carries
out the replica set's changes.

* As a change log consumer (engine/changelog.py ``Consumer``) it follows every table with replicas (KEYS_ONLY:
  which item changed, when) and holds the records some target has not acknowledged yet.
* As the log's ``Versioner`` it stamps, in the write's own transaction, the item's version: the hybrid clock's
  stamp, the table's region, whether the item was deleted. Replicated writes (origin ``REPLICATION``) are
  stamped by global_tables/apply.py with the incoming version instead.
* ``step`` (run by the host's background task, app.py) ships: per (source table, target region) a cursor (the
  newest change log sequence number acknowledged by the target); it reads the table's records after it, takes
  each changed key once, reads the current item and version in one read transaction, sends those whose
  version is this region's (every region ships its own changes to every other: a full mesh) through the
  target's link, and advances the cursor once the target acknowledged them. A region that cannot be reached
  (``LinkDown``) keeps its cursor and is retried with backoff: it catches up when it returns.
* Seeding a replica the API added (or a member joining a legacy global table, whose table exists already:
  api/legacy_global_tables.py): create its table (``put_replica_set``), tell the set's other regions,
  ship every item and tombstone of one consistent read transaction, start its cursor at the change log's
  position of that transaction, then mark it ACTIVE on every region of the set.
* Cursors are saved in one catalog record (``#consumer:global-tables``: {table ARN: {region: sequence}}) at most
  every ``CHECKPOINT_INTERVAL``: after a crash the changes since are shipped again (apply is idempotent).
* A change the target refuses (``ChangeRefused``: its key does not fit the replica, the write path there refuses
  it, the replica table is gone or being deleted) is tried again with the region's backoff up to
  ``REFUSED_ATTEMPTS`` times (a change that can never be applied: once), then skipped: counted, logged once with
  its key and the reason, and the changes after it flow. A region that cannot be reached is retried for ever.
* Settings every replica shares (global_tables/replicas.py ``synchronized_settings``: GSIs, billing mode, write
  capacity, on-demand and warm throughput, time to live): a change of them made in this region (UpdateTable,
  UpdateTimeToLive: the settings no longer match the digest noted with their version) is found by the round, given a
  new version (the hybrid clock's stamp, this region) and announced to every other region of the set with the table's
  definition (``put_replica_set``), which takes them if they are newer than its own (and notes their digest: a change
  taken from another region is not announced again).
* Metrics per (table, source region, target region): the replication latency (the origin's commit time to the
  target's acknowledgement), the records not yet acknowledged and the changes skipped (``view``).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Iterator
from typing import Any

import orjson

from dynastore.engine import keys
from dynastore.engine.changelog import KEYS_ONLY, NOT_FOLLOWED, REMOVE, ChangeRecord
from dynastore.engine.context import Context
from dynastore.errors import DynamoError
from dynastore.global_tables import replicas, versions
from dynastore.global_tables.apply import REPLICATION
from dynastore.global_tables.changes import ChangeRefused, ReplicatedChange
from dynastore.global_tables.hybrid_clock import HybridClock, stamp_wall_ms
from dynastore.global_tables.links import LinkDown, LinkFactory, RemoteLinkMaker
from dynastore.global_tables.versions import Version
from dynastore.model.namespace import Namespace, Origin
from dynastore.model.table_schema import ACTIVE, CREATING, DELETING, UPDATING, ReplicaDef, TableDef
from dynastore.model.values import Item
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item
from dynastore.storage.keycodec import decode_value
from dynastore.storage.kv import ReadTxn, WriteTxn

__all__ = ["BATCH_CHANGES", "CONSUMER_NAME", "GlobalReplicator", "PairMetrics", "links_for"]

log = logging.getLogger("dynastore.global_tables")

CONSUMER_NAME = "global-tables"
READ_RECORDS = 2000  # change log records read per (table, target) per step
BATCH_CHANGES = 200  # changes per send
CHECKPOINT_INTERVAL = 0.5  # seconds between two saves of the cursors (monotonic time)
# Seconds a round waits for its regions' work (a shipment, a seeding, a removal). Work that takes longer (a region
# that does not answer, until its link's timeout) goes on in the background, and the next rounds serve the other
# regions meanwhile: one slow region never holds up the others.
ROUND_WAIT = 0.25
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 5.0  # seconds before retrying a region that could not be reached
LATENCIES_KEPT = 1000  # latencies kept per (table, target) for p50 / p99
TOMBSTONE_PURGE_KEYS = 1000  # versions examined per maintenance pass
# Times a change the target refuses is sent (with the region's backoff between: about 1.5 s in all) before it is
# skipped: a refusal that lifts quickly (a replica table that is being made again) is waited for.
REFUSED_ATTEMPTS = 5


class PairMetrics:
    """Replication from one table to one target region: latencies (seconds) and the records pending."""

    __slots__ = ("latencies", "last", "pending", "shipped", "skipped", "error")

    def __init__(self) -> None:
        self.latencies: collections.deque[float] = collections.deque(maxlen=LATENCIES_KEPT)
        self.last: float | None = None
        self.pending = 0
        self.shipped = 0
        self.skipped = 0  # changes the target refused, given up on
        self.error: str | None = None

    def acknowledged(self, lags: list[float]) -> None:
        if lags:
            self.latencies.extend(lags)
            self.last = lags[-1]
            self.shipped += len(lags)

    def percentile(self, fraction: float) -> float | None:
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def links_for(
    ctx: Context, peers: dict[str, str], clock: HybridClock, remote: RemoteLinkMaker | None = None
) -> LinkFactory:
    """The links of the server of ``ctx``: a LocalLink for a region of this server, ``remote(region, url)`` (a
    RemoteLink, global_tables/peers.py) for a region configured as a peer (``peers``: region -> URL)."""

    def context_of(account: str, region: str) -> Context:
        return ctx.engine.context(Namespace(account, region), REPLICATION)

    return LinkFactory(context_of, peers, remote, clock)


class GlobalReplicator:
    """A change log ``Consumer`` and ``Versioner`` (engine/changelog.py), and the background shipping (``step``).
    ``ctx``: the engine's context of the default namespace (background work walks every namespace's tables)."""

    def __init__(self, ctx: Context, links: LinkFactory, clock: HybridClock, tombstone_retention: float) -> None:
        self.name = CONSUMER_NAME
        self._ctx = ctx
        self.links = links
        self.clock = clock
        self.tombstone_retention = tombstone_retention
        self._regions: dict[int, str] = {}  # table id -> its namespace's region (what its stamps name)
        self._cursors: dict[str, dict[str, int]] = {}  # table ARN -> target region -> sequence acknowledged
        self._held: dict[int, int] = {}  # table id -> the lowest cursor of its targets (-1: a target has none)
        self._metrics: dict[tuple[str, str, str], PairMetrics] = {}  # (table ARN, source, target region)
        self._retry_at: dict[tuple[str, str], float] = {}  # (table ARN, target) -> when to try again
        self._backoff: dict[tuple[str, str], float] = {}
        self._working: dict[tuple[str, str], asyncio.Task[bool]] = {}  # (table ARN, target) -> its work under way
        # (table ARN, target) -> the change(s) the target refused last, and how many times in a row
        self._refused: dict[tuple[str, str], tuple[tuple[tuple[bytes, int], ...], int]] = {}
        self._settings_due: dict[str, set[str]] = {}  # table ARN -> the regions its new settings go to
        self._settings_seen: set[str] = set()  # table ARNs whose settings were announced since the start
        self._generation = -1
        self._tables: list[TableDef] = []  # the tables with replicas, as of catalog generation _generation
        self._saved_at = 0.0
        self._dirty = False
        self._purge_from: dict[int, bytes] = {}  # table id -> where the tombstone purge goes on
        self._load()

    # ---- Consumer --------------------------------------------------------------------------------------------
    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.consumer_record_key(self.name)

    def need(self, table: TableDef) -> int:
        return KEYS_ONLY if replicas.is_global(table) else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        lowest = self._held.get(record.table_id)
        return lowest is not None and record.seq > lowest

    # ---- Versioner -------------------------------------------------------------------------------------------
    def stamp(self, txn: WriteTxn, table: TableDef, key: bytes, event: int, origin: Origin | None) -> None:
        if origin is REPLICATION:
            return  # apply stores the incoming version
        versions.stamp(txn, key, self.clock.now(), self._region_of(table), event == REMOVE)

    def _region_of(self, table: TableDef) -> str:
        region = self._regions.get(table.table_id)
        if region is None:
            region = self._regions[table.table_id] = self._ctx.catalog.namespace_of_table(table).region
        return region

    # ---- cursors -------------------------------------------------------------------------------------------
    def _load(self) -> None:
        raw = self._ctx.changelog.load_checkpoint(self)
        if raw is None:
            return
        saved = orjson.loads(raw)
        self._cursors = {arn: {region: int(seq) for region, seq in targets.items()} for arn, targets in saved.items()}

    def save(self, force: bool = False) -> None:
        """Save the cursors if they moved (at most every CHECKPOINT_INTERVAL unless ``force``)."""
        now = time.monotonic()
        if not self._dirty or (not force and now - self._saved_at < CHECKPOINT_INTERVAL):
            return
        self._ctx.changelog.save_checkpoint(self, orjson.dumps(self._cursors))
        self._saved_at = now
        self._dirty = False

    def _set_cursor(self, arn: str, region: str, seq: int) -> None:
        self._cursors.setdefault(arn, {})[region] = seq
        self._dirty = True

    def _drop_cursor(self, arn: str, region: str | None = None) -> None:
        if region is None:
            self._cursors.pop(arn, None)
        else:
            self._cursors.get(arn, {}).pop(region, None)
        self._dirty = True

    # ---- the background round ------------------------------------------------------------------------------
    def _global_tables(self) -> list[TableDef]:
        """The tables with replicas, found again only when the catalog changed."""
        catalog = self._ctx.catalog
        if catalog.generation != self._generation:
            self._generation = catalog.generation
            self._tables = [td for td in catalog.every_table() if td.replicas]
        return self._tables

    @property
    def active(self) -> bool:
        """Whether any table has replicas, or left cursors behind (as of the last round)."""
        return bool(self._tables or self._cursors)

    async def step(self) -> bool:
        """One round: seeding, replica removals, shipping, forgotten tables; True when it moved something."""
        if not self._ctx.kv.writable:
            return False
        moved = False
        arns: set[str] = set()
        started: list[asyncio.Task[bool]] = []
        for td in self._global_tables():
            ctx = self._ctx.for_table(td)
            current = ctx.catalog.find(td.name)
            if current is None or current.table_id != td.table_id:
                continue
            arn = ctx.namespace.table_arn(td.name)
            arns.add(arn)
            started += self._step_table(ctx, current, arn)
        moved |= await self._finish_work(started)
        moved |= await self._forget_gone(arns)
        self._held = self._holding()
        self.save()
        return moved

    def _step_table(self, ctx: Context, td: TableDef, arn: str) -> list[asyncio.Task[bool]]:
        """Start the work due for each region of the table's set (none while that region's earlier work runs);
        the work started."""
        if td.status == DELETING:
            return []  # its deletion is announced once it is gone (``_forget_gone``)
        td = self._watch_settings(ctx, td, arn)
        listed = {r.region for r in td.replicas}
        for region in list(self._cursors.get(arn, {})):
            if region not in listed and (arn, region) not in self._working:
                self._drop_cursor(arn, region)  # no longer in the set
        started = []
        for replica in td.replicas:
            pair = (arn, replica.region)
            if pair not in self._working and self._due(*pair):
                task = self._working[pair] = asyncio.ensure_future(self._step_region(ctx, td, arn, replica))
                started.append(task)
        return started

    async def _step_region(self, ctx: Context, td: TableDef, arn: str, replica: ReplicaDef) -> bool:
        try:
            if replica.status == DELETING:
                moved = await self._remove(ctx, td, arn, replica.region)
            elif replica.region not in self._cursors.get(arn, {}):
                moved = await self._start(ctx, td, arn, replica.region, replica.status, replica.progress)
            else:
                moved = await self._send_settings(ctx, td, arn, replica.region)
                moved |= await self._ship(ctx, td, arn, replica.region)
        except LinkDown as e:
            self._failed(arn, ctx.namespace.region, replica.region, str(e))
            return False
        self._succeeded(arn, replica.region)
        return moved

    async def _finish_work(self, started: list[asyncio.Task[bool]]) -> bool:
        """Wait up to ``ROUND_WAIT`` for the work this round ``started`` (work of earlier rounds still running is
        not waited for again); whether the work that ended moved anything. An unexpected error of one region's
        work is raised once every ended work is accounted for."""
        if started:
            await asyncio.wait(started, timeout=ROUND_WAIT)
        moved = False
        failure: BaseException | None = None
        for pair, task in list(self._working.items()):
            if not task.done():
                continue
            del self._working[pair]
            if task.cancelled():
                continue  # its event loop ended (a host that stopped): done again next round
            error = task.exception()
            if error is not None:
                failure = failure or error
            else:
                moved |= task.result()
        if failure is not None:
            raise failure
        return moved

    async def cancel_work(self) -> None:
        """Stop the regions' work under way (the host stops); what it had not acknowledged is shipped again."""
        working, self._working = list(self._working.values()), {}
        for task in working:
            task.cancel()
        await asyncio.gather(*working, return_exceptions=True)

    def _due(self, arn: str, region: str) -> bool:
        at = self._retry_at.get((arn, region))
        return at is None or time.monotonic() >= at

    def _succeeded(self, arn: str, region: str) -> None:
        self._retry_at.pop((arn, region), None)
        self._backoff.pop((arn, region), None)

    def _failed(self, arn: str, source: str, region: str, error: str) -> None:
        wait = min(BACKOFF_MAX, self._backoff.get((arn, region), BACKOFF_FIRST / 2) * 2)
        self._backoff[(arn, region)] = wait
        self._retry_at[(arn, region)] = time.monotonic() + wait
        self._pair(arn, source, region).error = error
        log.info("replication of %s to %s waits %.1f s: %s", arn, region, wait, error)

    def _pair(self, arn: str, source: str, target: str) -> PairMetrics:
        found = self._metrics.get((arn, source, target))
        if found is None:
            found = self._metrics[(arn, source, target)] = PairMetrics()
        return found

    def _holding(self) -> dict[int, int]:
        held: dict[int, int] = {}
        for td in self._tables:
            arn = self._ctx.catalog.owner(td).namespace.table_arn(td.name)
            cursors = self._cursors.get(arn, {})
            targets = [r.region for r in td.replicas if r.status != DELETING]
            if targets:
                held[td.table_id] = min(cursors.get(region, -1) for region in targets)
        return held

    # ---- synchronized settings ----------------------------------------------------------------------------
    def _watch_settings(self, ctx: Context, td: TableDef, arn: str) -> TableDef:
        """``td``, with a new settings version when its synchronized settings changed in this region (they are
        then due in every other region of its set); the settings of a table that just became global noted."""
        changed = replicas.changed_settings(td)
        if changed is None:
            return replicas.stamp_settings(ctx, td.name, None)
        if changed:
            td = replicas.stamp_settings(ctx, td.name, (self.clock.now(), ctx.namespace.region))
        elif arn in self._settings_seen or td.settings_version is None:
            return td
        # Changed, or first seen since this server started (an announcement it had not made before it stopped is
        # made again; a region that has the version already ignores it).
        self._settings_seen.add(arn)
        self._settings_due[arn] = {r.region for r in td.replicas if r.status != DELETING}
        return td

    async def _send_settings(self, ctx: Context, td: TableDef, arn: str, region: str) -> bool:
        """Give ``region`` the table's new synchronized settings if they are due there."""
        due = self._settings_due.get(arn)
        if not due or region not in due:
            return False
        definition = replicas.replica_set_definition(ctx, td, create=False)
        await self.links.link(region).put_replica_set(ctx.namespace.account_id, definition)
        due.discard(region)
        return True

    # ---- a new target: seeded (the region that added it) or followed from the log's start ----------------------
    async def _start(
        self, ctx: Context, td: TableDef, arn: str, region: str, status: str, progress: str | None
    ) -> bool:
        if status == CREATING and progress is not None:
            return await self._seed(ctx, td, arn, region)
        if status not in (CREATING, ACTIVE, UPDATING):
            return False  # CREATION_FAILED and the like: nothing ships there
        # A region this one learned of from another: every change of its own still in the log goes there
        # (idempotent), so no change made before it learned of the region is missed.
        self._set_cursor(arn, region, -1)
        return True

    async def _seed(self, ctx: Context, td: TableDef, arn: str, region: str) -> bool:
        account, link = ctx.namespace.account_id, self.links.link(region)
        # A legacy member joins with a table of its own: none is created for it.
        create = td.global_table_version != replicas.LEGACY_GLOBAL_TABLE_VERSION
        try:
            await link.put_replica_set(account, replicas.replica_set_definition(ctx, td, create=create))
        except DynamoError as e:
            replicas.set_replica_status(ctx, td.name, region, "CREATION_FAILED", None, e.message)
            return True
        await self._announce(ctx, td, exclude={region})
        position, snapshot = self._snapshot(ctx, td)
        for batch in _batches(snapshot, BATCH_CHANGES):
            await self._send(ctx, td, arn, region, batch)
        self._set_cursor(arn, region, position)
        settled = replicas.set_replica_status(ctx, td.name, region, ACTIVE)
        if settled is not None:
            await self._announce(ctx, settled, exclude=set())
        return True

    async def _announce(self, ctx: Context, td: TableDef, exclude: set[str]) -> None:
        """Give every region of ``td``'s set but ``exclude`` the set as ``td`` lists it (creating nothing)."""
        definition = replicas.replica_set_definition(ctx, td, create=False)
        for replica in td.replicas:
            if replica.region not in exclude and replica.status != DELETING:
                await self.links.link(replica.region).put_replica_set(ctx.namespace.account_id, definition)

    def _snapshot(self, ctx: Context, td: TableDef) -> tuple[int, list[ReplicatedChange]]:
        """Every item and tombstone of ``td`` with its version, and the change log's position, in one read
        transaction (items without a version: written before the table was global, the oldest version)."""
        own = ctx.namespace.region
        now = ctx.clock.now()
        out: list[ReplicatedChange] = []
        with ctx.kv.read() as txn:
            position = ctx.changelog.next_seq - 1
            prefix = keyspace.table_prefix(td.table_id)
            for key, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix)):
                item = decode_item(raw)
                version = versions.read(txn, key) or Version(0, own, False)
                out.append(ReplicatedChange(keys.key_attributes(td, item), item, version, now))
            for key, version in _tombstones(txn, td.table_id):
                out.append(ReplicatedChange(_key_of(td, key), None, version, now))
        return position, out

    # ---- removal -------------------------------------------------------------------------------------------
    async def _remove(self, ctx: Context, td: TableDef, arn: str, region: str) -> bool:
        await self.links.link(region).drop_replica(ctx.namespace.account_id, td.name)
        self._drop_cursor(arn, region)
        self._metrics.pop((arn, ctx.namespace.region, region), None)
        remaining = replicas.forget_replica(ctx, td.name, region)
        if remaining is not None:
            await self._announce(ctx, remaining, exclude=set())
        return True

    async def _forget_gone(self, arns: set[str]) -> bool:
        """Tables with cursors that are gone (deleted): the other regions of their sets drop them from their
        lists."""
        moved = False
        for arn in [a for a in self._cursors if a not in arns]:
            account, region, name = _parse_arn(arn)
            try:
                for target in self._cursors[arn]:
                    notice = replicas.removal_notice(name, region)
                    await self.links.link(target).put_replica_set(account, notice)
            except LinkDown as e:
                log.info("the deletion of %s is announced later: %s", arn, e)
                continue
            self._drop_cursor(arn)
            self._settings_due.pop(arn, None)
            self._settings_seen.discard(arn)
            moved = True
        return moved

    # ---- shipping ------------------------------------------------------------------------------------------
    async def _ship(self, ctx: Context, td: TableDef, arn: str, region: str) -> bool:
        cursor = self._cursors[arn][region]
        changelog = ctx.changelog
        records = changelog.read(cursor, READ_RECORDS, (td.table_id,))
        end = records[-1].seq if len(records) >= READ_RECORDS else changelog.next_seq - 1
        pair = self._pair(arn, ctx.namespace.region, region)
        if not records:
            pair.pending = 0
            if end > cursor:
                self._set_cursor(arn, region, end)
            return False
        pair.pending = len(records)
        changes, lags_from = self._changes(ctx, td, records)
        for batch in _batches(changes, BATCH_CHANGES):
            await self._send(ctx, td, arn, region, batch)
        now = ctx.clock.now()
        pair.acknowledged([max(0.0, now - at) for at in lags_from])
        pair.pending = 0
        pair.error = None
        self._set_cursor(arn, region, end)
        return True

    async def _send(self, ctx: Context, td: TableDef, arn: str, region: str, batch: list[ReplicatedChange]) -> None:
        """Send ``batch`` to the region; the changes it refuses are sent again in later rounds (LinkDown, with the
        region's backoff) until they were refused REFUSED_ATTEMPTS times in a row, then skipped."""
        link = self.links.link(region)
        while batch:
            try:
                await link.send(ctx.namespace.account_id, td.name, batch)
            except ChangeRefused as e:
                refused = batch if e.index is None or not 0 <= e.index < len(batch) else [batch[e.index]]
                attempts = self._count_refusal(arn, region, refused, e.final)
                if attempts < REFUSED_ATTEMPTS:
                    raise LinkDown(f"{region} refused a change ({attempts} of {REFUSED_ATTEMPTS}): {e.reason}") from e
                self._skip(ctx, arn, region, refused, e.reason)
                batch = [change for change in batch if all(change is not r for r in refused)]
                continue
            self._refused.pop((arn, region), None)
            return

    def _count_refusal(self, arn: str, region: str, refused: list[ReplicatedChange], final: bool) -> int:
        """How many times in a row the region refused these changes (REFUSED_ATTEMPTS when they never can be
        applied)."""
        if final:
            return REFUSED_ATTEMPTS
        which = tuple(
            (orjson.dumps(change.key, option=orjson.OPT_SORT_KEYS), change.version.stamp) for change in refused
        )
        last, times = self._refused.get((arn, region), ((), 0))
        times = times + 1 if last == which else 1
        self._refused[(arn, region)] = (which, times)
        return times

    def _skip(self, ctx: Context, arn: str, region: str, refused: list[ReplicatedChange], reason: str) -> None:
        self._refused.pop((arn, region), None)
        self._pair(arn, ctx.namespace.region, region).skipped += len(refused)
        more = f" and {len(refused) - 1} other changes" if len(refused) > 1 else ""
        log.warning(
            "replication of %s to %s skips the change of the item %s%s: %s", arn, region, refused[0].key, more, reason
        )

    def _changes(
        self, ctx: Context, td: TableDef, records: list[ChangeRecord]
    ) -> tuple[list[ReplicatedChange], list[float]]:
        """The current state of each key the records changed, for those whose version is this region's (the
        changes made here), and the commit times of their records (for the latency)."""
        own = ctx.namespace.region
        newest: dict[bytes, float] = {}
        for record in records:
            newest[record.key] = record.at
        out: list[ReplicatedChange] = []
        shipped: set[bytes] = set()
        with ctx.kv.read() as txn:
            for key, at in newest.items():
                version = versions.read(txn, key)
                raw = txn.get(key)
                if version is None:
                    version = Version(0, own, raw is None)
                if version.region != own:
                    continue  # a change replicated here: its own region ships it
                item = None if raw is None or version.deleted else decode_item(raw)
                out.append(ReplicatedChange(_key_of(td, key), item, version, at))
                shipped.add(key)
        return out, [record.at for record in records if record.key in shipped]

    # ---- tombstones ----------------------------------------------------------------------------------------
    def purge_tombstones(self, max_keys: int = TOMBSTONE_PURGE_KEYS) -> int:
        """Delete tombstones older than the retention (of items still deleted), up to ``max_keys`` versions
        examined per call, table by table; returns how many were deleted."""
        cutoff_ms = int((self._ctx.clock.now() - self.tombstone_retention) * 1000)
        purged = examined = 0
        for td in self._global_tables():
            if examined >= max_keys:
                break
            start = self._purge_from.get(td.table_id, keyspace.version_prefix(td.table_id))
            end = keyspace.prefix_end(keyspace.version_prefix(td.table_id))
            last = None
            with self._ctx.kv.write() as txn:
                for vkey, raw in txn.iter_range(start, end):
                    examined += 1
                    last = vkey
                    version = versions.decode(raw)
                    if version.deleted and stamp_wall_ms(version.stamp) < cutoff_ms:
                        item_key = keyspace.ITEM_TAG + vkey[1:]
                        if txn.get(item_key) is None:
                            txn.delete(vkey)
                            purged += 1
                    if examined >= max_keys:
                        break
            if last is None or examined < max_keys:
                self._purge_from.pop(td.table_id, None)  # the table is done: the next pass starts over
            else:
                self._purge_from[td.table_id] = last + b"\x00"
        return purged

    # ---- metrics -------------------------------------------------------------------------------------------
    def view(self) -> list[dict[str, Any]]:
        """Per (table ARN, source region, target region): the replication latency in milliseconds (last, p50,
        p99 of the last 1,000 changes acknowledged), the records not yet acknowledged, the changes shipped, the
        changes skipped (refused by the target) and the last error (None once a send succeeded)."""
        out: list[dict[str, Any]] = []
        for (arn, source, target), pair in sorted(self._metrics.items()):
            out.append(
                {
                    "table": arn,
                    "source": source,
                    "target": target,
                    "latency_ms": _ms(pair.last),
                    "latency_p50_ms": _ms(pair.percentile(0.5)),
                    "latency_p99_ms": _ms(pair.percentile(0.99)),
                    "pending": pair.pending,
                    "shipped": pair.shipped,
                    "skipped": pair.skipped,
                    "error": pair.error,
                }
            )
        return out


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _batches(changes: list[ReplicatedChange], size: int) -> Iterator[list[ReplicatedChange]]:
    for start in range(0, len(changes), size):
        yield changes[start : start + size]


def _key_of(td: TableDef, storage_key: bytes) -> Item:
    """The key attributes of the item at ``storage_key`` (or of its version's key: the same after the tag)."""
    hash_key, range_key = td.key_schema.hash_key, td.key_schema.range_key
    payload, offset = decode_value(hash_key.type, storage_key, keyspace.KEY_HEAD_BYTES)
    key: Item = {hash_key.name: {hash_key.type: payload}}
    if range_key is not None:
        key[range_key.name] = {range_key.type: decode_value(range_key.type, storage_key, offset)[0]}
    return key


def _tombstones(txn: ReadTxn, table_id: int) -> Iterator[tuple[bytes, Version]]:
    prefix = keyspace.version_prefix(table_id)
    for vkey, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix)):
        version = versions.decode(raw)
        if version.deleted:
            yield vkey, version


def _parse_arn(arn: str) -> tuple[str, str, str]:
    """(account, region, table name) of a table ARN."""
    parts = arn.split(":", 5)
    return parts[4], parts[3], parts[5].split("/", 1)[1]
