"""The point-in-time archive's bases as engine/snapshots.py takes them: internal snapshots (never listed as
backups), each an image of engine/snapshots.py's files, found again by its name."""

from __future__ import annotations

from collections.abc import Iterator

from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import Base
from dynastore.engine.snapshots import take_snapshot
from dynastore.model.table_schema import TableDef

__all__ = ["SnapshotImages"]


class SnapshotImages:
    """``BaseImages`` (engine/pitr_archive.py) over engine/snapshots.py."""

    def take(self, ctx: Context, table: TableDef) -> Base:
        snapshot = take_snapshot(ctx, table.name)
        return Base(snapshot.name, snapshot.seq, snapshot.taken_at, snapshot.item_count, snapshot.size_bytes)

    def items(self, ctx: Context, base: Base) -> Iterator[bytes]:
        return ctx.recovery.files.items(base.ref)

    def drop(self, ctx: Context, base: Base) -> None:
        ctx.recovery.files.delete_image(base.ref)
