"""Bases for the point-in-time archive held in memory (engine/pitr_archive.py ``BaseImages``), for engine tests
that look at the archive's bookkeeping rather than at the image files: a base is the table's items read in one
storage read transaction, with the change log position of that transaction."""

from __future__ import annotations

from collections.abc import Iterator

from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import Base, archive_of
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.kv import StorageUnavailableError

__all__ = ["MemoryImages", "use_memory_images"]


class MemoryImages:
    def __init__(self) -> None:
        self.images: dict[str, list[bytes]] = {}
        self.taken = 0
        self.full = False  # a full disk: taking an image fails as engine/snapshots.py's does

    async def take(self, ctx: Context, table: TableDef) -> Base:
        if self.full:
            raise StorageUnavailableError("no space left on device")
        prefix = keyspace.table_prefix(table.table_id)
        with ctx.kv.read() as txn:
            values = [bytes(v) for _, v in txn.iter_range(prefix, keyspace.prefix_end(prefix))]
            seq = ctx.changelog.next_seq
        self.taken += 1
        name = f"base-{table.table_id}-{self.taken}"
        self.images[name] = values
        return Base(name, seq, ctx.clock.now(), len(values), sum(len(v) for v in values))

    def items(self, ctx: Context, base: Base) -> Iterator[bytes]:
        return iter(self.images[base.ref])

    def drop(self, ctx: Context, base: Base) -> None:
        self.images.pop(base.ref, None)


def use_memory_images(ctx: Context) -> MemoryImages:
    """Make ``ctx``'s archive keep its bases in memory; returns them."""
    archive = archive_of(ctx)
    assert archive is not None
    images = MemoryImages()
    archive.images = images
    return images
