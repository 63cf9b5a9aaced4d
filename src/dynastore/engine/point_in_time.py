"""A table as it was at an instant of its recovery period, read from the point-in-time archive
(engine/pitr_archive.py): the newest base at or before the instant plus the table's change log records replayed
up to it. Restores (RestoreTableToPointInTime) and exports to a past time or of a period read through here.

Every time is the server clock's (``ctx.clock``), as the change log's records carry it. The latest restorable
time is now: a change is in the log in the transaction that makes it (DynamoDB's trails by about five minutes).
"""

from __future__ import annotations

from collections.abc import Iterator

from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.engine.pitr_archive import DAY_SECONDS, archive_of
from dynastore.model.table_schema import TableDef
from dynastore.storage.itemcodec import decode_item

__all__ = ["items_at", "net_changes", "restorable_window"]

_READ_RECORDS = 1_000  # log records read per storage transaction while replaying


def restorable_window(ctx: Context, table: TableDef) -> tuple[float, float] | None:
    """(earliest, latest) instant ``table`` can be restored to: from when recovery was turned on, or the start
    of its recovery period, to now (never before what the archive still holds: a period made longer does not
    bring back what a shorter one trimmed). None while recovery is off, or until its first base is taken."""
    archive = archive_of(ctx)
    start = None if archive is None else archive.history_start(table.table_id)
    if table.pitr is None or archive is None or start is None or not archive.bases(table.table_id):
        return None
    now = ctx.clock.now()
    earliest = max(start, table.pitr.enabled_at, now - table.pitr.recovery_days * DAY_SECONDS)
    return earliest, max(earliest, now)


def items_at(ctx: Context, table: TableDef, instant: float) -> Iterator[bytes]:
    """The stored values of the items ``table`` held at ``instant`` (within its restorable window). Memory:
    the changes between the base and the instant, one entry per item changed; the base's items are streamed.

    The base is the newest one taken at or before ``instant``, its changes up to ``instant`` replayed onto it.
    Before the first base (recovery turned on, its first base not taken yet at that instant), the first base
    is read with the changes between ``instant`` and it undone: each item changed in between is as its first
    change there found it."""
    archive = archive_of(ctx)
    if archive is None:
        raise ValueError("no point-in-time archive")
    base = archive.base_at(table.table_id, instant)
    if base is not None:
        changed = _latest_values(ctx, table.table_id, base.seq, instant)
    else:
        bases, floor = archive.bases(table.table_id), archive.floor(table.table_id)
        if not bases or floor is None:
            raise ValueError(f"no base of table {table.name}")
        base = bases[0]
        changed = _earlier_values(ctx, table.table_id, floor, base.seq, instant)
    for value in archive.images.items(ctx, base):
        if not changed:
            yield value
            continue
        key = storage_key(table, decode_item(value))
        if key not in changed:
            yield value
            continue
        newer = changed.pop(key)
        if newer is not None:
            yield newer
    for remaining in changed.values():  # items created after the base
        if remaining is not None:
            yield remaining


def net_changes(ctx: Context, table: TableDef, start: float, end: float) -> Iterator[tuple[bytes | None, bytes | None]]:
    """Per item changed in (``start``, ``end``]: its stored value at ``start`` and at ``end`` (None when absent);
    an item whose value is the same at both ends is left out. ``start`` must be within the restorable window."""
    archive = archive_of(ctx)
    floor = None if archive is None else archive.floor(table.table_id)
    if archive is None or floor is None:
        return
    base = archive.base_at(table.table_id, start)  # every change after ``start`` comes after its position
    first: dict[bytes, bytes | None] = {}
    last: dict[bytes, bytes | None] = {}
    for record in _records(ctx, table.table_id, floor if base is None else base.seq, end):
        if record.at <= start:
            continue
        if record.key not in first:
            first[record.key] = record.old
        last[record.key] = record.new
    for key, before in first.items():
        after = last[key]
        if before != after:
            yield before, after


def _latest_values(ctx: Context, table_id: int, from_seq: int, instant: float) -> dict[bytes, bytes | None]:
    """Storage key -> stored value (None: deleted) of every item changed from log position ``from_seq`` up to
    ``instant``, as the last change left it."""
    changed: dict[bytes, bytes | None] = {}
    for record in _records(ctx, table_id, from_seq, instant):
        changed[record.key] = record.new
    return changed


def _earlier_values(
    ctx: Context, table_id: int, from_seq: int, before_seq: int, instant: float
) -> dict[bytes, bytes | None]:
    """Storage key -> stored value (None: absent) at ``instant`` of every item changed after ``instant`` by a
    record in [``from_seq``, ``before_seq``): the value its first such change replaced."""
    earlier: dict[bytes, bytes | None] = {}
    for record in _records(ctx, table_id, from_seq, float("inf"), before_seq):
        if record.at > instant and record.key not in earlier:
            earlier[record.key] = record.old
    return earlier


def _records(
    ctx: Context, table_id: int, from_seq: int, until: float, before_seq: int | None = None
) -> Iterator[_Record]:
    """The table's item changes (with images) from log position ``from_seq`` whose time is at most ``until``,
    in log order. The log is read to its end: its times follow the server clock, which a system clock may step
    back, so a later time does not prove that no earlier one follows."""
    after = from_seq - 1
    wanted = (table_id,)
    while True:
        records = ctx.changelog.read(after, _READ_RECORDS, wanted)
        for record in records:
            if before_seq is not None and record.seq >= before_seq:
                return
            if record.event and record.at <= until:
                yield _Record(record.key, record.at, record.old, record.new)
        if len(records) < _READ_RECORDS:
            return
        after = records[-1].seq


class _Record:
    __slots__ = ("key", "at", "old", "new")

    def __init__(self, key: bytes, at: float, old: bytes | None, new: bytes | None) -> None:
        self.key = key
        self.at = at
        self.old = old
        self.new = new
