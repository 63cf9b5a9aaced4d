"""What backups and restores keep while a dynastore runs (one per dynastore, shared by every namespace): the
backups' files and records (storage/backup_files.py), the progress of the restores loading now and the
background tasks doing the work."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from dynastore.storage.backup_files import BackupFiles

__all__ = ["Progress", "RecoveryState"]

log = logging.getLogger("dynastore")


@dataclass
class Progress:
    """How far a long piece of work is: ``done`` of ``total`` items (``total`` None while unknown)."""

    done: int = 0
    total: int | None = None


class RecoveryState:
    def __init__(self, files: BackupFiles) -> None:
        self.files = files
        # (account, region, table name) -> progress of the restore loading that table
        self.restores: dict[tuple[str, str, str], Progress] = {}
        # backup name -> progress of the backup being taken
        self.backups_running: dict[str, Progress] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.records: dict[str, dict[str, Any]] | None = None  # the backups' records, read on first use

    @classmethod
    def in_memory(cls) -> RecoveryState:
        return cls(BackupFiles(None))

    def run(self, work: Coroutine[Any, Any, None], what: str) -> asyncio.Task[None]:
        """Run ``work`` in the background on the running loop, kept referenced until it ends; a failure it does
        not handle itself is logged with ``what``."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)

        def ended(done: asyncio.Task[None]) -> None:
            self._tasks.discard(done)
            if not done.cancelled() and done.exception() is not None:
                log.error("%s failed", what, exc_info=done.exception())

        task.add_done_callback(ended)
        return task

    async def wait(self) -> None:
        """Until the background work running now has ended (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()
