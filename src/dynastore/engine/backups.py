"""On-demand backups as the engine keeps them (docs/backups.md "On-demand backups").

A backup is a record (``BackupRecord``: its name, status, the source table's definition) and an image of the
table (engine/snapshots.py), both kept beside the store by storage/backup_files.py. ``create_backup`` fixes the
image at once (one snapshot transaction of the store, so the backup is the table exactly as it was when the
request arrived, whatever writes follow), records the backup CREATING and writes the image in the background;
only once the image is sealed does the record say AVAILABLE. A backup the server could not finish (a full disk,
a kill -9) ends DELETED, its image removed: never AVAILABLE and incomplete. Backups outlive their tables; they
belong to the namespace (account and region) of the table they were taken of.

``create_system_backup`` is the backup DynamoDB leaves when a table with point-in-time recovery on is deleted
(type SYSTEM, expiring 35 days after its creation).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

from dynastore import limits, messages
from dynastore.engine.context import Context
from dynastore.engine.progress import BACKUP, Job, Jobs
from dynastore.engine.recovery_state import (
    AVAILABLE,
    CREATING,
    DELETED,
    SYSTEM,
    USER,
    BackupRecord,
    RecoveryState,
)
from dynastore.engine.restore import check_target_name, start_restore
from dynastore.engine.snapshots import PendingSnapshot, begin_snapshot
from dynastore.errors import (
    BackupInUseException,
    BackupNotFoundException,
    ContinuousBackupsUnavailableException,
    LimitExceededException,
    TableInUseException,
    TableNotFoundException,
)
from dynastore.model.table_schema import CREATING as TABLE_CREATING
from dynastore.model.table_schema import DELETING as TABLE_DELETING
from dynastore.model.table_schema import RestoreSummary, TableDef, table_arn
from dynastore.storage.kv import StorageError

__all__ = [
    "SYSTEM_BACKUP_DAYS",
    "check_restore",
    "create_backup",
    "create_system_backup",
    "delete_backup",
    "find_backup",
    "list_backups",
    "recover_backups",
    "recovery_view",
    "restore_backup",
    "source_table",
]

log = logging.getLogger("dynastore")

SYSTEM_BACKUP_DAYS = 35  # a SYSTEM backup expires this long after its creation (DynamoDB's)
_DAY = 86_400.0
INTERRUPTED = "the server stopped before the backup was complete"


# ---- the records ------------------------------------------------------------------------------------------------
def _records(ctx: Context) -> dict[str, BackupRecord]:
    """Every backup of every namespace by name, read from the backup files on first use."""
    state = ctx.recovery
    if state.records is None:
        state.records = {name: BackupRecord.from_record(rec) for name, rec in state.files.records().items()}
    return state.records


def _save(state: RecoveryState, record: BackupRecord) -> None:
    """Keep ``record`` (sealed before the caller goes on). Raises ``StorageError``."""
    state.files.put_record(record.name, record.to_record())
    assert state.records is not None
    state.records[record.name] = record


def _in_namespace(ctx: Context, record: BackupRecord) -> bool:
    return (record.account_id, record.region) == (ctx.catalog.account_id, ctx.catalog.region)


def _expire(ctx: Context) -> None:
    """SYSTEM backups past their expiry time are gone (lazily, on the injectable clock)."""
    now = ctx.clock.now()
    records = _records(ctx)
    for record in [r for r in records.values() if r.expires_at is not None and r.expires_at <= now]:
        _forget(ctx.recovery, record)


def _forget(state: RecoveryState, record: BackupRecord) -> None:
    state.files.delete_image(record.name)
    state.files.delete_record(record.name)
    assert state.records is not None
    state.records.pop(record.name, None)


def recover_backups(ctx: Context) -> list[str]:
    """At start: a backup still CREATING was cut short by the server's stop; it ends DELETED (its image, whole
    or not, removed), so no backup is AVAILABLE that the server did not finish. Returns their ARNs."""
    ended = []
    for record in list(_records(ctx).values()):
        if record.status == CREATING:
            ctx.recovery.files.delete_image(record.name)
            _save(ctx.recovery, dataclasses.replace(record, status=DELETED, failure=INTERRUPTED))
            ended.append(record.arn)
    return ended


# ---- CreateBackup -----------------------------------------------------------------------------------------------
def create_backup(ctx: Context, table_name: str, backup_name: str) -> BackupRecord:
    """A USER backup of table ``table_name`` (a name or an ARN of this namespace), CREATING until its image is
    written in the background."""
    name = ctx.catalog.table_name(table_name)
    table = ctx.catalog.find(name)
    if table is None:
        raise TableNotFoundException(messages.BACKUP_TABLE_NOT_FOUND.format(name=name))
    if table.status == TABLE_CREATING:
        raise ContinuousBackupsUnavailableException(messages.BACKUPS_BEING_ENABLED.format(name=name))
    if table.status == TABLE_DELETING:
        raise TableInUseException(messages.BACKUP_TABLE_BEING_DELETED.format(name=name))
    running = sum(1 for r in _records(ctx).values() if r.status == CREATING and r.account_id == ctx.catalog.account_id)
    if running >= limits.MAX_CONCURRENT_BACKUPS:
        raise LimitExceededException(messages.BACKUPS_CONCURRENT_LIMIT.format(limit=limits.MAX_CONCURRENT_BACKUPS))
    return _start(ctx, table, backup_name, USER)


def create_system_backup(ctx: Context, table: TableDef) -> BackupRecord:
    """The SYSTEM backup DynamoDB leaves of a deleted table with point-in-time recovery on. Call it while the
    table's items are still in the store (before ``tables.delete`` returns to the event loop: the purge runs
    later): its image is fixed here, synchronously. Named after the table, expiring in 35 days."""
    _records(ctx)
    return _start(ctx, table, f"{table.name}$DeletedTableBackup", SYSTEM)


def _start(ctx: Context, table: TableDef, backup_name: str, kind: str) -> BackupRecord:
    pending = begin_snapshot(ctx, table)
    expires = pending.taken_at + SYSTEM_BACKUP_DAYS * _DAY if kind == SYSTEM else None
    record = BackupRecord(
        name=pending.name,
        backup_name=backup_name,
        account_id=ctx.catalog.account_id,
        region=ctx.catalog.region,
        table=pending.table.to_record(),
        created_at=pending.taken_at,
        kind=kind,
        size_bytes=pending.table.size_bytes,  # the table's, until the image's is known
        item_count=pending.table.item_count,
        expires_at=expires,
    )
    try:
        _save(ctx.recovery, record)
    except StorageError:
        pending.close()
        raise
    jobs = ctx.engine.progress
    progress = jobs.start(
        BACKUP,
        record.name,
        record.table_name,
        total=pending.table.item_count,
        account=record.account_id,
        region=record.region,
    )
    ctx.recovery.backups_running[record.name] = progress
    ctx.recovery.run(_write(ctx.recovery, record, pending, progress, jobs), f"the backup {record.arn}")
    return record


async def _write(
    state: RecoveryState, record: BackupRecord, pending: PendingSnapshot, progress: Job, jobs: Jobs
) -> None:
    failure: str | None = "the server stopped"
    try:
        snapshot = await pending.write(progress)
        done = dataclasses.replace(
            record, status=AVAILABLE, size_bytes=snapshot.size_bytes, item_count=snapshot.item_count
        )
        await asyncio.to_thread(state.files.put_record, done.name, done.to_record())
        assert state.records is not None
        state.records[done.name] = done
        failure = None
    except asyncio.CancelledError:
        raise  # the server stops: the record stays CREATING and ends DELETED at the next start
    except Exception as e:
        failure = str(e)
        log.error("the backup %s failed, it ends DELETED: %s", record.arn, e)
        state.files.delete_image(record.name)
        failed = dataclasses.replace(record, status=DELETED, failure=str(e))
        assert state.records is not None
        state.records[record.name] = failed
        try:
            state.files.put_record(failed.name, failed.to_record())
        except StorageError as save_error:  # still CREATING on disk: the next start ends it DELETED
            log.error("recording the failure of backup %s failed: %s", record.arn, save_error)
    finally:
        state.backups_running.pop(record.name, None)
        jobs.finish(progress, failure)


# ---- DescribeBackup, ListBackups, DeleteBackup ------------------------------------------------------------------
def find_backup(ctx: Context, arn: str) -> BackupRecord:
    """The backup of this namespace whose ARN is ``arn`` (BackupNotFoundException otherwise)."""
    _expire(ctx)
    name = arn.rsplit("/backup/", 1)[-1] if "/backup/" in arn else None
    record = None if name is None else _records(ctx).get(name)
    if record is None or record.arn != arn or not _in_namespace(ctx, record):
        raise BackupNotFoundException(messages.BACKUP_NOT_FOUND.format(arn=arn))
    return record


def list_backups(
    ctx: Context,
    table_name: str | None,
    lower: float | None,
    upper: float | None,
    kinds: Iterable[str],
    start_arn: str | None,
) -> list[BackupRecord]:
    """This namespace's CREATING and AVAILABLE backups, oldest first: of ``table_name`` (None: every table),
    created at or after ``lower`` and before ``upper``, of the types ``kinds``, after ``start_arn``."""
    _expire(ctx)
    wanted = set(kinds)
    name = None if table_name is None else ctx.catalog.table_name(table_name)
    found = [
        r
        for r in _records(ctx).values()
        if _in_namespace(ctx, r)
        and r.status != DELETED
        and r.kind in wanted
        and (name is None or r.table_name == name)
        and (lower is None or r.created_at >= lower)
        and (upper is None or r.created_at < upper)
    ]
    # A backup's name starts with its creation time (milliseconds, fixed width): names sort oldest first, and the
    # page after ExclusiveStartBackupArn is well defined even if that backup was deleted since.
    found.sort(key=lambda r: r.name)
    if start_arn is not None:
        after = start_arn.rsplit("/backup/", 1)[-1]
        found = [r for r in found if r.name > after]
    return found


def delete_backup(ctx: Context, arn: str) -> BackupRecord:
    """Delete a backup (its image and record); returns it as DELETED. BackupInUseException while it is being
    created or restored from."""
    record = find_backup(ctx, arn)
    if record.status == CREATING:
        raise BackupInUseException(messages.BACKUP_BEING_CREATED.format(arn=arn))
    if ctx.recovery.restoring_from.get(record.name):
        raise BackupInUseException(messages.BACKUP_BEING_RESTORED.format(arn=arn))
    _forget(ctx.recovery, record)
    return dataclasses.replace(record, status=DELETED)


# ---- RestoreTableFromBackup -------------------------------------------------------------------------------------
def source_table(record: BackupRecord) -> TableDef:
    """The source table's definition as the backup recorded it."""
    return TableDef.from_record(record.table)


