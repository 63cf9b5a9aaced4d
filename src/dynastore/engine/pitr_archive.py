"""The point-in-time archive: what a restore to any instant of a table's recovery period is built from
(docs/backups.md "Point-in-time recovery").

It is a change log consumer (engine/changelog.py ``Consumer``, registered by the composition root): it follows
every table with point-in-time recovery on, needs the stored old and new images of their changes, and holds the
table's records from its *floor*: the log position where recovery was turned on, later the oldest base's. Beside
the log it keeps *bases*: consistent images of the table (engine/snapshots.py, internal images never listed as
backups) taken by the maintenance pass after recovery is turned on and again every ``BASE_INTERVAL_SECONDS`` of
the server clock, so a restore replays a bounded stretch of the log. A base holds every change with a sequence
number below its ``seq`` and none from it on (engine/point_in_time.py reads them).

Trimming: the oldest base kept is the newest one taken at or before the start of the recovery period (now minus
the period), so every instant of the period has a base; older bases are dropped and the floor moves up to the
oldest base left, so the log's trimming takes the records before it. A table whose recovery is turned off, or
which is deleted, loses its bases and records at once (or at the next pass).

The floors and the list of bases are the consumer's checkpoint record (``keyspace.consumer_record_key``),
written after a base is sealed and before an old one is dropped, so a crash leaves at worst an unlisted image,
never a listed one that is gone. Everything here runs on the event-loop thread (the maintenance loop, the
operations and the background task writing a base); nothing runs on the write path, whose only cost for a table
with recovery on is the images in its log records (``need``: asked once per table definition, cached by the
log).

Storage accounting (partitions view, metrics): the bytes of each base (as engine/snapshots.py measured them) and
of the table's records held, counted as the maintenance passes read the new records (a pass reads at most
``COUNT_RECORDS``), so the figure trails the log by a pass or two.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from dynastore.engine.changelog import IMAGES, NOT_FOLLOWED, ChangeLog, ChangeRecord
from dynastore.model.table_schema import ACTIVE, UPDATING, TableDef
from dynastore.storage import keyspace
from dynastore.storage.kv import KV, StorageError

if TYPE_CHECKING:
    from dynastore.engine.context import Context

__all__ = [
    "ARCHIVE_NAME",
    "BASE_INTERVAL_SECONDS",
    "COUNT_RECORDS",
    "DAY_SECONDS",
    "Base",
    "BaseImages",
    "PointInTimeArchive",
    "archive_in",
    "archive_of",
    "recovery_view",
]

log = logging.getLogger("dynastore")

ARCHIVE_NAME = "point-in-time"
DAY_SECONDS = 86_400.0
BASE_INTERVAL_SECONDS = DAY_SECONDS  # a new base once a day: a restore replays at most a day of changes
COUNT_RECORDS = 5_000  # records read per maintenance pass to count the archive's bytes
RECORD_OVERHEAD = 32  # bytes of a log record beside its key and images (head, lengths)


@dataclass(frozen=True, slots=True)
class Base:
    """One consistent image of a table, kept by the archive (``ref``: how engine/snapshots.py finds it)."""

    ref: str
    seq: int
    taken_at: float
    item_count: int
    size_bytes: int

    def to_record(self) -> list[Any]:
        return [self.ref, self.seq, self.taken_at, self.item_count, self.size_bytes]

    @classmethod
    def from_record(cls, rec: list[Any]) -> Base:
        ref, seq, taken_at, items, size = rec
        return cls(str(ref), int(seq), float(taken_at), int(items), int(size))


class BaseImages(Protocol):
    """Where bases are written and read: engine/snapshots.py in a server (engine/pitr_images.py), a stand-in in
    tests."""

    async def take(self, ctx: Context, table: TableDef) -> Base:
        """A consistent image of ``table``'s items now, sealed (durable) before it returns."""
        ...

    def items(self, ctx: Context, base: Base) -> Iterator[bytes]:
        """The stored values of the image's items."""
        ...

    def drop(self, ctx: Context, base: Base) -> None:
        """Remove the image (it may be gone already)."""
        ...


