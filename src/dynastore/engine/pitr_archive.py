"""The point-in-time archive: what a restore to any instant of a table's recovery period is built from
(docs/backups.md "Point-in-time recovery").

It is a change log consumer (engine/changelog.py ``Consumer``, registered by the composition root): it follows
every table with point-in-time recovery on, needs the stored old and new images of their changes, and holds each
record as long as a restore may replay it. Beside the log it keeps *bases*: consistent images of the table
(engine/snapshots.py) taken when recovery is turned on and again every ``BASE_INTERVAL_SECONDS`` of the
server clock, so a restore replays a bounded stretch of the log. A base holds every change with a sequence
number below its ``seq`` and none from it on; a restore to instant ``t`` reads the newest base taken at or before
``t`` and replays the table's records from its ``seq`` whose time is at most ``t`` (engine/point_in_time.py).

Trimming: the oldest base kept is the newest one taken at or before the start of the recovery period (now minus
the period), so every instant of the period has a base; older bases are dropped, and the table's records before
the oldest base's ``seq`` are no longer held (the log trims them in its own pass). A table whose recovery is
turned off, or which is deleted, loses its bases and records at the next pass.

The list of bases is the consumer's checkpoint record (``keyspace.consumer_record_key``), written after a base
is sealed and before an old one is dropped, so a crash leaves at worst an unlisted image (removed by
engine/snapshots.py's own start-up sweep), never a listed one that is gone. Everything here runs on the
event-loop thread (the maintenance loop and the operations); nothing runs on the write path, whose only cost for
a table with recovery on is the images in its log records (``need``: one comparison per table definition, cached
by the log).

Storage accounting (partitions view, metrics): the bytes of each base (as engine/snapshots.py measured them) and
of the table's records since its oldest base, counted as the maintenance passes read the new records (a pass
reads at most ``COUNT_RECORDS``), so the figure trails the log by a pass or two.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from dynastore.engine.changelog import IMAGES, NOT_FOLLOWED, ChangeLog, ChangeRecord
from dynastore.model.table_schema import ACTIVE, UPDATING, TableDef
from dynastore.storage import keyspace
from dynastore.storage.kv import KV

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
    """Where bases are written and read: engine/snapshots.py in a server (``SnapshotImages``), a stand-in in
    tests."""

    def take(self, ctx: Context, table: TableDef) -> Base:
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
        self._bases: dict[int, list[Base]] = {}  # table id -> its bases, oldest first
        self._enabling: set[int] = set()  # tables whose first base is being taken: all their records are held
        self._segment_bytes: dict[int, dict[int, int]] = {}  # table id -> base seq -> bytes of records after it
        self._counted_through = -1  # the newest log record counted
        self._load()

    # ---- the consumer -------------------------------------------------------------------------------------
    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.consumer_record_key(self.name)

    def need(self, table: TableDef) -> int:
        return IMAGES if table.pitr is not None else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        table_id = record.table_id
        if table_id in self._enabling:
            return True
        bases = self._bases.get(table_id)
        return bases is not None and record.seq >= bases[0].seq

    # ---- what restores read -------------------------------------------------------------------------------
    def bases(self, table_id: int) -> list[Base]:
        return list(self._bases.get(table_id, ()))

    def base_at(self, table_id: int, instant: float) -> Base | None:
        """The newest base taken at or before ``instant`` (None: none that old)."""
        bases = self._bases.get(table_id, [])
        i = bisect.bisect_right([b.taken_at for b in bases], instant)
        return bases[i - 1] if i else None

    def storage_bytes(self, table_id: int) -> tuple[int, int]:
        """(bytes of the table's bases, bytes of its records since the oldest base, as counted so far)."""
        bases = self._bases.get(table_id, [])
        return sum(b.size_bytes for b in bases), sum(self._segment_bytes.get(table_id, {}).values())

    def tables(self) -> list[int]:
        return list(self._bases)

    # ---- turning recovery on and off ----------------------------------------------------------------------
    def enable(self, ctx: Context, table: TableDef) -> Base:
        """Take the first base of ``table`` (recovery just turned on: its changes are logged from now on)."""
        self._drop_table(ctx, table.table_id)
        self._enabling.add(table.table_id)
        try:
            base = self.images.take(ctx, table)
            self._bases[table.table_id] = [base]
            self._save()
        finally:
            self._enabling.discard(table.table_id)
        return base

    def disable(self, ctx: Context, table_id: int) -> None:
        """Recovery turned off (or the table deleted): its bases go, its records are no longer held."""
        if table_id in self._bases:
            self._drop_table(ctx, table_id)
            self._save()

    # ---- the maintenance pass -----------------------------------------------------------------------------
    def maintain(self, ctx: Context, followed: dict[int, tuple[Context, TableDef]], now: float) -> None:
        """One pass: forget tables no longer followed, take a base where one is due (one per pass), drop bases
        older than needed, count new records. ``followed``: every table with recovery on, by id, with the
        context of its namespace."""
        for table_id in [t for t in self._bases if t not in followed]:
            self._drop_table(ctx, table_id)
        for table_id, (space, table) in followed.items():
            bases = self._bases.get(table_id)
            due = not bases or now - bases[-1].taken_at >= BASE_INTERVAL_SECONDS
            if due and table.status in (ACTIVE, UPDATING):
                self._bases.setdefault(table_id, []).append(self.images.take(space, table))
                self._save()
                break  # one base per pass: each reads a whole table
        for table_id, (_, table) in followed.items():
            assert table.pitr is not None
            self._trim_bases(ctx, table_id, now - table.pitr.recovery_days * DAY_SECONDS)
        self._count(ctx)

    def _trim_bases(self, ctx: Context, table_id: int, cutoff: float) -> None:
        """Drop the bases before the newest one taken at or before ``cutoff``."""
        bases = self._bases.get(table_id)
        if not bases:
            return
        keep_from = max(0, bisect.bisect_right([b.taken_at for b in bases], cutoff) - 1)
        if keep_from == 0:
            return
        dropped, self._bases[table_id] = bases[:keep_from], bases[keep_from:]
        segments = self._segment_bytes.get(table_id, {})
        for base in dropped:
            segments.pop(base.seq, None)
        self._save()  # listed no more before the images go
        for base in dropped:
            self.images.drop(ctx, base)

    def _count(self, ctx: Context) -> None:
        """Add the bytes of the records written since the last pass to their tables' figures."""
        if not self._bases:
            self._counted_through = ctx.changelog.next_seq - 1
            return
        records = ctx.changelog.read(self._counted_through, COUNT_RECORDS)
        for record in records:
            bases = self._bases.get(record.table_id)
            if bases and record.seq >= bases[0].seq:
                i = bisect.bisect_right([b.seq for b in bases], record.seq) - 1
                segments = self._segment_bytes.setdefault(record.table_id, {})
                segments[bases[i].seq] = segments.get(bases[i].seq, 0) + _record_bytes(record)
        if len(records) == COUNT_RECORDS:
            self._counted_through = records[-1].seq
        else:  # read to the end of the log
            self._counted_through = max(self._counted_through, ctx.changelog.next_seq - 1)

    # ---- persistence --------------------------------------------------------------------------------------
    def _drop_table(self, ctx: Context, table_id: int) -> None:
        bases = self._bases.pop(table_id, [])
        self._segment_bytes.pop(table_id, None)
        if bases:
            self._save()
        for base in bases:
            self.images.drop(ctx, base)

    def _load(self) -> None:
        with self._kv.read() as txn:
            raw = txn.get(self.checkpoint_key)
        if raw is None:
            return
        rec = orjson.loads(raw)
        for table_id, bases in rec.get("tables", {}).items():
            self._bases[int(table_id)] = [Base.from_record(b) for b in bases]
        # Counting starts again from the oldest record held.
        oldest = [bases[0].seq for bases in self._bases.values() if bases]
        self._counted_through = min(oldest) - 1 if oldest else -1

    def _save(self) -> None:
        rec = {"kind": "pitr", "tables": {str(t): [b.to_record() for b in bs] for t, bs in self._bases.items()}}
        with self._kv.write() as txn:
            txn.put(self.checkpoint_key, orjson.dumps(rec))


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
