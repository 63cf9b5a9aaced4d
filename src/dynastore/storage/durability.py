"""The durability seam: where a storage commit becomes durable (docs/design.md "The durability seam").

A store (storage/lmdb_kv.py) keeps its state in its own file and makes commits durable through a ``DurableLog``:
it appends each sealed batch of physical operations (whole keys and values: puts and deletes), learns when the
batches appended so far are durable, takes back what never became durable after a failure, replays batches from
a position (at start-up, and to rebuild its view), and reports the position its own file holds durably, before
which the log may forget its batches. The log decides durability; the store maps its commits onto the log's
positions, and group commit (storage/group_commit.py) decides when to ask.

The embedded implementation is the local write-ahead log (storage/local_log.py over storage/wal.py's segment
files). A replicated log is a second implementation of the same protocol: the store and the engine do not
change, app.py builds the one the configuration names.

Replay is safe because of these invariants (every implementation keeps them):

1. A batch is applied all or nothing: replay yields whole batches, and stops at the first one that is torn or
   fails its check (it was never durable, so never acknowledged).
2. Operations carry whole keys and values, so applying a batch twice, or any run of batches starting at or
   before the store's own state, ends in the same state as applying each once: replay needs no exact start.
3. Batches are replayed in the order they were appended, the order the store committed them.
4. The store's own file never holds a batch the log could still take back: it applies a batch to its file only
   after the log said that batch is durable.
5. After ``take_back(p)`` no batch after ``p`` is ever replayed, and later appends continue at ``p``.
6. The log forgets a batch only after the store reported (``applied``) that its file holds it durably.

This module also holds the encoding of a batch's operations, which every implementation carries unchanged
(the local log writes it as its record payload).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Final, Protocol

from dynastore.storage.kv import DurabilityError

__all__ = [
    "Batch",
    "DurableLog",
    "FaultPoints",
    "LogSyncer",
    "Operation",
    "Position",
    "decode_batch",
    "encode_delete",
    "encode_put",
]

Position = tuple[int, int]
"""A place in the log; positions compare in log order (the local log: segment number, byte offset)."""

Operation = tuple[bytes, bytes | None]
"""A replayed operation: (key, value) for a put, (key, None) for a delete."""

Batch = list[bytes]
"""A sealed batch as the pieces whose concatenation is its payload: each operation's header (``encode_put`` /
``encode_delete``) followed by its key, and for a put its value, in the order the store made them."""

_PUT: Final = struct.Struct("<BII")  # 0x01, key length, value length
_DELETE: Final = struct.Struct("<BI")  # 0x02, key length
_PUT_TAG: Final = 1
_DELETE_TAG: Final = 2


def encode_put(key: bytes, value: bytes) -> bytes:
    """The header of a put operation; the key and the value follow it in the batch."""
    return _PUT.pack(_PUT_TAG, len(key), len(value))


def encode_delete(key: bytes) -> bytes:
    """The header of a delete operation; the key follows it in the batch."""
    return _DELETE.pack(_DELETE_TAG, len(key))


def decode_batch(payload: memoryview) -> list[Operation]:
    """The operations of a batch's payload, in order. Raises ``DurabilityError`` for an operation tag this build
    does not know (the payload passed its check, so it is not a torn write but a newer format)."""
    ops: list[Operation] = []
    pos, end = 0, len(payload)
    while pos < end:
        tag = payload[pos]
        if tag == _PUT_TAG:
            _, klen, vlen = _PUT.unpack_from(payload, pos)
            pos += _PUT.size
            key = bytes(payload[pos : pos + klen])
            pos += klen
            ops.append((key, bytes(payload[pos : pos + vlen])))
            pos += vlen
        elif tag == _DELETE_TAG:
            _, klen = _DELETE.unpack_from(payload, pos)
            pos += _DELETE.size
            ops.append((bytes(payload[pos : pos + klen]), None))
            pos += klen
        else:
            raise DurabilityError(f"write-ahead log record has an unknown operation tag {tag}")
    return ops


class FaultPoints(Protocol):
    """A test seam: ``check(point)`` raises the failure planned for that point of the storage write path, if any
    (an ``OSError`` for a file operation)."""

    def check(self, point: str) -> None: ...


class LogSyncer(Protocol):
    """Learning durability without blocking: ``begin()`` starts making every batch appended so far durable, and
    once ``fileno()`` is readable ``finish()`` tells whether it is done. At most one runs at a time. Owner thread
    only."""

    def fileno(self) -> int:
        """A descriptor that becomes readable when the running sync is done."""
        ...

    def begin(self) -> None:
        """Start making every batch appended so far durable. Raises ``DurabilityError``."""
        ...

    def finish(self) -> bool:
        """True once the running sync is done (the batches appended before ``begin`` are durable), False while it
        runs. Raises ``DurabilityError`` if it failed."""
        ...

    def alive(self) -> bool:
        """Whether syncs can still run this way (False once whatever runs them is gone)."""
        ...

    def close(self) -> None: ...


class DurableLog(Protocol):
    """The log that makes a store's commits durable. Every method runs on the store's owner thread, except
    ``sync``, which may run in a worker thread while the owner appends. Failures raise ``StorageError``
    (``DurabilityError`` where the state of recent batches is unknown)."""

    @property
    def location(self) -> str:
        """Where the log is, for messages."""
        ...

    # ---- opening: replay what a run that did not close cleanly left, then start appending

    def recovered(self) -> Iterator[list[Operation]] | None:
        """The batches an earlier run left (None if it closed cleanly), oldest first, for the store to apply to
        its file before ``open``. Reading may raise ``OSError`` or ``DurabilityError``."""
        ...

    def discard_recovered(self) -> None:
        """The store's file now holds the recovered batches durably: forget them. Raises ``OSError``."""
        ...

    def open(self) -> Position:
        """Start appending; returns the end of the log. Batches recovered but not discarded (the store could not
        apply them) are kept, replayable from ``oldest()``."""
        ...

    def oldest(self) -> Position:
        """The position of the oldest batch the log holds."""
        ...

    # ---- running

    def end(self) -> Position:
        """The end of the log: every batch appended so far lies before it."""
        ...

    def append(self, batch: Batch) -> None:
        """Append one sealed batch (not yet durable)."""
        ...

    def sync(self) -> None:
        """BLOCKING: make every batch appended before this call durable."""
        ...

    def background_sync(self) -> LogSyncer | None:
        """A way to learn durability without blocking a thread, or None (then ``sync`` runs in a worker thread).
        Asked once; closed by the store."""
        ...

    def take_back(self, position: Position) -> None:
        """Cut the log back to ``position``, the end of its durable part, durably: the batches after it were
        never acknowledged and are never replayed. Later appends continue at ``position``."""
        ...

    def replay(self, start: Position, stop: Position) -> Iterator[list[Operation]]:
        """The batches from ``start`` up to ``stop``, oldest first."""
        ...

    @property
    def compaction_due(self) -> bool:
        """Whether the log has grown enough that the store should make its file durable and call ``compact``."""
        ...

    def compact(self) -> Position:
        """Mark the end of the log as a point the store will make its own file durable at; returns it. Later
        appends follow it; once the store's file holds everything before it durably, the store calls
        ``applied`` with it."""
        ...

    def applied(self, position: Position) -> None:
        """The store's file holds every batch before ``position`` durably: the log may forget them."""
        ...

    def holds_records(self) -> bool:
        """Whether the log holds any batch (one the store's file may need)."""
        ...

    def close(self, discard: bool = True) -> None:
        """Close the log. ``discard``: the store's file holds every batch durably, so none is kept for the next
        start; otherwise they stay, to be recovered then. Raises ``OSError``."""
        ...
