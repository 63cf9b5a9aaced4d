"""The records of exports and imports: what DescribeExport / DescribeImport report, kept in the store.

Each export or import is a catalog record (``#export:<arn>`` / ``#import:<arn>``, storage/keyspace.py) written
when it is requested and rewritten as it progresses and when it ends. While it runs, an *active* marker
(``#transfer-active:<arn>``) says so: the runner (engine/transfers.py) starts the jobs it finds marked and not
running, and at start a marker left by an earlier run means the job was interrupted (a crash, ``kill -9``), so it
ends FAILED (an import's unfinished table is deleted): never a half table shown ACTIVE.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from dynastore.engine.context import Context
from dynastore.storage import keyspace

__all__ = [
    "EXPORT",
    "IMPORT",
    "ExportJob",
    "ImportJob",
    "active_arns",
    "find_job",
    "jobs",
    "save_job",
]

EXPORT = "export"
IMPORT = "import"
IN_PROGRESS = "IN_PROGRESS"
COMPLETED = "COMPLETED"
FAILED = "FAILED"


@dataclass
class ExportJob:
    arn: str
    table_arn: str
    table_id: str  # the table's UUID (DynamoDB's TableId)
    table_name: str
    account_id: str
    region: str
    export_time: float
    start_time: float
    client_token: str
    bucket: str
    bucket_owner: str | None
    prefix: str | None
    sse_algorithm: str | None
    sse_kms_key_id: str | None
    export_format: str
    export_type: str
    # INCREMENTAL_EXPORT: the period (from inclusive, to exclusive) and the view type
    from_time: float | None = None
    to_time: float | None = None
    view_type: str | None = None
    at_current_time: bool = True  # FULL_EXPORT of the table as it is when the export runs
    filter_spec: dict[str, Any] | None = None  # the request's FilterSpecification (engine/export_filter.py)
    status: str = IN_PROGRESS
    end_time: float | None = None
    item_count: int = 0
    billed_size_bytes: int = 0
    manifest: str | None = None
    failure_code: str | None = None
    failure_message: str | None = None
    fingerprint: str = ""  # the request's parameters, to tell a retry from a conflicting reuse of its token

    kind = EXPORT


@dataclass
class ImportJob:
    arn: str
    table_arn: str
    table_id: str
    table_name: str
    account_id: str
    region: str
    start_time: float
    client_token: str
    bucket: str
    bucket_owner: str | None
    key_prefix: str | None
    input_format: str
    compression: str
    csv_delimiter: str | None
    csv_header: list[str] | None
    creation: dict[str, Any]  # the request's TableCreationParameters, echoed by DescribeImport
    status: str = IN_PROGRESS
    end_time: float | None = None
    processed_items: int = 0
    imported_items: int = 0
    error_count: int = 0
    processed_bytes: int = 0
    failure_code: str | None = None
    failure_message: str | None = None
    error_report: str | None = None  # where the failed lines are listed (a file), if anywhere but the log
    fingerprint: str = ""
    objects_done: list[str] = field(default_factory=list)

    kind = IMPORT


Job = ExportJob | ImportJob


def _record_name(kind: str, arn: str) -> str:
    return f"{keyspace.TRANSFER_RECORD_PREFIX}{kind}:{arn}"


def _active_name(arn: str) -> str:
    return keyspace.TRANSFER_ACTIVE_PREFIX + arn


def save_job(ctx: Context, job: Job) -> None:
    """Write the job's record; an IN_PROGRESS job is marked active, a finished one no longer."""
    record = {"kind": job.kind, **dataclasses.asdict(job)}
    with ctx.kv.write(frees_space=job.status != IN_PROGRESS) as txn:
        txn.put(keyspace.meta_key(_record_name(job.kind, job.arn)), orjson.dumps(record))
        active = keyspace.meta_key(_active_name(job.arn))
        if job.status == IN_PROGRESS:
            txn.put(active, orjson.dumps({"kind": "transfer-active", "job": job.kind}))
        else:
            txn.delete(active)


def _decode(raw: bytes) -> Job | None:
    record = orjson.loads(raw)
    kind = record.pop("kind", None)
    if kind == EXPORT:
        return ExportJob(**record)
    if kind == IMPORT:
        return ImportJob(**record)
    return None


def find_job(ctx: Context, kind: str, arn: str) -> Job | None:
    with ctx.kv.read() as txn:
        raw = txn.get(keyspace.meta_key(_record_name(kind, arn)))
    return None if raw is None else _decode(raw)


def jobs(ctx: Context, kind: str, after: str | None = None) -> Iterator[Job]:
    """Every job of ``kind`` of the context's namespace, in ARN order, from the one after ``after``."""
    prefix = keyspace.meta_key(_record_name(kind, ""))
    start = keyspace.meta_key(_record_name(kind, after)) + b"\x00" if after else prefix
    namespace = ctx.namespace
    with ctx.kv.read() as txn:
        for _, raw in list(txn.iter_range(start, keyspace.prefix_end(prefix))):  # read whole, then decoded
            job = _decode(raw)
            if job is not None and job.account_id == namespace.account_id and job.region == namespace.region:
                yield job


def active_arns(ctx: Context) -> list[tuple[str, str]]:
    """``(kind, arn)`` of every job marked active (any namespace)."""
    prefix = keyspace.meta_key(keyspace.TRANSFER_ACTIVE_PREFIX)
    found: list[tuple[str, str]] = []
    with ctx.kv.read() as txn:
        for key, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix)):
            arn = key[len(prefix) :].decode("utf-8")
            found.append((str(orjson.loads(raw)["job"]), arn))
    return found
