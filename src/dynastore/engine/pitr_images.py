"""The point-in-time archive's bases as engine/snapshots.py takes them: internal snapshots (never listed as
backups: no backup record names them), each an image among the backup files, found again by its name."""

from __future__ import annotations

from collections.abc import Iterator

from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import Base
from dynastore.engine.snapshots import begin_snapshot, delete_snapshot, new_image_name
from dynastore.model.table_schema import TableDef

__all__ = ["SnapshotImages"]


class SnapshotImages:
    """``BaseImages`` (engine/pitr_archive.py) over engine/snapshots.py."""

    async def take(self, ctx: Context, table: TableDef) -> Base:
        # The image is fixed now; it is written yielding to the event loop between chunks.
        pending = begin_snapshot(ctx, table, f"pitr-{table.table_id}-{new_image_name(ctx.clock.now())}")
        snapshot = await pending.write()
        return Base(snapshot.name, snapshot.seq, snapshot.taken_at, snapshot.item_count, snapshot.size_bytes)

    def items(self, ctx: Context, base: Base) -> Iterator[bytes]:
        return ctx.recovery.files.items(base.ref)

    def drop(self, ctx: Context, base: Base) -> None:
        delete_snapshot(ctx, base.ref)
