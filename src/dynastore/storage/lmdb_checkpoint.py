"""A checkpoint of the LMDB engine: once the durable log asks for compaction, a background thread syncs LMDB's
file, which then holds every batch before the compaction's position; the owner thread reports that position to
the log as applied afterwards, and the log forgets those batches (storage/lmdb_kv.py ``_compact``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import lmdb

from dynastore.storage.durability import DurableLog, Position

__all__ = ["Checkpoint"]

log = logging.getLogger("dynastore.storage.lmdb_kv")  # the store's one logger, whichever module speaks


class Checkpoint:
    """Syncs ``env`` in a thread of its own (once started); ``position``: the log position before which the file
    then holds every batch; ``check``: the fault-injection seam (point ``lmdb.sync``)."""

    # Not "_thread": a compiled build names the field "__thread", a C keyword.
    __slots__ = ("_worker", "_position", "done")

    def __init__(self, env: lmdb.Environment, position: Position, check: Callable[[str], None]) -> None:
        self._worker = threading.Thread(target=self._run, args=(env, check), name="lmdb-checkpoint", daemon=True)
        self._position = position
        self.done: bool | None = None  # set by the checkpoint thread: whether the file was synced

    def start(self) -> None:
        self._worker.start()

    def join(self) -> None:
        self._worker.join()

    def _run(self, env: lmdb.Environment, check: Callable[[str], None]) -> None:
        synced = True
        try:
            # Every batch before the position was committed to the store before the log was compacted.
            check("lmdb.sync")
            env.sync(True)
        except (lmdb.Error, OSError):
            # The log keeps the batches: it still holds them durably; the next checkpoint retries.
            log.exception("checkpoint failed; the write-ahead log keeps its segments")
            synced = False
        self.done = synced

    def finish(self, log_: DurableLog) -> None:
        """Wait for the thread, then report the position the file holds to the log (nothing if the sync failed).
        Raises ``DurabilityError``."""
        synced, self.done = self.done, None
        self._worker.join()
        if synced:
            log_.applied(self._position)
