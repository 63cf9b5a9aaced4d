"""What backups and restores keep while a dynastore runs (one per dynastore, shared by every namespace): the
backups' files and records (storage/backup_files.py), the progress of the restores loading now and the
background tasks doing the work."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from dynastore.engine.progress import EXPORT, Job
from dynastore.storage.backup_files import BackupFiles

__all__ = ["AVAILABLE", "CREATING", "DELETED", "SYSTEM", "USER", "BackupRecord", "ExportProgress", "Progress",
           "RecoveryState"]  # fmt: skip

log = logging.getLogger("dynastore")


USER, SYSTEM = "USER", "SYSTEM"
CREATING, AVAILABLE, DELETED = "CREATING", "AVAILABLE", "DELETED"


@dataclass(frozen=True, slots=True)
class BackupRecord:
    """One backup as kept beside the store (a sealed record, storage/backup_files.py): the source table's
    definition when it was taken, its status and, once AVAILABLE, its image's size. ``name`` is the backup's
    id (the end of its ARN) and its image's name among the backup files."""

    name: str
    backup_name: str  # the name the client gave
    account_id: str
    region: str
    table: dict[str, Any]  # the source TableDef's record (TableDef.to_record)
    created_at: float
    kind: str = USER  # USER | SYSTEM
    status: str = CREATING
    size_bytes: int | None = None
    item_count: int | None = None
    expires_at: float | None = None  # SYSTEM backups expire
    failure: str | None = None  # why a backup ended DELETED before it became AVAILABLE

    @property
    def table_name(self) -> str:
        name: str = self.table["name"]
        return name

    @property
    def arn(self) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.account_id}:table/{self.table_name}/backup/{self.name}"

    def to_record(self) -> dict[str, Any]:
        return {
            "kind": "backup",
            "v": 1,
            "name": self.name,
            "backup_name": self.backup_name,
            "account": self.account_id,
            "region": self.region,
            "table": self.table,
            "created": self.created_at,
            "type": self.kind,
            "status": self.status,
            "bytes": self.size_bytes,
            "items": self.item_count,
            "expires": self.expires_at,
            "failure": self.failure,
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> BackupRecord:
        return cls(
            name=rec["name"],
            backup_name=rec["backup_name"],
            account_id=rec["account"],
            region=rec["region"],
            table=rec["table"],
            created_at=rec["created"],
            kind=rec["type"],
            status=rec["status"],
            size_bytes=rec["bytes"],
            item_count=rec["items"],
            expires_at=rec["expires"],
            failure=rec["failure"],
        )


# How far a backup or a restore is: ``done`` of ``total`` items, a job of the progress registry.
Progress = Job


class ExportProgress(Job):
    """The items an export has read so far (``done``, alias ``items``) and their bytes (DescribeExport's ItemCount
    and BilledSizeBytes while it runs); updated in memory every chunk of items, never written to the store."""

    __slots__ = ("billed_bytes",)

    def __init__(self, key: str = "", table: str = "", total: int | None = None) -> None:
        super().__init__(EXPORT, key, table, total=total)
        self.billed_bytes = 0

    @property
    def items(self) -> int:
        return self.done

    @items.setter
    def items(self, count: int) -> None:
        self.done = count


class RecoveryState:
    def __init__(self, files: BackupFiles) -> None:
        self.files = files
        # (account, region, table name) -> progress of the restore loading that table
        self.restores: dict[tuple[str, str, str], Progress] = {}
        # backup name -> progress of the backup being taken
        self.backups_running: dict[str, Progress] = {}
        # export ARN -> progress of the export running on this server
        self.exports_running: dict[str, ExportProgress] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.records: dict[str, BackupRecord] | None = None  # every backup by name, read on first use
        self.restoring_from: dict[str, int] = {}  # backup name -> restores loading from it now
        self.orphaned = False  # a failed restore's table could not be dropped yet (the store refused writes)

    @classmethod
    def in_memory(cls) -> RecoveryState:
        return cls(BackupFiles(None))

    def run(self, work: Coroutine[Any, Any, None], what: str) -> None:
        """Run ``work`` in the background on the running loop, kept referenced until it ends; a failure it does
        not handle itself is logged with ``what``. Called with no loop running (a synchronous caller: a tool, a
        test), the work runs to its end before this returns."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(work)
            return
        task = loop.create_task(work)
        self._tasks.add(task)

        def ended(done: asyncio.Task[None]) -> None:
            self._tasks.discard(done)
            if not done.cancelled() and done.exception() is not None:
                log.error("%s failed", what, exc_info=done.exception())

        task.add_done_callback(ended)

    async def wait(self) -> None:
        """Until the background work running now has ended (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()