class PointInTimeArchive:
    """The change log consumer keeping every table's recovery period (see the module's docstring)."""

    def __init__(self, kv: KV, images: BaseImages) -> None:
        self.name = ARCHIVE_NAME
        self.images = images
        self._kv = kv
        # table id -> the lowest log position held (where recovery was turned on, then the oldest base's)
        self._floors: dict[int, int] = {}
        # table id -> the earliest instant its history reaches (when recovery was turned on, then its oldest base's)
        self._starts: dict[int, float] = {}
        self._bases: dict[int, list[Base]] = {}  # table id -> its bases, oldest first
        self._taking: set[int] = set()  # tables whose base is being taken now
        self._segment_bytes: dict[int, dict[int, int]] = {}  # table id -> floor or base seq -> bytes after it
        self._counted_through = -1  # the newest log record counted
        # What leaves the SYSTEM backup of a deleted table with recovery on (engine/backups.py, wired by app.py:
        # backups reach engine/tables.py, which calls ``table_deleted``, so this module cannot import them).
        self.system_backup: Callable[[Context, TableDef], object] | None = None
        self._load()

    # ---- the consumer -------------------------------------------------------------------------------------
    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.consumer_record_key(self.name)

    def need(self, table: TableDef) -> int:
        return IMAGES if table.pitr is not None else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        floor = self._floors.get(record.table_id)
        return floor is not None and record.seq >= floor

    # ---- what restores read -------------------------------------------------------------------------------
    def floor(self, table_id: int) -> int | None:
        """The lowest log position held for the table (None: the archive does not follow it)."""
        return self._floors.get(table_id)

    def history_start(self, table_id: int) -> float | None:
        """The earliest instant the table's history reaches (a longer period set later does not reach back past
        it: what was trimmed is gone)."""
        return self._starts.get(table_id)

    def bases(self, table_id: int) -> list[Base]:
        return list(self._bases.get(table_id, ()))

    def base_at(self, table_id: int, instant: float) -> Base | None:
        """The newest base taken at or before ``instant`` (None: none that old)."""
        bases = self._bases.get(table_id, [])
        i = bisect.bisect_right([b.taken_at for b in bases], instant)
        return bases[i - 1] if i else None

    def storage_bytes(self, table_id: int) -> tuple[int, int]:
        """(bytes of the table's bases, bytes of its records held, as counted so far)."""
        bases = self._bases.get(table_id, [])
        return sum(b.size_bytes for b in bases), sum(self._segment_bytes.get(table_id, {}).values())

    # ---- turning recovery on and off ----------------------------------------------------------------------
    def enable(self, ctx: Context, table: TableDef) -> None:
        """Recovery was just turned on for ``table`` (its changes are logged with images from now on): hold its
        records from here. Its first base is taken by the next maintenance pass; instants between now and that
        base are read from the base by undoing the records in between."""
        self._drop_table(ctx, table.table_id)
        self._floors[table.table_id] = ctx.changelog.next_seq
        self._starts[table.table_id] = ctx.clock.now() if table.pitr is None else table.pitr.enabled_at
        self._bases[table.table_id] = []
        self._save()

    def table_deleted(self, ctx: Context, table: TableDef) -> None:
        """``table``, with recovery on, was just deleted (its items are still in the store until this returns to
        the event loop): leave its SYSTEM backup (``system_backup``, set by the composition root to
        engine/backups.py's), then drop its recovery period."""
        if self.system_backup is not None:
            try:
                self.system_backup(ctx, table)
            except StorageError as e:
                log.error("the SYSTEM backup of deleted table %s could not be taken: %s", table.name, e)
        self.disable(ctx, table.table_id)

    def disable(self, ctx: Context, table_id: int) -> None:
        """Recovery turned off (or the table deleted): its bases go, its records are no longer held."""
        if table_id in self._floors:
            self._drop_table(ctx, table_id)

    # ---- the maintenance pass -----------------------------------------------------------------------------
    def maintain(
        self, ctx: Context, followed: dict[int, tuple[Context, TableDef]], now: float
    ) -> list[tuple[Context, TableDef]]:
        """One pass: forget tables no longer followed, drop bases older than needed, count new records.
        ``followed``: every table with recovery on, by id, with the context of its namespace. Returns the tables
        a base is due for (none yet, or the newest older than ``BASE_INTERVAL_SECONDS``), for ``take_base``."""
        for table_id in [t for t in self._floors if t not in followed]:
            self._drop_table(ctx, table_id)
        due = []
        for table_id, (space, table) in followed.items():
            if table_id not in self._floors:  # the caller restarts its history first (continuous_backups)
                continue
            assert table.pitr is not None
            self._trim_bases(ctx, table_id, now - table.pitr.recovery_days * DAY_SECONDS)
            bases = self._bases.get(table_id)
            stale = not bases or now - bases[-1].taken_at >= BASE_INTERVAL_SECONDS
            if stale and table_id not in self._taking and table.status in (ACTIVE, UPDATING):
                due.append((space, table))
        self._count(ctx)
        return due

    async def take_base(self, ctx: Context, table: TableDef) -> None:
        """Take a base of ``table`` and list it (dropped at once if recovery was turned off meanwhile)."""
        table_id = table.table_id
        if table_id in self._taking:
            return
        self._taking.add(table_id)
        try:
            base = await self.images.take(ctx, table)
            if table_id not in self._floors:  # turned off (or the table deleted) while the base was taken
                self.images.drop(ctx, base)
                return
            self._bases[table_id].append(base)
            self._save()
        finally:
            self._taking.discard(table_id)

    def _trim_bases(self, ctx: Context, table_id: int, cutoff: float) -> None:
        """Drop the bases before the newest one taken at or before ``cutoff``; the records before the oldest
        base left are held no more."""
        bases = self._bases.get(table_id)
        if not bases:
            return
        keep_from = max(0, bisect.bisect_right([b.taken_at for b in bases], cutoff) - 1)
        floor = self._floors[table_id]
        if keep_from == 0 and (floor == bases[0].seq or bases[0].taken_at > cutoff):
            return
        dropped, self._bases[table_id] = bases[:keep_from], bases[keep_from:]
        self._floors[table_id] = bases[keep_from].seq
        self._starts[table_id] = bases[keep_from].taken_at
        segments = self._segment_bytes.get(table_id, {})
        for seq in [s for s in segments if s < bases[keep_from].seq]:
            segments.pop(seq)
        self._save()  # listed no more before the images go
        for base in dropped:
            self.images.drop(ctx, base)

    def _count(self, ctx: Context) -> None:
        """Add the bytes of the records written since the last pass to their tables' figures."""
        if not self._floors:
            self._counted_through = ctx.changelog.next_seq - 1
            return
        records = ctx.changelog.read(self._counted_through, COUNT_RECORDS)
        for record in records:
            floor = self._floors.get(record.table_id)
            if floor is None or record.seq < floor:
                continue
            marks = [floor] + [b.seq for b in self._bases.get(record.table_id, ()) if b.seq > floor]
            mark = marks[bisect.bisect_right(marks, record.seq) - 1]
            segments = self._segment_bytes.setdefault(record.table_id, {})
            segments[mark] = segments.get(mark, 0) + _record_bytes(record)
        if len(records) == COUNT_RECORDS:
            self._counted_through = records[-1].seq
        else:  # read to the end of the log
            self._counted_through = max(self._counted_through, ctx.changelog.next_seq - 1)

    # ---- persistence --------------------------------------------------------------------------------------
    def _drop_table(self, ctx: Context, table_id: int) -> None:
        bases = self._bases.pop(table_id, [])
        known = self._floors.pop(table_id, None) is not None
        self._starts.pop(table_id, None)
        self._segment_bytes.pop(table_id, None)
        if known:
            self._save()
        for base in bases:
            self.images.drop(ctx, base)

    def _load(self) -> None:
        with self._kv.read() as txn:
            raw = txn.get(self.checkpoint_key)
        if raw is None:
            return
        rec = orjson.loads(raw)
        for table_id, kept in rec.get("tables", {}).items():
            self._floors[int(table_id)] = int(kept["floor"])
            self._starts[int(table_id)] = float(kept["start"])
            self._bases[int(table_id)] = [Base.from_record(b) for b in kept["bases"]]
        # Counting starts again from the oldest record held.
        self._counted_through = min(self._floors.values()) - 1 if self._floors else -1

    def _save(self) -> None:
        tables = {
            str(t): {"floor": floor, "start": self._starts[t], "bases": [b.to_record() for b in self._bases.get(t, [])]}
            for t, floor in self._floors.items()
        }
        with self._kv.write() as txn:
            txn.put(self.checkpoint_key, orjson.dumps({"kind": "pitr", "tables": tables}))


