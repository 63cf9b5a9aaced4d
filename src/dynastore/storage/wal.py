"""The write-ahead log's files: the segments and records of the local durable log (storage/local_log.py, the
embedded implementation of storage/durability.py's ``DurableLog``), which makes LMDB commits durable without
writing back their B-tree pages at each sync.

Why. Syncing LMDB itself writes back every 4 KB page a commit changed: a put with a random key dirties a leaf,
its branch pages and the free list, so a group commit of a few hundred puts writes megabytes at scattered
offsets. The log holds only what changed (each key and value once, a few hundred bytes a put), appended to one
file: a group commit's sync writes that, and LMDB's pages reach the disk later, at a checkpoint, in one pass
that shares every page the puts since the last checkpoint touched.

Records. Each sealed storage commit appends one record: ``<payload length:u32><crc32(payload):u32><payload>``,
the payload the sealed batch's operations (``0x01 klen:u32 vlen:u32 key value`` puts, ``0x02 klen:u32 key``
deletes) in the order they were made, as storage/durability.py encodes them. Operations carry whole keys and
values, so replaying a record is idempotent, and replaying every record from any point at or before the store's
own state, in order, ends in the state after the last record: recovery never needs to know exactly where the
store's last checkpoint was.

Segments. The log is a run of files ``<number>.wal`` in one directory, numbered upwards. When the newest one
passes ``CHECKPOINT_BYTES`` a new one is opened and the older ones are *retired*: once the store has synced
(everything they hold is then in its own file), they are deleted. A crash can leave retired segments behind;
they are replayed first, which is harmless (see above).

Positions. ``position()`` is (newest segment's number, its size): the end of the log. The store keeps the
position its last sync covered; after a failure ``truncate`` cuts the log back to it (a torn or unsynced tail
was never acknowledged) and ``operations_between`` reads the records the store's file does not hold yet.

Threads. Everything runs on the store's owner thread except ``sync``, which may run in a worker thread. A record
is covered by a ``sync`` (or a ``take_dirty`` whose files are then synced) that starts after its ``append``
returned.

Faults. Tests pass a ``FaultPoints`` that may raise at each file operation (``wal.append``, ``wal.sync``,
``wal.rotate``, ``wal.truncate``), so every failure path runs without a failing disk.
"""

from __future__ import annotations

import fcntl
import os
import struct
import threading
import zlib
from collections.abc import Iterator

from dynastore.storage.durability import (
    FaultPoints,
    Operation,
    Position,
    decode_batch,
    encode_delete,
    encode_put,
)
from dynastore.storage.kv import DurabilityError

__all__ = [
    "CHECKPOINT_BYTES",
    "DIRECTORY",
    "FaultPoints",
    "Operation",
    "Position",
    "WriteAheadLog",
    "encode_delete",
    "encode_put",
    "recorded_operations",
    "remove_segments",
    "segment_numbers",
    "sync_data",
]

CHECKPOINT_BYTES = 64 << 20  # a segment this large is retired and the store checkpointed
DIRECTORY = -1  # the number ``take_dirty`` gives the log's directory
SUFFIX = ".wal"
FILE_MODE = 0o600  # log segments: readable by the server's user only
DIRECTORY_MODE = 0o700

_HEADER = struct.Struct("<II")  # payload length, crc32 of the payload


