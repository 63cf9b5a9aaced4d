"""Snapshots: a consistent image of one table, taken without stopping writes (docs/backups.md).

``take_snapshot`` reads the table's items through ONE snapshot transaction of the store (``KV.snapshot``: an
image of every commit so far that later commits do not change), so the image is the table exactly as it was at
one instant, whatever writes run meanwhile. It yields to the event loop between chunks, so requests go on being
served while it reads, and writes the items through storage/backup_files.py, sealed before it returns. The
change-log position it was taken at (``seq``) says which changes it holds: every record with a smaller sequence
number, none from ``seq`` on, which is what a point-in-time restore replays from.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from dynastore.engine.context import Context
from dynastore.engine.recovery_state import Progress
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.backup_files import BackupFiles

__all__ = ["SNAPSHOT_CHUNK_ITEMS", "Snapshot", "delete_snapshot", "new_image_name", "take_snapshot"]

SNAPSHOT_CHUNK_ITEMS = 2000  # items read between two turns of the event loop (requests are served in between)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A sealed image of ``table`` holding every change-log record before ``seq`` and none from ``seq`` on."""

    name: str  # the image's name among the backup files
    table: TableDef  # the table's definition when the image was taken (its item statistics included)
    seq: int
    taken_at: float  # server clock
    item_count: int
    size_bytes: int  # the items' DynamoDB sizes added up
    files: BackupFiles = field(compare=False, repr=False)

    def items(self) -> Iterator[bytes]:
        """The image's stored item values (itemcodec), streamed from its file."""
        return self.files.items(self.name)


def new_image_name(now: float) -> str:
    """A name no other image has: the time in milliseconds and 8 random hex digits (as a backup ARN ends)."""
    return f"{int(now * 1000):013d}-{os.urandom(4).hex()}"


async def take_snapshot(
    ctx: Context, table_name: str, name: str | None = None, progress: Progress | None = None
) -> Snapshot:
    """Image the table ``table_name`` (any status but gone: the caller checks what its operation allows) under
    ``name`` (default: a new one); ``progress`` counts the items read. Raises ``StorageError`` (a full disk:
    ``StorageUnavailableError``), the image then removed; ResourceNotFoundException if the table is gone."""
    table = ctx.catalog.with_live_stats(ctx.catalog.get(table_name))
    files = ctx.recovery.files
    with ctx.kv.snapshot() as txn:
        seq = ctx.changelog.next_seq  # read with the image: no commit can come between the two
        taken_at = ctx.clock.now()
        name = name or new_image_name(taken_at)
        writer = files.write_image(name, {"table": table.to_record(), "seq": seq, "taken_at": taken_at})
        try:
            prefix = keyspace.table_prefix(table.table_id)
            for read, (_, value) in enumerate(txn.iter_range(prefix, keyspace.prefix_end(prefix)), 1):
                writer.add(value)
                if read % SNAPSHOT_CHUNK_ITEMS == 0:
                    if progress is not None:
                        progress.done = read
                    await asyncio.sleep(0)
            writer.finish()
        except BaseException:
            writer.discard()
            raise
    try:
        await asyncio.to_thread(writer.seal)  # the blocking fsync, off the event loop
    except BaseException:
        writer.discard()
        raise
    if progress is not None:
        progress.done = writer.item_count
    return Snapshot(name, table, seq, taken_at, writer.item_count, writer.size_bytes, files)


def delete_snapshot(ctx: Context, name: str) -> None:
    """Remove an image (its backup was deleted, or a newer snapshot replaced it)."""
    ctx.recovery.files.delete_image(name)
