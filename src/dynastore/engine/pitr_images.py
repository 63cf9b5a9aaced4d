"""The point-in-time archive's bases as engine/snapshots.py takes them: internal snapshots (never listed as
backups: no backup record names them), each an image among the backup files, found again by its name."""

from __future__ import annotations

from collections.abc import Iterator

from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import Base
from dynastore.engine.snapshots import delete_snapshot, new_image_name, take_snapshot
from dynastore.model.table_schema import TableDef

__all__ = ["SnapshotImages"]


class SnapshotImages:
    """``BaseImages`` (engine/pitr_archive.py) over engine/snapshots.py."""

    async def take(self, ctx: Context, table: TableDef) -> Base:
        snapshot = await take_snapshot(ctx, table.name, f"pitr-{table.table_id}-{new_image_name(ctx.clock.now())}")
        return Base(snapshot.name, snapshot.seq, snapshot.taken_at, snapshot.item_count, snapshot.size_bytes)

    def items(self, ctx: Context, base: Base) -> Iterator[bytes]:
        return ctx.recovery.files.items(base.ref)

    def drop(self, ctx: Context, base: Base) -> None:
        delete_snapshot(ctx, base.ref)