def segment_numbers(directory: str) -> list[int]:
    """The numbers of the segments in ``directory``, oldest first (none if it does not exist)."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(int(n[: -len(SUFFIX)]) for n in names if n.endswith(SUFFIX) and n[: -len(SUFFIX)].isdigit())


def segment_path(directory: str, number: int) -> str:
    return os.path.join(directory, f"{number:016d}{SUFFIX}")


def recorded_operations(
    directory: str, numbers: list[int], start: Position = (0, 0), stop: Position | None = None
) -> Iterator[list[Operation]]:
    """The records of the given segments, oldest first, each as its operations, from ``start`` up to ``stop``
    (the whole of each segment by default). Stops at the first record that is torn or fails its checksum: that
    is a write that never finished, so neither it nor anything after it was ever acknowledged."""
    for number in numbers:
        if number < start[0] or (stop is not None and number > stop[0]):
            continue
        with open(segment_path(directory, number), "rb") as f:
            data = f.read()
        view = memoryview(data)
        pos = start[1] if number == start[0] else 0
        end = min(len(data), stop[1]) if stop is not None and number == stop[0] else len(data)
        while pos < end:
            if pos + _HEADER.size > end:
                return
            length, crc = _HEADER.unpack_from(view, pos)
            body = pos + _HEADER.size
            if length == 0 or body + length > end or zlib.crc32(view[body : body + length]) != crc:
                return
            yield decode_batch(view[body : body + length])
            pos = body + length


def remove_segments(directory: str, numbers: list[int]) -> None:
    """Delete segments whose records the store holds durably (after a replay), and make that durable."""
    for number in numbers:
        os.unlink(segment_path(directory, number))
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Segment:
    __slots__ = ("number", "path", "fd", "size", "dirty")

    def __init__(self, directory: str, number: int, existing: bool = False) -> None:
        self.number = number
        self.path = segment_path(directory, number)
        if existing:  # a segment left by an earlier run, kept (not appended to) until the store holds its records
            self.fd = os.open(self.path, os.O_RDONLY)
            self.size = os.fstat(self.fd).st_size
        else:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, FILE_MODE)
            self.size = 0
        self.dirty = False  # written since the last sync began


class WriteAheadLog:
    """The open log of one store, appending to a new segment numbered ``first_number``. ``kept`` are the numbers
    of segments an earlier run left whose records the store's file may not hold yet (a store opened on a full
    disk): they stay until a checkpoint retires them, and their records are made durable here first."""

    def __init__(
        self, directory: str, first_number: int, kept: list[int] | None = None, faults: FaultPoints | None = None
    ) -> None:
        os.makedirs(directory, mode=DIRECTORY_MODE, exist_ok=True)
        self.directory = directory
        self._faults = faults
        self.dir_fd = os.open(directory, os.O_RDONLY)
        old = [_Segment(directory, number, existing=True) for number in kept or []]
        for seg in old:
            sync_data(seg.fd)
        self._segments = [*old, _Segment(directory, first_number)]
        self.changes = 0  # counts the changes of the set of open segments (a syncer's file list follows it)
        self._dir_dirty = True  # a new segment's name must be durable before its records are called durable
        self._sync_lock = threading.Lock()  # sync (a worker thread) and drop never use the same descriptor at once

    def _set_segments(self, segments: list[_Segment]) -> None:
        self._segments = segments
        self.changes += 1

    def _check(self, point: str) -> None:
        if self._faults is not None:
            self._faults.check(point)

    def position(self) -> Position:
        """The end of the log: every record appended so far lies before it."""
        seg = self._segments[-1]
        return (seg.number, seg.size)

    def operations_between(self, start: Position, stop: Position) -> Iterator[list[Operation]]:
        """The records from ``start`` up to ``stop``, oldest first. Owner thread."""
        return recorded_operations(self.directory, [s.number for s in self._segments], start, stop)

    def truncate(self, position: Position) -> None:
        """Cut the log back to ``position`` (the end of its synced part), durably: the records after it (a torn
        one, or records no sync has covered) were never acknowledged and must never be replayed. Later appends
        continue at ``position``. Raises ``DurabilityError``."""
        number, size = position
        with self._sync_lock:
            try:
                self._check("wal.truncate")
                keep = [s for s in self._segments if s.number <= number]
                if not keep or keep[-1].number != number:
                    raise DurabilityError(f"write-ahead log segment {number} is not open")
                for seg in self._segments[len(keep) :]:
                    os.close(seg.fd)
                    os.unlink(seg.path)
                self._set_segments(keep)
                seg = keep[-1]
                os.ftruncate(seg.fd, size)
                os.fsync(seg.fd)
                os.fsync(self.dir_fd)
            except OSError as e:
                raise DurabilityError(f"write-ahead log cannot be cut back to its synced end: {e}") from e
            seg.size = size
            seg.dirty = False

    @property
    def full(self) -> bool:
        """Whether the newest segment is due to be retired."""
        return self._segments[-1].size >= CHECKPOINT_BYTES

    def append(self, pieces: list[bytes]) -> None:
        """Append one record whose payload is ``pieces`` joined. Raises ``DurabilityError``."""
        payload = b"".join(pieces)
        header = _HEADER.pack(len(payload), zlib.crc32(payload))
        seg = self._segments[-1]
        try:
            if self._faults is None:
                _write_all(seg.fd, header, payload)
            else:  # a fault planned here leaves a torn record (its header alone), as a full disk may
                _write_all(seg.fd, header, b"")
                self._check("wal.append")
                _write_all(seg.fd, payload, b"")
        except OSError as e:
            raise DurabilityError(f"write-ahead log append failed: {e}") from e
        seg.size += len(header) + len(payload)
        seg.dirty = True

    def rotate(self) -> list[int]:
        """Open a new segment for later appends; return the numbers of every older one (to be dropped once the
        store has synced). Raises ``DurabilityError``."""
        try:
            self._check("wal.rotate")
            seg = _Segment(self.directory, self._segments[-1].number + 1)
        except OSError as e:
            raise DurabilityError(f"write-ahead log segment cannot be created: {e}") from e
        self._dir_dirty = True
        self._set_segments([*self._segments, seg])  # a new list: sync() may be iterating the old one
        return [s.number for s in self._segments[:-1]]

    def take_dirty(self) -> list[tuple[int, int]]:
        """The files to sync so that every record appended so far is durable, as (number, descriptor) pairs, the
        directory (number ``DIRECTORY``, to be fsynced) first and then segments (fdatasync is enough), in order;
        they count as clean from now on."""
        out: list[tuple[int, int]] = []
        if self._dir_dirty:
            self._dir_dirty = False
            out.append((DIRECTORY, self.dir_fd))
        for seg in self._segments:
            if seg.dirty:
                seg.dirty = False
                out.append((seg.number, seg.fd))
        return out

    def numbers(self) -> list[int]:
        """The numbers of the open segments, oldest first."""
        return [s.number for s in self._segments]

    def sync(self) -> None:
        """BLOCKING: make every record appended before this call durable, in this thread. Raises
        ``DurabilityError``."""
        with self._sync_lock:
            try:
                self._check("wal.sync")
                for number, fd in self.take_dirty():
                    if number == DIRECTORY:
                        os.fsync(fd)
                    else:
                        sync_data(fd)
            except OSError as e:
                raise DurabilityError(f"write-ahead log sync failed: {e}") from e

    def drop(self, numbers: list[int]) -> None:
        """Delete retired segments whose records the store itself now holds durably. Owner thread."""
        with self._sync_lock:
            segments = self._segments
            gone = [s for s in segments[:-1] if s.number in numbers]
            self._set_segments([s for s in segments if s not in gone])
            for seg in gone:
                os.close(seg.fd)
                os.unlink(seg.path)

    def close(self, remove: bool = True) -> None:
        """Close every segment, deleting them: the caller has synced the store, which now holds every record.
        With ``remove=False`` (a store that could not write its file) they stay, for the next start to replay."""
        with self._sync_lock:
            for seg in self._segments:
                os.close(seg.fd)
                if remove:
                    os.unlink(seg.path)
            self._set_segments([])
            if remove:
                os.fsync(self.dir_fd)
            os.close(self.dir_fd)


def sync_data(fd: int) -> None:
    """Make a file's written data durable: fdatasync, or on macOS F_FULLFSYNC (its fsync leaves the data in the
    drive's cache), or fsync where neither exists."""
    full_sync = getattr(fcntl, "F_FULLFSYNC", None)
    if full_sync is not None:
        fcntl.fcntl(fd, full_sync)
    elif hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:
        os.fsync(fd)


def _write_all(fd: int, header: bytes, payload: bytes) -> None:
    written = os.writev(fd, [header, payload])
    total = len(header) + len(payload)
    if written < total:  # a short write (a signal, a full disk): finish it or fail
        rest = (header + payload)[written:]
        while rest:
            n = os.write(fd, rest)
            rest = rest[n:]
