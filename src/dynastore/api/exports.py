"""ExportTableToPointInTime, DescribeExport, ListExports.

An export is recorded IN_PROGRESS when requested and run in the background (engine/transfers.py), to a bucket
of the S3 layer (storage/buckets.py); DescribeExport shows it until it is COMPLETED or FAILED.

Order of the checks (after the request's shape): the table (TableNotFoundException "Table not found: <arn>"),
its point-in-time recovery (PointInTimeRecoveryUnavailableException, DynamoDB needs it for every export),
ExportType against IncrementalExportSpecification and ExportTime, the export time or period against the
recovery window (InvalidExportTimeException), then ClientToken: a retry with the same token and parameters
within 8 hours returns the first export; the same token with other parameters is an ExportConflictException.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from dynastore import messages
from dynastore.api.transfer_common import (
    CLIENT_TOKEN_WINDOW,
    decode_token,
    encode_token,
    fingerprint,
    transfer_arn,
)
from dynastore.engine import point_in_time
from dynastore.engine.context import Context
from dynastore.engine.export_filter import ExportFilter
from dynastore.engine.transfer_jobs import EXPORT, ExportJob, find_job, jobs, save_job
from dynastore.errors import (
    ExportConflictException,
    ExportNotFoundException,
    InvalidExportTimeException,
    PointInTimeRecoveryUnavailableException,
    TableNotFoundException,
    ValidationException,
)
from dynastore.model.table_schema import DELETING, TableDef
from dynastore.util.arn import parse_dynamodb_arn

__all__ = ["export_description", "handle_describe", "handle_export", "handle_list"]

MIN_INCREMENTAL_PERIOD = 15 * 60.0
MAX_INCREMENTAL_PERIOD = 24 * 3600.0
LIST_EXPORTS_DEFAULT = 25
# A time this little past the server's now is now: a client's own clock, or a timestamp's rounding on the wire
# (botocore sends seconds with a fraction), must not turn "now" into "the future".
CLOCK_TOLERANCE = 1.0


def handle_export(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    table_arn: str = req["TableArn"]
    table = _table(ctx, table_arn)
    window = _recovery_window(ctx, table)
    now = ctx.clock.now()
    export_type = req.get("ExportType") or "FULL_EXPORT"
    incremental = req.get("IncrementalExportSpecification")
    _check_request(req, export_type, incremental)
    job = _new_job(req, ctx, table, table_arn, export_type, now)
    if job.filter_spec is not None:
        ExportFilter(job.filter_spec, table)  # its expressions checked now, with Query's and Scan's texts
    if export_type == "INCREMENTAL_EXPORT":
        _check_period(job, window, table, now)
    elif req.get("ExportTime") is not None:
        _check_export_time(job, window, table, now)
    token = req.get("ClientToken")
    if token:
        earlier = _same_token(ctx, token, now)
        if earlier is not None:
            if earlier.fingerprint != job.fingerprint:
                raise ExportConflictException(messages.EXPORT_CLIENT_TOKEN_REUSED.format(token=token))
            return {"ExportDescription": export_description(_with_progress(ctx, earlier))}
    save_job(ctx, job)
    return {"ExportDescription": export_description(job)}


def _table(ctx: Context, table_arn: str) -> TableDef:
    arn = parse_dynamodb_arn(table_arn)
    namespace = ctx.namespace
    table = None
    ours = arn is not None and arn.table and (arn.account, arn.region) == (namespace.account_id, namespace.region)
    if ours and arn is not None and table_arn == f"arn:aws:dynamodb:{arn.region}:{arn.account}:table/{arn.table}":
        table = ctx.catalog.find(arn.table)
    if table is None or table.status == DELETING:
        raise TableNotFoundException(messages.EXPORT_TABLE_NOT_FOUND.format(arn=table_arn))
    return table


def _recovery_window(ctx: Context, table: TableDef) -> tuple[float, float] | None:
    """The table's restorable window (None until its first point-in-time base is taken, a moment after recovery
    is turned on: an export of the table as it is now needs none); PointInTimeRecoveryUnavailableException when
    recovery is off."""
    if table.pitr is None:
        raise PointInTimeRecoveryUnavailableException(messages.EXPORT_PITR_DISABLED.format(table=table.name))
    return point_in_time.restorable_window(ctx, table)


def _in_window(instant: float, window: tuple[float, float] | None, table: TableDef, now: float) -> None:
    """InvalidExportTimeException unless ``instant`` can be read from the point-in-time archive."""
    if window is None:
        raise InvalidExportTimeException(messages.EXPORT_NO_WINDOW_YET.format(table=table.name))
    earliest, latest = window
    if not earliest <= instant <= max(latest, now):
        raise InvalidExportTimeException(
            messages.EXPORT_TIME_OUTSIDE_WINDOW.format(
                time=_iso(instant), table=table.name, earliest=_iso(earliest), latest=_iso(latest)
            )
        )


def _check_request(req: dict[str, Any], export_type: str, incremental: dict[str, Any] | None) -> None:
    if export_type == "INCREMENTAL_EXPORT":
        if incremental is None or incremental.get("ExportFromTime") is None:
            raise ValidationException(messages.EXPORT_INCREMENTAL_NEEDS_SPEC, bare=True)
        if req.get("ExportTime") is not None:
            raise ValidationException(messages.EXPORT_INCREMENTAL_WITH_EXPORT_TIME, bare=True)
    elif incremental is not None:
        raise ValidationException(messages.EXPORT_SPEC_WITHOUT_INCREMENTAL, bare=True)
    if req.get("S3SseKmsKeyId") is not None and req.get("S3SseAlgorithm") != "KMS":
        raise ValidationException(messages.EXPORT_KMS_KEY_WITHOUT_KMS, bare=True)


def _new_job(
    req: dict[str, Any], ctx: Context, table: TableDef, table_arn: str, export_type: str, now: float
) -> ExportJob:
    incremental = req.get("IncrementalExportSpecification") or {}
    export_time = req.get("ExportTime")
    from_time = incremental.get("ExportFromTime")
    to_time = incremental.get("ExportToTime")
    if export_type == "INCREMENTAL_EXPORT" and (to_time is None or now < to_time <= now + CLOCK_TOLERANCE):
        to_time = now
    job = ExportJob(
        arn=transfer_arn(table_arn, EXPORT, now),
        table_arn=table_arn,
        table_id=table.uuid,
        table_name=table.name,
        account_id=ctx.namespace.account_id,
        region=ctx.namespace.region,
        export_time=now if export_time is None or export_type == "INCREMENTAL_EXPORT" else export_time,
        start_time=now,
        client_token=req.get("ClientToken") or secrets.token_hex(16),
        bucket=req["S3Bucket"],
        bucket_owner=req.get("S3BucketOwner"),
        prefix=req.get("S3Prefix"),
        sse_algorithm=req.get("S3SseAlgorithm"),
        sse_kms_key_id=req.get("S3SseKmsKeyId"),
        export_format=req.get("ExportFormat") or "DYNAMODB_JSON",
        export_type=export_type,
        from_time=from_time,
        to_time=to_time,
        view_type=(incremental.get("ExportViewType") or "NEW_AND_OLD_IMAGES") if incremental else None,
        at_current_time=export_time is None or export_time >= now - CLOCK_TOLERANCE,
        filter_spec=req.get("FilterSpecification"),
    )
    job.fingerprint = fingerprint({key: value for key, value in req.items() if key != "ClientToken"})
    return job


def _iso(instant: float) -> str:
    return datetime.fromtimestamp(instant, UTC).isoformat()


def _check_export_time(job: ExportJob, window: tuple[float, float] | None, table: TableDef, now: float) -> None:
    if job.export_time > now + CLOCK_TOLERANCE:
        raise InvalidExportTimeException(messages.EXPORT_TIME_IN_FUTURE.format(time=_iso(job.export_time)))
    if not job.at_current_time:
        _in_window(job.export_time, window, table, now)


def _check_period(job: ExportJob, window: tuple[float, float] | None, table: TableDef, now: float) -> None:
    assert job.from_time is not None and job.to_time is not None
    if job.from_time >= job.to_time:
        raise ValidationException(messages.EXPORT_PERIOD_ORDER, bare=True)
    if job.to_time - job.from_time < MIN_INCREMENTAL_PERIOD:
        raise ValidationException(messages.EXPORT_PERIOD_TOO_SHORT, bare=True)
    if job.to_time - job.from_time > MAX_INCREMENTAL_PERIOD:
        raise ValidationException(messages.EXPORT_PERIOD_TOO_LONG, bare=True)
    for instant in (job.from_time, job.to_time):
        if instant > now:
            raise InvalidExportTimeException(messages.EXPORT_TIME_IN_FUTURE.format(time=_iso(instant)))
        _in_window(instant, window, table, now)


def _same_token(ctx: Context, token: str, now: float) -> ExportJob | None:
    for job in jobs(ctx, EXPORT):
        if isinstance(job, ExportJob) and job.client_token == token and now - job.start_time < CLIENT_TOKEN_WINDOW:
            return job
    return None


# ---------------------------------------------------------------------------------------------- describe, list


def export_description(job: ExportJob) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ExportArn": job.arn,
        "ExportStatus": job.status,
        "StartTime": job.start_time,
    }
    if job.end_time is not None and job.status != "IN_PROGRESS":
        out["EndTime"] = job.end_time
    if job.manifest is not None:
        out["ExportManifest"] = job.manifest
    out.update(
        {
            "TableArn": job.table_arn,
            "TableId": job.table_id,
            "ExportTime": job.export_time,
            "ClientToken": job.client_token,
            "S3Bucket": job.bucket,
        }
    )
    if job.bucket_owner is not None:
        out["S3BucketOwner"] = job.bucket_owner
    if job.prefix is not None:
        out["S3Prefix"] = job.prefix
    out["S3SseAlgorithm"] = job.sse_algorithm or "AES256"
    if job.sse_kms_key_id is not None:
        out["S3SseKmsKeyId"] = job.sse_kms_key_id
    if job.failure_code is not None:
        out["FailureCode"] = job.failure_code
        out["FailureMessage"] = job.failure_message or ""
    out["ExportFormat"] = job.export_format
    if job.status in ("COMPLETED", "IN_PROGRESS"):  # while it runs: so far (DynamoDB gives them at the end only)
        out["BilledSizeBytes"] = job.billed_size_bytes
        out["ItemCount"] = job.item_count
    out["ExportType"] = job.export_type
    if job.filter_spec is not None:
        out["FilterSpecification"] = job.filter_spec
    if job.export_type == "INCREMENTAL_EXPORT":
        out.pop("ExportTime")
        out["IncrementalExportSpecification"] = {
            "ExportFromTime": job.from_time,
            "ExportToTime": job.to_time,
            "ExportViewType": job.view_type or "NEW_AND_OLD_IMAGES",
        }
    return out


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    arn: str = req["ExportArn"]
    job = find_job(ctx, EXPORT, arn)
    namespace = ctx.namespace
    if not isinstance(job, ExportJob) or (job.account_id, job.region) != (namespace.account_id, namespace.region):
        raise ExportNotFoundException(messages.EXPORT_NOT_FOUND.format(arn=arn))
    return {"ExportDescription": export_description(_with_progress(ctx, job))}


def _with_progress(ctx: Context, job: ExportJob) -> ExportJob:
    """``job`` with the counts of the export so far while it runs on this server (its record holds them only
    once it ends)."""
    running = ctx.recovery.exports_running.get(job.arn)
    if running is not None and job.status == "IN_PROGRESS":
        job.item_count, job.billed_size_bytes = running.items, running.billed_bytes
    return job


def handle_list(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    limit = req.get("MaxResults") or LIST_EXPORTS_DEFAULT
    table_arn = req.get("TableArn")
    after = decode_token(req.get("NextToken"))
    summaries: list[dict[str, Any]] = []
    next_token = None
    for job in jobs(ctx, EXPORT, after):
        if not isinstance(job, ExportJob) or (table_arn is not None and job.table_arn != table_arn):
            continue
        if len(summaries) == limit:
            next_token = encode_token(summaries[-1]["ExportArn"])
            break
        summaries.append({"ExportArn": job.arn, "ExportStatus": job.status, "ExportType": job.export_type})
    out: dict[str, Any] = {"ExportSummaries": summaries}
    if next_token is not None:
        out["NextToken"] = next_token
    return out
