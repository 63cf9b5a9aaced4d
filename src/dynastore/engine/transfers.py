"""The runner of exports and imports: started by the composition root (app.py), it finds the jobs the API
recorded (engine/transfer_jobs.py), runs each as a task on the event loop and records how it ended.

At start, ``recover()`` ends every job an earlier run left IN_PROGRESS (a crash, ``kill -9``): FAILED with
FailureCode ``Interrupted``; an interrupted import's table, never filled, is deleted, so no half table is ever
shown ACTIVE. A job's failure is recorded with DynamoDB's FailureCode where there is one (``S3NoSuchBucket``,
``ItemValidationError``) and its message; a full disk fails the export's files or the import's writes with the
store's or the file system's own words.

The lines an import could not load are reported in the server's log (logger ``dynastore.imports``) and, with a
data directory, in ``<data dir>/imports/<import id>.errors.jsonl`` (one JSON object per line: object key, line
number, message), which DescribeImport names in ``CloudWatchLogGroupArn``'s stead (docs/backups.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import orjson

from dynastore import messages
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.engine.exports import run_export
from dynastore.engine.imports import ImportProgress, NoObjectsError, run_import
from dynastore.engine.transfer_jobs import (
    COMPLETED,
    FAILED,
    ExportJob,
    ImportJob,
    active_arns,
    find_job,
    save_job,
)
from dynastore.errors import DynamoError
from dynastore.model.table_schema import CREATING, DELETING, TableDef
from dynastore.storage.buckets import BucketError, Buckets
from dynastore.storage.kv import StorageError

__all__ = ["Transfers"]

log = logging.getLogger("dynastore.transfers")
import_log = logging.getLogger("dynastore.imports")

INTERRUPTED = "Interrupted"
ITEM_VALIDATION_ERROR = "ItemValidationError"
PROGRESS_SAVE_BATCHES = 20  # an import's counts are written to its record every this many batches


class Transfers:
    def __init__(self, ctx: Context, buckets: Buckets, report_dir: Path | None) -> None:
        self._ctx = ctx
        self.buckets = buckets
        self._report_dir = report_dir  # where failed import lines are listed (None: the log only)
        self._running: dict[str, asyncio.Task[None]] = {}
        self._unresolved: set[str] = set()  # interrupted jobs that could not be ended at start (read-only store)

    # ---- lifecycle --------------------------------------------------------------------------------------------
    def recover(self) -> None:
        """End every job an earlier run of the server left running (before serving requests)."""
        for kind, arn in active_arns(self._ctx):
            job = find_job(self._ctx, kind, arn)
            if job is None:
                continue
            ctx = self._ctx.in_namespace(job.account_id, job.region)
            job.status = FAILED
            job.end_time = ctx.clock.now()
            job.failure_code = INTERRUPTED
            job.failure_message = messages.TRANSFER_INTERRUPTED.format(kind=kind)
            if isinstance(job, ImportJob) and not _drop_table(ctx, job):
                self._unresolved.add(arn)  # the store refuses writes: ended at the next start, never re-run
                continue
            save_job(ctx, job)
            log.warning("%s %s was interrupted by the server's stop: FAILED", kind, arn)

    def poll(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the recorded jobs not running yet (called by the maintenance loop)."""
        for kind, arn in active_arns(self._ctx):
            if arn in self._running or arn in self._unresolved:
                continue
            job = find_job(self._ctx, kind, arn)
            if job is None:
                continue
            work = self._export(job) if isinstance(job, ExportJob) else self._import(job)
            task = loop.create_task(work)
            self._running[arn] = task
            task.add_done_callback(self._forget(arn))

    def _forget(self, arn: str) -> Callable[[asyncio.Task[None]], None]:
        def forget(task: asyncio.Task[None]) -> None:
            self._running.pop(arn, None)

        return forget

    async def stop(self) -> None:
        """Cancel the running jobs: they stay marked, so the next start ends them FAILED."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def running(self) -> int:
        return len(self._running)

    # ---- exports ----------------------------------------------------------------------------------------------
    async def _export(self, job: ExportJob) -> None:
        ctx = self._ctx.in_namespace(job.account_id, job.region)
        table = ctx.catalog.find(job.table_name)
        try:
            if table is None or table.uuid != job.table_id or table.status == DELETING:
                raise _Failure("TableNotFound", messages.EXPORT_TABLE_GONE.format(table=job.table_name))
            result = await run_export(ctx, job, table, self.buckets)
        # (Each handler names its exception differently: in a compiled coroutine one name has one type.)
        except _Failure as failure:
            _fail(ctx, job, failure.code, failure.message)
        except BucketError as refused:
            _fail(ctx, job, refused.code, refused.message)
        except (DynamoError, StorageError, OSError) as e:
            log.exception("export %s failed", job.arn)
            _fail(ctx, job, "InternalError", str(e))
        else:
            job.item_count = result.item_count
            job.billed_size_bytes = result.billed_bytes
            job.manifest = result.manifest
            job.status = COMPLETED
            job.end_time = job.end_time or ctx.clock.now()
            _save(ctx, job)

    # ---- imports ----------------------------------------------------------------------------------------------
    async def _import(self, job: ImportJob) -> None:
        ctx = self._ctx.in_namespace(job.account_id, job.region)
        progress = ImportProgress(job.arn, job.table_name)
        progress.account, progress.region = job.account_id, job.region
        jobs = ctx.engine.progress
        jobs.begin(progress)
        report = self._open_report(job)
        batches = 0

        def on_error(key: str, line: int, message: str) -> None:
            import_log.warning("import %s: %s line %d: %s", job.arn, key, line, message)
            if report is not None:
                report.write(orjson.dumps({"object": key, "line": line, "message": message}) + b"\n")

        def on_batch() -> None:
            nonlocal batches
            batches += 1
            if batches % PROGRESS_SAVE_BATCHES == 0:
                _copy_progress(job, progress)
                save_job(ctx, job)

        def table_of() -> TableDef:
            return ctx.catalog.get(job.table_name)

        try:
            await run_import(ctx, job, table_of, self.buckets, progress, on_error, on_batch)
        except asyncio.CancelledError:
            jobs.finish(progress, "the server stopped")
            raise
        except (BucketError, NoObjectsError, DynamoError, StorageError, OSError) as e:
            if not isinstance(e, BucketError | NoObjectsError):
                log.exception("import %s failed", job.arn)
            _copy_progress(job, progress)
            code = (
                e.code
                if isinstance(e, BucketError)
                else "InvalidImportSource"
                if isinstance(e, NoObjectsError)
                else "InternalError"
            )
            reason = getattr(e, "message", None) or str(e)
            jobs.finish(progress, reason)
            if _drop_table(ctx, job):
                _fail(ctx, job, code, reason)
            # else the store refuses writes: the job stays marked, and the next start ends it and drops its table
            return
        finally:
            if report is not None:
                report.close()
        _copy_progress(job, progress)
        jobs.finish(progress)
        _activate(ctx, job)
        job.end_time = ctx.clock.now()
        if progress.errors:
            job.status = FAILED
            job.failure_code = ITEM_VALIDATION_ERROR
            job.failure_message = messages.IMPORT_ITEM_VALIDATION
        else:
            job.status = COMPLETED
        _save(ctx, job)

    def _open_report(self, job: ImportJob) -> BinaryIO | None:
        if self._report_dir is None:
            return None
        path = self._report_dir / f"{job.arn.rsplit('/', 1)[-1]}.errors.jsonl"
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the store's own: its user's only
            job.error_report = str(path)
            return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        except OSError as e:
            log.error("cannot write the import error report %s: %s", path, e)
            return None


class _Failure(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _copy_progress(job: ImportJob, progress: ImportProgress) -> None:
    job.processed_items = progress.processed_items
    job.imported_items = progress.imported_items
    job.error_count = progress.errors
    job.processed_bytes = progress.processed_bytes


def _fail(ctx: Context, job: ExportJob | ImportJob, code: str, message: str) -> None:
    job.status = FAILED
    job.failure_code = code
    job.failure_message = message
    job.end_time = ctx.clock.now()
    log.warning("%s %s FAILED: %s: %s", job.kind, job.arn, code, message)
    _save(ctx, job)


def _save(ctx: Context, job: ExportJob | ImportJob) -> None:
    try:
        save_job(ctx, job)
    except StorageError as e:
        # the record stays IN_PROGRESS and marked: the next start ends it FAILED (Interrupted)
        log.error("recording the end of %s %s failed: %s", job.kind, job.arn, e)


def _activate(ctx: Context, job: ImportJob) -> None:
    """The import's table, filled, turns ACTIVE (its GSIs with it, unless a backfill still runs)."""
    now = ctx.clock.now()
    tables.change(ctx, job.table_name, lambda td: dataclasses.replace(td, status_until=now).settle(now))


def _drop_table(ctx: Context, job: ImportJob) -> bool:
    """Delete the table of an import that did not finish (still CREATING: made deletable first); False when the
    store refused it."""
    table = ctx.catalog.find(job.table_name)
    if table is None or table.uuid != job.table_id or table.status == DELETING:
        return True
    try:
        if table.status == CREATING:
            _activate(ctx, job)
        ctx.catalog.update(job.table_name, lambda td: dataclasses.replace(td, deletion_protection=False))
        tables.delete(ctx, job.table_name)
    except (DynamoError, StorageError) as e:
        log.error("deleting the table %s of the failed import %s failed: %s", job.table_name, job.arn, e)
        return False
    return True