def check_restore(ctx: Context, record: BackupRecord, target_name: str) -> None:
    """What refuses a restore of ``record`` into a new table ``target_name``, in DynamoDB's order."""
    if record.status == CREATING:
        raise BackupInUseException(messages.BACKUP_BEING_CREATED.format(arn=record.arn))
    if record.status == DELETED:
        raise BackupNotFoundException(messages.BACKUP_NOT_FOUND.format(arn=record.arn))
    check_target_name(ctx, target_name)


def restore_backup(ctx: Context, record: BackupRecord, target: TableDef) -> TableDef:
    """Start loading ``record``'s image into the new table ``target`` (checked by ``check_restore``); returns it
    CREATING, RestoreInProgress until its data is in."""
    state = ctx.recovery
    source_arn = table_arn(record.region, record.account_id, record.table_name)
    summary = RestoreSummary(record.arn, source_arn, record.created_at, True)
    state.restoring_from[record.name] = state.restoring_from.get(record.name, 0) + 1

    def ended() -> None:
        left = state.restoring_from.get(record.name, 1) - 1
        if left:
            state.restoring_from[record.name] = left
        else:
            state.restoring_from.pop(record.name, None)

    try:
        return start_restore(
            ctx, target, lambda: state.files.items(record.name), summary, total=record.item_count, on_end=ended
        )
    except BaseException:
        ended()
        raise


# ---- progress (GET /dynastore/recovery; the backup and restore commands) ----------------------------------------
def recovery_view(ctx: Context) -> dict[str, Any]:
    """The backups being created and the restores loading now, with how far each is (items done and total),
    and the backups that failed (DELETED with the reason)."""
    state = ctx.recovery
    backups_view = []
    for record in _records(ctx).values():
        progress = state.backups_running.get(record.name)
        if progress is None and record.failure is None:
            continue
        entry: dict[str, Any] = {"arn": record.arn, "status": record.status}
        if progress is not None:
            entry.update(done=progress.done, total=progress.total)
        if record.failure is not None:
            entry["failure"] = record.failure
        backups_view.append(entry)
    restores_view = [
        {"account": account, "region": region, "table": table, "done": progress.done, "total": progress.total}
        for (account, region, table), progress in state.restores.items()
    ]
    return {"backups": backups_view, "restores": restores_view}