def _record_bytes(record: ChangeRecord) -> int:
    return (
        RECORD_OVERHEAD
        + len(record.key)
        + (0 if record.old is None else len(record.old))
        + (0 if record.new is None else len(record.new))
    )


def archive_of(ctx: Context) -> PointInTimeArchive | None:
    """The archive registered on ``ctx``'s change log (None: the host registered none)."""
    return archive_in(ctx.changelog)


def archive_in(changelog: ChangeLog) -> PointInTimeArchive | None:
    """The archive among ``changelog``'s consumers (None: none is registered)."""
    for consumer in changelog.consumers:
        if isinstance(consumer, PointInTimeArchive):
            return consumer
    return None


def recovery_view(archive: PointInTimeArchive | None, table: TableDef, now: float) -> dict[str, Any] | None:
    """What the partitions view and the metrics show of ``table``'s recovery period (None while it is off)."""
    if archive is None or table.pitr is None:
        return None
    bases = archive.bases(table.table_id)
    base_bytes, log_bytes = archive.storage_bytes(table.table_id)
    return {
        "recovery_days": table.pitr.recovery_days,
        "enabled_at": table.pitr.enabled_at,
        "bases": len(bases),
        "oldest_base_at": bases[0].taken_at if bases else None,
        "base_bytes": base_bytes,
        "log_bytes": log_bytes,
        "now": now,
    }
