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
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from dynastore.engine.context import Context
from dynastore.engine.recovery_state import Progress
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.backup_files import BackupFiles, ImageWriter
from dynastore.storage.image_copier import READY
from dynastore.storage.kv import ReadTxn, StorageUnavailableError

__all__ = [
    "SNAPSHOT_CHUNK_ITEMS",
    "PendingSnapshot",
    "Snapshot",
    "begin_snapshot",
    "delete_snapshot",
    "new_image_name",
    "take_snapshot",
    "take_snapshot_async",
]

SNAPSHOT_CHUNK_ITEMS = 2000  # items read between two turns of the event loop (requests are served in between)
COPIER_START_SECONDS = 60.0  # how long the file may be held while the image copier starts


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
    """A name no other image has, formed as a backup ARN ends: the time in milliseconds (14 digits, as
    DynamoDB writes it) and 8 random hex digits."""
    return f"{int(now * 1000):014d}-{os.urandom(4).hex()}"


class PendingSnapshot:
    """A snapshot begun (``begin_snapshot``: its image of the store is fixed) and not yet written: ``write``
    writes it, yielding to the event loop between chunks. On the durable store the image is LMDB's file as it was
    when the snapshot began, copied by a process of its own (storage/image_copier.py) so that the server's
    requests do not wait for it: the file is held (commits stay out of it) only until that process has begun its
    read transaction, and ``begin_snapshot`` waits for that before it returns, so no hold outlives the call and
    every other snapshot or read of the file sees every commit. Otherwise (the in-memory store) the image is a
    snapshot transaction read on the event loop, a chunk at a time."""

    def __init__(self, ctx: Context, table: TableDef, name: str | None) -> None:
        self._ctx = ctx
        self.table = table
        self._copier: subprocess.Popen[bytes] | None = None
        self._txn_scope: AbstractContextManager[ReadTxn] | None = None
        self._txn: ReadTxn | None = None
        self.seq = ctx.changelog.next_seq  # read with the image: no commit can come between the two
        self.taken_at = ctx.clock.now()
        self.name = name or new_image_name(self.taken_at)
        held = ctx.kv.held_file()
        if held is not None and ctx.recovery.files.root is not None and held.hold_file():
            try:
                self._copier = self._start_copier(held.path, ctx.recovery.files.root)
            finally:
                held.release_file()
        else:
            self._open_txn()

    def _open_txn(self) -> None:
        self._txn_scope = self._ctx.kv.snapshot()
        self._txn = self._txn_scope.__enter__()

    def _start_copier(self, data_dir: str, root: Path) -> subprocess.Popen[bytes]:
        """Start the image copier and wait until its read transaction is open (the image is then fixed). The
        event loop waits the copier's start-up (a fraction of a second): a hold of the file that outlived this
        call would keep later commits out of every image and export begun meanwhile."""
        prefix = keyspace.table_prefix(self.table.table_id)
        copier = subprocess.Popen(
            [sys.executable, "-m", "dynastore.storage.image_copier", data_dir, str(root), self.name, prefix.hex()],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert copier.stdin is not None and copier.stdout is not None
        try:
            copier.stdin.write(orjson.dumps(self._header()))
            copier.stdin.close()
            ready, _, _ = select.select([copier.stdout], [], [], COPIER_START_SECONDS)
            line = copier.stdout.readline() if ready else b""
            if line.strip() != READY.encode():
                raise StorageUnavailableError(_failure_of(copier) or "the image copier did not start")
        except BaseException:
            _stop(copier)
            raise
        return copier

    def close(self) -> None:
        """End the snapshot without writing it (or after): its copier stopped, its transaction ended."""
        copier, self._copier = self._copier, None
        if copier is not None and copier.poll() is None:
            _stop(copier)
            self._ctx.recovery.files.delete_image(self.name)
        scope, self._txn_scope, self._txn = self._txn_scope, None, None
        if scope is not None:
            scope.__exit__(None, None, None)

    async def write(self, progress: Progress | None = None) -> Snapshot:
        """Write the image's items, then seal it. Raises ``StorageError`` (a full disk:
        ``StorageUnavailableError``), the image then removed. Closes the snapshot in any case."""
        if self._copier is not None:
            try:
                return await self._written_elsewhere(self._copier, progress)
            finally:
                self.close()
        try:
            writer = self._ctx.recovery.files.write_image(self.name, self._header())
            try:
                for read in self._copy(writer):
                    if progress is not None:
                        progress.done = read
                    await asyncio.sleep(0)
                writer.finish()
            except BaseException:
                writer.discard()
                raise
        finally:
            self.close()
        try:
            await asyncio.to_thread(writer.seal)
        except BaseException:
            writer.discard()
            raise
        return self._written(writer.item_count, writer.size_bytes, progress)

    async def _written_elsewhere(self, copier: subprocess.Popen[bytes], progress: Progress | None) -> Snapshot:
        """Follow the copier to its end: its progress lines, then ``done <items> <bytes>``."""
        assert copier.stdout is not None
        line = await asyncio.to_thread(copier.stdout.readline)
        while line.startswith(b"progress "):
            if progress is not None:
                progress.done = int(line.split()[1])
            line = await asyncio.to_thread(copier.stdout.readline)
        return self._copier_done(copier, line, progress)

    def write_now(self) -> Snapshot:
        """``write`` without yielding, in this process: the caller's thread is busy until the image is sealed."""
        if self._copier is not None:
            copier = self._copier
            assert copier.stdout is not None
            try:
                line = copier.stdout.readline()
                while line.startswith(b"progress "):
                    line = copier.stdout.readline()
                return self._copier_done(copier, line, None)
            finally:
                self.close()
        try:
            writer = self._ctx.recovery.files.write_image(self.name, self._header())
            try:
                for _ in self._copy(writer):
                    pass
                writer.finish()
                writer.seal()
            except BaseException:
                writer.discard()
                raise
        finally:
            self.close()
        return self._written(writer.item_count, writer.size_bytes, None)

    def _copier_done(self, copier: subprocess.Popen[bytes], line: bytes, progress: Progress | None) -> Snapshot:
        status = copier.wait()
        failure = _failure_of(copier)
        if status != 0 or not line.startswith(b"done "):
            self._ctx.recovery.files.delete_image(self.name)
            raise StorageUnavailableError(failure or f"the image copier ended with status {copier.returncode}")
        _, items, size = line.split()
        return self._written(int(items), int(size), progress)

    def _header(self) -> dict[str, Any]:
        return {"table": self.table.to_record(), "seq": self.seq, "taken_at": self.taken_at}

    def _copy(self, writer: ImageWriter) -> Iterator[int]:
        """Add the table's stored items to ``writer``; yields the count so far after each chunk."""
        assert self._txn is not None
        prefix = keyspace.table_prefix(self.table.table_id)
        for read, (_, value) in enumerate(self._txn.iter_range(prefix, keyspace.prefix_end(prefix)), 1):
            writer.add(value)
            if read % SNAPSHOT_CHUNK_ITEMS == 0:
                yield read

    def _written(self, item_count: int, size_bytes: int, progress: Progress | None) -> Snapshot:
        if progress is not None:
            progress.done = item_count
        files = self._ctx.recovery.files
        return Snapshot(self.name, self.table, self.seq, self.taken_at, item_count, size_bytes, files)


def _failure_of(copier: subprocess.Popen[bytes]) -> str:
    """What the copier said on stderr once it has ended (empty while it runs)."""
    if copier.poll() is None or copier.stderr is None:
        return ""
    return copier.stderr.read().decode(errors="replace").strip()


def _stop(copier: subprocess.Popen[bytes]) -> None:
    if copier.poll() is None:
        copier.kill()
    copier.wait()


def begin_snapshot(ctx: Context, table: TableDef, name: str | None = None) -> PendingSnapshot:
    """Fix the image of ``table`` (as its definition says: a table being deleted still has its items until this
    call returns to the event loop) now, synchronously; ``write`` it afterwards. Raises ``StorageError``."""
    return PendingSnapshot(ctx, ctx.catalog.with_live_stats(table), name)


def take_snapshot(ctx: Context, table_name: str, name: str | None = None) -> Snapshot:
    """Image the table ``table_name`` (any status: the caller checks what its operation allows) under ``name``
    (default: a new one), all at once: the event loop waits until the image is sealed (background work that
    cannot wait uses ``begin_snapshot(...).write()``, which yields between chunks). Raises
    ResourceNotFoundException if there is no such table, ``StorageError`` (a full disk:
    ``StorageUnavailableError``) when the image cannot be written."""
    return begin_snapshot(ctx, ctx.catalog.get(table_name), name).write_now()


async def take_snapshot_async(
    ctx: Context, table_name: str, name: str | None = None, progress: Progress | None = None
) -> Snapshot:
    """``take_snapshot`` yielding to the event loop between chunks; ``progress`` counts the items written."""
    return await begin_snapshot(ctx, ctx.catalog.get(table_name), name).write(progress)


def delete_snapshot(ctx: Context, name: str) -> None:
    """Remove an image (its backup was deleted, or a newer snapshot replaced it)."""
    ctx.recovery.files.delete_image(name)
