"""``dynastore export`` and ``dynastore import``: thin clients of ExportTableToPointInTime / DescribeExport and
ImportTable / DescribeImport on a running server, through boto3 (signed with the caller's credentials as any
SDK request is), with a progress bar and an ETA; they exit non-zero with DynamoDB's error when the request or
the export or import fails.

An export's bar counts the items written so far (dynastore's DescribeExport reports ItemCount and
BilledSizeBytes while the export runs; DynamoDB only at its end, where the bar shows the state alone) against
the table's ItemCount for a full export of the present (an estimate: writes go on), else with no total; an
import's bar counts the bytes of its source objects processed (ProcessedSizeBytes) against their total when the
source is readable from here (the same directory or S3 server as the server's), else the items processed.
Ctrl-C stops waiting (exit 130; the export or import goes on in the server: admin/waiting.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dynastore.admin import api_clients
from dynastore.admin.api_clients import add_client_options
from dynastore.admin.partitions_cli import default_endpoint
from dynastore.admin.waiting import StoppedWaiting, stopped, waiting_on
from dynastore.config import Config

__all__ = ["add_transfer_commands", "run"]

POLL_SECONDS = 0.5


def add_transfer_commands(commands: Any, defaults: Config) -> None:
    endpoint = default_endpoint(defaults.host, defaults.port)
    export = commands.add_parser(
        "export", help="export a table to S3 (ExportTableToPointInTime) on a running server and follow it"
    )
    export.add_argument("table", help="the table's name or ARN")
    export.add_argument("--bucket", required=True, help="the S3 bucket (with --s3-root: a subdirectory of it)")
    export.add_argument("--prefix", default=None, help="S3Prefix: where in the bucket the export goes")
    export.add_argument("--format", choices=("DYNAMODB_JSON", "ION"), default="DYNAMODB_JSON", help="ExportFormat")
    export.add_argument("--export-time", type=float, default=None, help="ExportTime: seconds since the epoch")
    export.add_argument(
        "--incremental",
        nargs=2,
        type=float,
        metavar=("FROM", "TO"),
        default=None,
        help="an INCREMENTAL_EXPORT of the changes between two times (seconds since the epoch)",
    )
    export.add_argument(
        "--view", choices=("NEW_AND_OLD_IMAGES", "NEW_IMAGE"), default=None, help="ExportViewType of --incremental"
    )
    export.add_argument("--client-token", default=None, help="ClientToken: makes a retried request idempotent")
    _client_options(export, endpoint)

    imp = commands.add_parser("import", help="import S3 objects into a new table (ImportTable) and follow it")
    imp.add_argument("table", help="the new table's name")
    imp.add_argument("--bucket", required=True, help="the S3 bucket the objects are in")
    imp.add_argument("--prefix", default=None, help="S3KeyPrefix: the objects whose key starts with it")
    imp.add_argument("--format", choices=("DYNAMODB_JSON", "ION", "CSV"), default="DYNAMODB_JSON", help="InputFormat")
    imp.add_argument("--compression", choices=("NONE", "GZIP", "ZSTD"), default="NONE", help="InputCompressionType")
    imp.add_argument(
        "--key",
        action="append",
        required=True,
        metavar="NAME:TYPE",
        help="the partition key, then the sort key if any, e.g. --key pk:S --key sk:N",
    )
    imp.add_argument("--csv-delimiter", default=None, help="CSV: the delimiter (default ,)")
    imp.add_argument("--csv-header", default=None, help="CSV: the column names, comma-separated (default: line 1)")
    imp.add_argument("--client-token", default=None, help="ClientToken: makes a retried request idempotent")
    imp.add_argument(
        "--s3-root",
        default=defaults.s3_root,
        metavar="DIR",
        help="the server's --s3-root, to size the source for the progress bar's ETA (default: DYNASTORE_S3_ROOT)",
    )
    imp.add_argument(
        "--s3-endpoint-url",
        default=defaults.s3_endpoint_url,
        metavar="URL",
        help="the server's --s3-endpoint-url, to size the source for the ETA (default: DYNASTORE_S3_ENDPOINT_URL)",
    )
    _client_options(imp, endpoint)


def _client_options(parser: argparse.ArgumentParser, endpoint: str) -> None:
    add_client_options(parser, endpoint)
    parser.add_argument("--no-wait", action="store_true", help="print the description and exit without waiting")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (a line at the end only)")


def run(args: argparse.Namespace) -> int:
    from botocore.exceptions import BotoCoreError, ClientError

    client = api_clients.client(args)
    try:
        if args.command == "export":
            return _export(client, args)
        return _import(client, args)
    except (StoppedWaiting, KeyboardInterrupt) as e:
        return stopped(args.command, e)
    except ClientError as e:
        error = e.response.get("Error", {})
        print(f"dynastore {args.command}: {error.get('Code')}: {error.get('Message')}", file=sys.stderr)
        return 1
    except BotoCoreError as e:
        print(f"dynastore {args.command}: {e}", file=sys.stderr)
        return 1


def _table_arn(client: Any, table: str) -> str:
    if table.startswith("arn:"):
        return table
    arn: str = client.describe_table(TableName=table)["Table"]["TableArn"]
    return arn


def _export(client: Any, args: argparse.Namespace) -> int:
    request: dict[str, Any] = {
        "TableArn": _table_arn(client, args.table),
        "S3Bucket": args.bucket,
        "ExportFormat": args.format,
    }
    if args.prefix:
        request["S3Prefix"] = args.prefix
    if args.client_token:
        request["ClientToken"] = args.client_token
    if args.export_time is not None:
        request["ExportTime"] = args.export_time
    if args.incremental is not None:
        spec: dict[str, Any] = {"ExportFromTime": args.incremental[0], "ExportToTime": args.incremental[1]}
        if args.view:
            spec["ExportViewType"] = args.view
        request["ExportType"] = "INCREMENTAL_EXPORT"
        request["IncrementalExportSpecification"] = spec
    description = client.export_table_to_point_in_time(**request)["ExportDescription"]
    if args.no_wait:
        print(description["ExportArn"])
        return 0
    bar = _bar(args, total=_export_total(client, request), unit="item", desc="export")
    started = time.monotonic()
    with waiting_on(f"the export {description['ExportArn']}"), _closing(bar):
        while description["ExportStatus"] == "IN_PROGRESS":
            time.sleep(POLL_SECONDS)
            description = client.describe_export(ExportArn=description["ExportArn"])["ExportDescription"]
            if bar is not None:
                _show_export_progress(bar, description, time.monotonic() - started)
    if bar is not None:
        if description["ExportStatus"] == "COMPLETED":
            bar.total = description.get("ItemCount", 0)  # the estimate replaced by the count
            _show_export_progress(bar, description, time.monotonic() - started)
        bar.close()
    if description["ExportStatus"] != "COMPLETED":
        print(f"dynastore export: FAILED: {description.get('FailureCode')}: {description.get('FailureMessage')}",
              file=sys.stderr)  # fmt: skip
        return 1
    print(
        f"{description['ExportArn']}: {description.get('ItemCount', 0)} items, "
        f"{description.get('BilledSizeBytes', 0)} bytes, manifest s3://{args.bucket}/{description.get('ExportManifest')}"
    )
    return 0


def _export_total(client: Any, request: dict[str, Any]) -> int | None:
    """The items a full export of the table as it is now will write, about (the table's ItemCount); None for an
    export of a past time or of changes, whose count is not known before it ends."""
    if "ExportTime" in request or "ExportType" in request:
        return None
    count: int | None = client.describe_table(TableName=request["TableArn"])["Table"].get("ItemCount")
    return count


def _show_export_progress(bar: Any, description: dict[str, Any], seconds: float) -> None:
    """The items written so far (absent from a DescribeExport that reports counts only at the end: the bar then
    shows the state and the time alone)."""
    items = description.get("ItemCount")
    if items is None:
        bar.set_postfix_str(f"{seconds:.0f}s {description['ExportStatus']}")
        return
    if bar.total is not None and items > bar.total:
        bar.total = items  # writes since the estimate
    bar.update(items - bar.n)
    bar.set_postfix_str(f"{description.get('BilledSizeBytes', 0)} bytes")


def _import(client: Any, args: argparse.Namespace) -> int:
    keys = [_key(text) for text in args.key]
    request: dict[str, Any] = {
        "S3BucketSource": {"S3Bucket": args.bucket, **({"S3KeyPrefix": args.prefix} if args.prefix else {})},
        "InputFormat": args.format,
        "InputCompressionType": args.compression,
        "TableCreationParameters": {
            "TableName": args.table,
            "KeySchema": [
                {"AttributeName": name, "KeyType": "HASH" if i == 0 else "RANGE"} for i, (name, _) in enumerate(keys)
            ],
            "AttributeDefinitions": [{"AttributeName": name, "AttributeType": kind} for name, kind in keys],
            "BillingMode": "PAY_PER_REQUEST",
        },
    }
    csv: dict[str, Any] = {}
    if args.csv_delimiter:
        csv["Delimiter"] = args.csv_delimiter
    if args.csv_header:
        csv["HeaderList"] = [name.strip() for name in args.csv_header.split(",")]
    if csv:
        request["InputFormatOptions"] = {"Csv": csv}
    if args.client_token:
        request["ClientToken"] = args.client_token
    description = client.import_table(**request)["ImportTableDescription"]
    if args.no_wait:
        print(description["ImportArn"])
        return 0
    total = _source_bytes(args)
    bar = _bar(args, total=total, unit="B", desc="import")
    with waiting_on(f"the import {description['ImportArn']}"), _closing(bar):
        while description["ImportStatus"] == "IN_PROGRESS":
            time.sleep(POLL_SECONDS)
            description = client.describe_import(ImportArn=description["ImportArn"])["ImportTableDescription"]
            if bar is not None:
                bar.update(description.get("ProcessedSizeBytes", 0) - bar.n)
                bar.set_postfix_str(
                    f"{description.get('ProcessedItemCount', 0)} items, {description.get('ErrorCount', 0)} errors"
                )
    if bar is not None:
        bar.update(description.get("ProcessedSizeBytes", 0) - bar.n)
        bar.close()
    line = (
        f"{description['ImportArn']}: {description.get('ImportedItemCount', 0)} items imported of "
        f"{description.get('ProcessedItemCount', 0)} processed, {description.get('ErrorCount', 0)} errors"
    )
    if description["ImportStatus"] != "COMPLETED":
        print(line, file=sys.stderr)
        print(f"dynastore import: FAILED: {description.get('FailureCode')}: {description.get('FailureMessage')}",
              file=sys.stderr)  # fmt: skip
        return 1
    print(line)
    return 0


def _source_bytes(args: argparse.Namespace) -> int | None:
    """The bytes of the import's source objects, when this machine reaches them as the server does (for the
    ETA); None otherwise."""
    import dataclasses
    from pathlib import Path

    from dynastore.storage.buckets import BucketError, buckets_of

    if not args.s3_root and not args.s3_endpoint_url:
        return None
    config = dataclasses.replace(
        Config.from_env(),
        s3_root=Path(args.s3_root) if args.s3_root else None,
        s3_endpoint_url=args.s3_endpoint_url or None,
    )
    try:
        return sum(size for _, size in buckets_of(config).list_keys(args.bucket, args.prefix or ""))
    except BucketError:
        return None


def _key(text: str) -> tuple[str, str]:
    name, _, kind = text.rpartition(":")
    if not name or kind not in ("S", "N", "B"):
        raise SystemExit(f"dynastore import: --key {text}: give NAME:S, NAME:N or NAME:B")
    return name, kind


@contextmanager
def _closing(bar: Any) -> Iterator[None]:
    """The bar is closed (its line ended) when waiting stops early (Ctrl-C, an error); else the caller ends it."""
    try:
        yield
    except BaseException:
        if bar is not None:
            bar.close()
        raise


def _bar(args: argparse.Namespace, total: int | None, unit: str, desc: str) -> Any:
    """A tqdm bar on stderr (its rate and ETA), None with --no-progress."""
    if args.no_progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=True)
