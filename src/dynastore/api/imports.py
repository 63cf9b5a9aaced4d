"""ImportTable, DescribeImport, ListImports.

ImportTable creates a new table from TableCreationParameters (checked as CreateTable checks them; the name
taken is a ResourceInUseException) and records the import IN_PROGRESS; the runner (engine/transfers.py) loads
the objects under ``S3BucketSource`` into it, the table CREATING until they are in. A retry with the same
ClientToken and parameters within 8 hours returns the first import; the token with other parameters is an
ImportConflictException.
"""

from __future__ import annotations

import dataclasses
import secrets
from typing import Any

from dynastore import messages
from dynastore.api.create_table import table_from_parameters
from dynastore.api.transfer_common import (
    CLIENT_TOKEN_WINDOW,
    decode_token,
    encode_token,
    fingerprint,
    transfer_arn,
)
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.engine.transfer_jobs import IMPORT, ImportJob, find_job, jobs, save_job
from dynastore.errors import (
    ImportConflictException,
    ImportNotFoundException,
    ResourceInUseException,
    ValidationException,
)

__all__ = ["handle_describe", "handle_import", "handle_list", "import_description"]

LIST_IMPORTS_DEFAULT = 25


def handle_import(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    params: dict[str, Any] = req["TableCreationParameters"]
    table = dataclasses.replace(table_from_parameters(params, ctx), status_until=None)  # CREATING until loaded
    if req.get("InputFormatOptions") is not None and req["InputFormat"] != "CSV":
        raise ValidationException(messages.IMPORT_CSV_OPTIONS_WITHOUT_CSV, bare=True)
    now = ctx.clock.now()
    request_print = fingerprint({key: value for key, value in req.items() if key != "ClientToken"})
    token = req.get("ClientToken")
    if token:
        earlier = _same_token(ctx, token, now)
        if earlier is not None:
            if earlier.fingerprint != request_print:
                raise ImportConflictException(messages.IMPORT_CLIENT_TOKEN_REUSED.format(token=token))
            namespace = ctx.namespace
            return {"ImportTableDescription": import_description(earlier, namespace.region, namespace.account_id)}
    if ctx.catalog.find(table.name) is not None:
        raise ResourceInUseException(messages.TABLE_ALREADY_EXISTS.format(name=table.name))
    job = _new_job(req, ctx, table.arn(ctx.namespace.region, ctx.namespace.account_id), table.uuid, table.name, now)
    job.fingerprint = request_print
    save_job(ctx, job)  # first: a crash before the table exists leaves a job that ends FAILED, nothing else
    tables.create(ctx, table)
    return {"ImportTableDescription": import_description(job, ctx.namespace.region, ctx.namespace.account_id)}


def _new_job(req: dict[str, Any], ctx: Context, table_arn: str, table_id: str, name: str, now: float) -> ImportJob:
    source = req["S3BucketSource"]
    csv = (req.get("InputFormatOptions") or {}).get("Csv") or {}
    return ImportJob(
        arn=transfer_arn(table_arn, IMPORT, now),
        table_arn=table_arn,
        table_id=table_id,
        table_name=name,
        account_id=ctx.namespace.account_id,
        region=ctx.namespace.region,
        start_time=now,
        client_token=req.get("ClientToken") or secrets.token_hex(16),
        bucket=source["S3Bucket"],
        bucket_owner=source.get("S3BucketOwner"),
        key_prefix=source.get("S3KeyPrefix"),
        input_format=req["InputFormat"],
        compression=req.get("InputCompressionType") or "NONE",
        csv_delimiter=csv.get("Delimiter"),
        csv_header=csv.get("HeaderList"),
        creation=req["TableCreationParameters"],
    )


def _same_token(ctx: Context, token: str, now: float) -> ImportJob | None:
    for job in jobs(ctx, IMPORT):
        if isinstance(job, ImportJob) and job.client_token == token and now - job.start_time < CLIENT_TOKEN_WINDOW:
            return job
    return None


def _log_group_arn(region: str, account_id: str) -> str:
    """DynamoDB's log group of imports; dynastore reports failed lines in its own log and an error file."""
    return f"arn:aws:logs:{region}:{account_id}:log-group:/aws-dynamodb/imports:*"


def _source(job: ImportJob) -> dict[str, Any]:
    source: dict[str, Any] = {}
    if job.bucket_owner is not None:
        source["S3BucketOwner"] = job.bucket_owner
    source["S3Bucket"] = job.bucket
    if job.key_prefix is not None:
        source["S3KeyPrefix"] = job.key_prefix
    return source


def import_description(job: ImportJob, region: str, account_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ImportArn": job.arn,
        "ImportStatus": job.status,
        "TableArn": job.table_arn,
        "TableId": job.table_id,
        "ClientToken": job.client_token,
        "S3BucketSource": _source(job),
        "ErrorCount": job.error_count,
        "CloudWatchLogGroupArn": _log_group_arn(region, account_id),
        "InputFormat": job.input_format,
    }
    if job.csv_delimiter is not None or job.csv_header is not None:
        csv: dict[str, Any] = {}
        if job.csv_delimiter is not None:
            csv["Delimiter"] = job.csv_delimiter
        if job.csv_header is not None:
            csv["HeaderList"] = job.csv_header
        out["InputFormatOptions"] = {"Csv": csv}
    out["InputCompressionType"] = job.compression
    out["TableCreationParameters"] = job.creation
    out["StartTime"] = job.start_time
    if job.end_time is not None and job.status != "IN_PROGRESS":
        out["EndTime"] = job.end_time
    out["ProcessedSizeBytes"] = job.processed_bytes
    out["ProcessedItemCount"] = job.processed_items
    out["ImportedItemCount"] = job.imported_items
    if job.failure_code is not None:
        out["FailureCode"] = job.failure_code
        out["FailureMessage"] = job.failure_message or ""
    return out


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    arn: str = req["ImportArn"]
    job = find_job(ctx, IMPORT, arn)
    namespace = ctx.namespace
    if not isinstance(job, ImportJob) or (job.account_id, job.region) != (namespace.account_id, namespace.region):
        raise ImportNotFoundException(messages.IMPORT_NOT_FOUND.format(arn=arn))
    return {"ImportTableDescription": import_description(job, namespace.region, namespace.account_id)}


def handle_list(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    limit = req.get("PageSize") or LIST_IMPORTS_DEFAULT
    table_arn = req.get("TableArn")
    after = decode_token(req.get("NextToken"))
    namespace = ctx.namespace
    summaries: list[dict[str, Any]] = []
    next_token = None
    for job in jobs(ctx, IMPORT, after):
        if not isinstance(job, ImportJob) or (table_arn is not None and job.table_arn != table_arn):
            continue
        if len(summaries) == limit:
            next_token = encode_token(summaries[-1]["ImportArn"])
            break
        summary: dict[str, Any] = {
            "ImportArn": job.arn,
            "ImportStatus": job.status,
            "TableArn": job.table_arn,
            "S3BucketSource": _source(job),
            "CloudWatchLogGroupArn": _log_group_arn(namespace.region, namespace.account_id),
            "InputFormat": job.input_format,
            "StartTime": job.start_time,
        }
        if job.end_time is not None and job.status != "IN_PROGRESS":
            summary["EndTime"] = job.end_time
        summaries.append(summary)
    out: dict[str, Any] = {"ImportSummaryList": summaries}
    if next_token is not None:
        out["NextToken"] = next_token
    return out
