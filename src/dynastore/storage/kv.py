"""The engine-neutral ordered key-value interface every storage engine implements.

The engine layer sees only these Protocols, never lmdb or sortedcontainers. Keys and values are ``bytes``;
keys sort by unsigned byte order (``keycodec`` makes that order equal DynamoDB's).

Threading contract (both engines):

* every ``read``/``write`` and every call on a transaction happens on ONE thread (the event-loop thread);
* only ``flush`` may run in another (worker) thread, concurrently with new commits on the owner thread;
* a write transaction must not span an ``await``: open it, do the work, leave the ``with``. At most one
  write transaction is open at a time; opening a second one raises ``StorageError`` instead of deadlocking.

Errors: engines raise ``StorageError`` subclasses for their own failures; third-party exceptions (lmdb) are
translated at the engine boundary and never leak.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Protocol

__all__ = [
    "KV",
    "BackgroundSync",
    "DurabilityError",
    "HeldFile",
    "LossListener",
    "NOT_APPLIED",
    "ReadTxn",
    "StorageCorruptionError",
    "StorageError",
    "StorageUnavailableError",
    "WriteTakenBackError",
    "OutcomeUnknownError",
    "WriteTxn",
]

LossListener = Callable[[int, int], None]
"""Told ``(durable_seq, lost_through)`` once the commits after ``durable_seq`` up to ``lost_through`` were taken
back: they never became durable, and the store's view no longer holds them."""


class StorageError(Exception):
    """Base of every internal storage failure (never a wire error; protocol maps it to a 500)."""


class StorageCorruptionError(StorageError):
    """Stored bytes that cannot be decoded (unknown format version, truncated record)."""


class DurabilityError(StorageError):
    """Making commits durable failed (fsync error); the on-disk state of recent commits is unknown."""


class StorageUnavailableError(StorageError):
    """The store refuses writes (it is read-only after a storage failure, e.g. a full disk) or, rarely, reads;
    nothing was done. The protocol answers it with DynamoDB's ServiceUnavailable."""


class WriteTakenBackError(DurabilityError):
    """A write that a storage failure (a full disk, a failing disk) kept from becoming durable, taken back: it was
    not applied, and the store refuses writes until it recovers. Answered as a write refused before it ran is
    (``StorageUnavailableError``'s answer); a class of one base, as compiled classes can have no more."""


class OutcomeUnknownError(DurabilityError):
    """A write whose durable log did not answer (a replicated log's append that timed out): taken back here, but the
    log may still hold it, and the node that applies the log then applies it. Answered 500 InternalServerError
    (the outcome is unknown), never as a write that was not applied."""


# The storage failures after which nothing of the request was applied (refused before it ran, or taken back
# before it became durable): a retry may succeed, so they are answered alike (the protocol's ServiceUnavailable).
# A tuple, not a common base: a compiled exception class has one base, and WriteTakenBackError's is DurabilityError.
NOT_APPLIED: tuple[type[StorageError], ...] = (StorageUnavailableError, WriteTakenBackError)


class ReadTxn(Protocol):
    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key``, or None."""
        ...

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """Pairs with ``lo <= key < hi``, ascending (descending if ``reverse``). Empty if ``lo >= hi``."""
        ...


class WriteTxn(ReadTxn, Protocol):
    def put(self, key: bytes, value: bytes) -> None:
        """Insert or overwrite ``key``; visible to later reads in this transaction."""
        ...

    def delete(self, key: bytes) -> bool:
        """Remove ``key``; True if it existed (as seen by this transaction)."""
        ...

    def swap(self, key: bytes, value: bytes) -> bytes | None:
        """``put``, returning what ``key`` held before (as seen by this transaction), or None: one look-up where a
        ``get`` and a ``put`` take two."""
        ...

    def append(self, key: bytes, value: bytes) -> None:
        """``put`` of a key that follows the last one appended (a change log record's: sequence numbers only
        grow). A store may keep its place between appends and so find the next one's without a search."""
        ...


