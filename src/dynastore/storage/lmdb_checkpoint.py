"""A checkpoint of the LMDB engine: once a write-ahead log segment is full and retired, a background thread syncs
LMDB's file, which then holds every record of the retired segments; the owner thread drops those segments
afterwards (storage/lmdb_kv.py ``_rotate``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import lmdb

from dynastore.storage import wal
from dynastore.storage.kv import DurabilityError

__all__ = ["Checkpoint"]

log = logging.getLogger("dynastore.storage.lmdb_kv")  # the store's one logger, whichever module speaks


class Checkpoint:
    """Syncs ``env`` in a thread of its own (once started); ``retired``: the segments the file then holds;
    ``check``: the fault-injection seam (point ``lmdb.sync``)."""

    # Not "_thread": a compiled build names the field "__thread", a C keyword.
    __slots__ = ("_worker", "done")

    def __init__(self, env: lmdb.Environment, retired: list[int], check: Callable[[str], None]) -> None:
        self._worker = threading.Thread(
            target=self._run, args=(env, retired, check), name="lmdb-checkpoint", daemon=True
        )
        self.done: list[int] | None = None  # set by the checkpoint thread: segments now safe to drop

    def start(self) -> None:
        self._worker.start()

    def join(self) -> None:
        self._worker.join()

    def _run(self, env: lmdb.Environment, retired: list[int], check: Callable[[str], None]) -> None:
        try:
            # Every record in a retired segment was committed to the store before the segment was retired.
            check("lmdb.sync")
            env.sync(True)
        except (lmdb.Error, OSError):
            # The segments stay: the log still holds their records durably; the next checkpoint retries.
            log.exception("checkpoint failed; the write-ahead log keeps its segments")
            retired = []
        self.done = retired

    def finish(self, log_: wal.WriteAheadLog) -> None:
        """Wait for the thread, then drop the segments it made safe to drop (none if it failed)."""
        retired, self.done = self.done or [], None
        self._worker.join()
        try:
            log_.drop(retired)
        except OSError as e:
            raise DurabilityError(f"write-ahead log segments cannot be removed: {e}") from e