class BackgroundSync(Protocol):
    """Flushes run by another process: ``begin()`` starts one without blocking, and once ``fileno()`` is
    readable, ``finish()`` reports it. At most one runs at a time. Owner thread only."""

    def fileno(self) -> int:
        """A descriptor that becomes readable when the running flush is done."""
        ...

    def begin(self) -> int:
        """Start making every sealed commit durable; return the ``commit_seq`` it covers. Raises
        ``DurabilityError``."""
        ...

    def finish(self) -> int | None:
        """The ``commit_seq`` now durable once the running flush is done (``durable_seq`` has reached it), None
        while it runs. Raises ``DurabilityError`` if it failed."""
        ...

    def alive(self) -> bool:
        """Whether the flushes can still run (False once the helper is gone)."""
        ...


class HeldFile(Protocol):
    """A store whose committed state is a file other processes can read (LMDB): ``hold_file`` keeps commits out
    of it until ``release_file``, so a read transaction another process begins meanwhile is an image of exactly
    the commits made before the hold (backups copy a table's image in a process of their own through this)."""

    @property
    def path(self) -> str: ...

    def hold_file(self) -> bool: ...

    def release_file(self) -> None: ...


class KV(Protocol):
    def read(self) -> AbstractContextManager[ReadTxn]:
        """A read transaction (a consistent snapshot on lmdb; see memory_kv for the in-memory caveat)."""
        ...

    def held_file(self) -> HeldFile | None:
        """The store's file as other processes read it (LMDB), or None (the in-memory store). A method, not an
        isinstance check of a runtime protocol: compiled classes cannot be checked so."""
        ...

    def snapshot(self) -> AbstractContextManager[ReadTxn]:
        """A read transaction that is a consistent image of every commit so far and stays one while later
        commits happen, even across awaits (backups read a whole table through one). Owner thread; raises
        ``StorageUnavailableError`` while the store refuses writes."""
        ...

    def write(self, frees_space: bool = False) -> AbstractContextManager[WriteTxn]:
        """One atomic transaction: commits on clean exit, aborts on exception; sees its own writes. Raises
        ``StorageUnavailableError`` while the store refuses writes; one that ``frees_space`` (a delete) is still
        let through while the disk is full."""
        ...

    @property
    def writable(self) -> bool:
        """False while the store refuses writes after a storage failure (``retry_writes`` lifts that)."""
        ...

    def watch_losses(self, listener: LossListener) -> None:
        """Call ``listener`` (owner thread) whenever commits that never became durable are taken back."""
        ...

    def recover(self, error: BaseException) -> None:
        """A flush failed with ``error``: take back every commit it did not make durable, so the store's view is
        its durable state again, and refuse writes until ``retry_writes`` succeeds. Owner thread."""
        ...

    def retry_writes(self) -> bool:
        """Try to accept writes again (space is back, the failed operation works again); True if the store is
        writable. Owner thread; called periodically (cheap while the store is writable)."""
        ...

    @property
    def commit_seq(self) -> int:
        """Incremented by every committed write transaction (starts at 0 when the engine opens)."""
        ...

    @property
    def durable_seq(self) -> int:
        """Highest ``commit_seq`` known to be on disk (the memory engine: always ``commit_seq``)."""
        ...

    def enable_batching(self, on_open: Callable[[], None]) -> None:
        """From now on, write transactions on the calling thread are committed into one open batch, which
        ``seal()`` writes out as a single storage commit; ``on_open()`` is called whenever a batch opens, and the
        caller must then call ``seal()`` soon. Each write transaction stays atomic on its own (an exception
        discards only its writes), and reads on that thread see every write in the batch. An engine without a
        commit cost (memory) ignores this."""
        ...

    def seal(self) -> None:
        """Commit the open batch, if any, so that the next ``flush()`` covers it. Raises ``DurabilityError`` if
        that fails (the batch's writes are then lost)."""
        ...

    def background_sync(self) -> BackgroundSync | None:
        """A way to flush without a thread (the engine starts what it needs), or None: then run ``flush()`` in a
        worker thread. Ask once; the engine closes it."""
        ...

    def flush(self) -> int:
        """BLOCKING: make every transaction committed (and sealed) so far durable; return the ``commit_seq``
        covered.

        Safe to call from a worker thread while the owner thread keeps committing.
        Raises ``DurabilityError`` if the sync fails.
        """
        ...

    def close(self) -> None:
        """Release the engine. Open transactions must be finished first."""
        ...
