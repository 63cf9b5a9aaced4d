"""Running an export: the table's items (or, for an incremental export, its changes) to data files in a bucket,
laid out as DynamoDB lays them out::

    <S3Prefix>/AWSDynamoDB/<ExportId>/_started
    <S3Prefix>/AWSDynamoDB/<ExportId>/data/<name>.json.gz (.ion.gz)
    <S3Prefix>/AWSDynamoDB/<ExportId>/manifest-files.json       one line per data file
    <S3Prefix>/AWSDynamoDB/<ExportId>/manifest-files.checksum   MD5 of manifest-files.json, in hex
    <S3Prefix>/AWSDynamoDB/<ExportId>/manifest-summary.json     written last: the export is complete once it is
    <S3Prefix>/AWSDynamoDB/<ExportId>/manifest-summary.checksum

The items are read on the event loop's thread (the store's rule) into a spool of export lines, a turn of the
loop every ``SPOOL_CHUNK_ITEMS`` items so requests go on being served: a FULL_EXPORT of the table as it is now
through ONE snapshot transaction of the store (``KV.snapshot``: a consistent image that later writes do not
change), an export at a past time or an incremental one from the point-in-time archive
(engine/point_in_time.py). Turning the spool into compressed files and writing them to the bucket runs in a
worker thread.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import tempfile
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import IO, Any

import orjson

from dynastore.engine import point_in_time
from dynastore.engine.context import Context
from dynastore.engine.export_filter import ExportFilter
from dynastore.engine.keys import key_attributes
from dynastore.engine.recovery_state import ExportProgress
from dynastore.engine.transfer_formats import change_line, compress, data_file_suffix, item_line
from dynastore.engine.transfer_jobs import ExportJob
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.buckets import Buckets
from dynastore.storage.itemcodec import decode_item, encode_item, sized_json

__all__ = ["ExportResult", "export_root", "run_export"]

ITEMS_PER_DATA_FILE = 100_000
SPOOL_CHUNK_ITEMS = 2_000  # items spooled between two turns of the event loop
SUMMARY_VERSION = "2020-06-30"
INCREMENTAL_SUMMARY_VERSION = "2023-08-01"


class ExportResult:
    __slots__ = ("item_count", "billed_bytes", "manifest")

    def __init__(self, item_count: int, billed_bytes: int, manifest: str) -> None:
        self.item_count = item_count
        self.billed_bytes = billed_bytes
        self.manifest = manifest


def export_id(arn: str) -> str:
    return arn.rsplit("/", 1)[-1]


def export_root(job: ExportJob) -> str:
    """The key prefix of the export's objects: ``<S3Prefix>/AWSDynamoDB/<ExportId>``."""
    base = f"AWSDynamoDB/{export_id(job.arn)}"
    prefix = (job.prefix or "").strip("/")
    return f"{prefix}/{base}" if prefix else base


async def run_export(ctx: Context, job: ExportJob, table: TableDef, buckets: Buckets) -> ExportResult:
    """Write the export's objects; raises BucketError when the bucket refuses them. While it runs, the items
    read so far are in ``ctx.recovery.exports_running`` (DescribeExport reports them). It is dropped with no
    await between its end and the caller's recording of the outcome, so a DescribeExport in between sees the
    job IN_PROGRESS with its progress or finished with its counts, never IN_PROGRESS at zero."""
    progress = ExportProgress(job.arn, job.table_name, _expected_items(ctx, job, table))
    progress.account, progress.region = job.account_id, job.region
    ctx.recovery.exports_running[job.arn] = progress
    jobs = ctx.engine.progress
    jobs.begin(progress)
    failure: str | None = "it was stopped"
    try:
        root = export_root(job)
        await asyncio.to_thread(buckets.put_object, job.bucket, f"{root}/_started", b"")
        with tempfile.TemporaryFile() as spool:
            count, billed = await _spool(ctx, job, table, spool, progress)
            spool.seek(0)
            files = await asyncio.to_thread(_write_data_files, buckets, job, root, spool)
        summary_key = await asyncio.to_thread(_write_manifests, buckets, job, root, files, count, billed)
        failure = None
    except Exception as e:
        failure = str(e)
        raise
    finally:
        ctx.recovery.exports_running.pop(job.arn, None)
        jobs.finish(progress, failure)
    return ExportResult(count, billed, summary_key)


def _expected_items(ctx: Context, job: ExportJob, table: TableDef) -> int | None:
    """The items a full export of the table as it is now writes, about (its item statistics: writes go on);
    None for an export of a past time, of changes, or through a filter, whose count is known only at its end."""
    if job.export_type == "INCREMENTAL_EXPORT" or not job.at_current_time or job.filter_spec is not None:
        return None
    return ctx.for_table(table).catalog.stats(table.name)[0]


# ---------------------------------------------------------------------------------------------- reading


async def _spool(
    ctx: Context, job: ExportJob, table: TableDef, spool: IO[bytes], progress: ExportProgress
) -> tuple[int, int]:
    """Write the export's lines to ``spool``; returns (items, their bytes)."""
    chosen = None if job.filter_spec is None else ExportFilter(job.filter_spec, table)
    if job.export_type == "INCREMENTAL_EXPORT":
        return _spool_changes(ctx, job, table, spool, chosen, progress)
    if job.at_current_time:
        prefix = keyspace.table_prefix(table.table_id)
        with ctx.kv.snapshot() as txn:
            current = (raw for _, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix)))
            return await _spool_values(_filtered(current, chosen), job.export_format, spool, progress)
    past = point_in_time.items_at(ctx, table, job.export_time)
    return await _spool_values(_filtered(past, chosen), job.export_format, spool, progress)


def _filtered(values: Iterator[bytes], chosen: ExportFilter | None) -> Iterator[bytes]:
    """The stored values of the items the filter keeps, projected (re-encoded only when projected)."""
    if chosen is None:
        yield from values
        return
    for raw in values:
        item = decode_item(raw)
        kept = chosen.apply(item)
        if kept is item:
            yield raw
        elif kept is not None:
            yield encode_item(kept, item_size(kept))


async def _spool_values(
    values: Iterator[bytes], fmt: str, spool: IO[bytes], progress: ExportProgress
) -> tuple[int, int]:
    """DynamoDB JSON lines, or for Ion the items' JSON (the Ion lines are built in the worker thread); the
    progress is brought up to date at each turn of the loop (the only moments a request can read it)."""
    count = billed = 0
    write = spool.write
    ion = fmt == "ION"
    for raw in values:
        size, text = sized_json(raw)
        write(bytes(text) + b"\n" if ion else item_line(fmt, text))
        count += 1
        billed += size
        if count % SPOOL_CHUNK_ITEMS == 0:
            progress.items, progress.billed_bytes = count, billed
            await asyncio.sleep(0)
    progress.items, progress.billed_bytes = count, billed
    return count, billed


def _spool_changes(
    ctx: Context,
    job: ExportJob,
    table: TableDef,
    spool: IO[bytes],
    chosen: ExportFilter | None,
    progress: ExportProgress,
) -> tuple[int, int]:
    """Each item changed in the period: its keys, its image at the end (absent if deleted) and, with
    NEW_AND_OLD_IMAGES, at the start (absent if it did not exist). With a filter, a change is kept when either
    image passes it, and each image is projected."""
    assert job.from_time is not None and job.to_time is not None
    changes = point_in_time.net_changes(ctx, table, job.from_time, job.to_time)
    view = job.view_type or "NEW_AND_OLD_IMAGES"
    micros = int(job.to_time * 1_000_000)
    count = billed = 0
    for old_raw, new_raw in changes:
        old = decode_item(old_raw) if old_raw is not None else None
        new = decode_item(new_raw) if new_raw is not None else None
        present = new if new is not None else old
        if present is None:
            continue
        if chosen is not None:
            old, new = (None if old is None else chosen.apply(old)), (None if new is None else chosen.apply(new))
            if old is None and new is None:
                continue
        line = change_line("DYNAMODB_JSON", key_attributes(table, present), old, new, view, micros)
        spool.write(line if job.export_format != "ION" else b"C" + line)
        count += 1
        billed += len(line)
    progress.items, progress.billed_bytes = count, billed  # read in one pass: no request runs before its end
    return count, billed


# ---------------------------------------------------------------------------------------------- writing


class _DataFile:
    __slots__ = ("key", "item_count", "md5", "etag")

    def __init__(self, key: str, item_count: int, md5: str, etag: str) -> None:
        self.key = key
        self.item_count = item_count
        self.md5 = md5
        self.etag = etag


def _write_data_files(buckets: Buckets, job: ExportJob, root: str, spool: IO[bytes]) -> list[_DataFile]:
    """The spool's lines in files of at most ITEMS_PER_DATA_FILE items (at least one file, maybe empty, as
    DynamoDB writes one per partition even when it is empty)."""
    files: list[_DataFile] = []
    convert = _ion_converter(job) if job.export_format == "ION" else None
    batch: list[bytes] = []
    for line in spool:
        batch.append(convert(line) if convert is not None else line)
        if len(batch) >= ITEMS_PER_DATA_FILE:
            files.append(_put_data_file(buckets, job, root, batch))
            batch = []
    if batch or not files:
        files.append(_put_data_file(buckets, job, root, batch))
    return files


def _ion_converter(job: ExportJob) -> Callable[[bytes], bytes]:
    view = job.view_type or "NEW_AND_OLD_IMAGES"

    def convert(line: bytes) -> bytes:
        if line.startswith(b"C"):  # an incremental export's change, spooled as JSON
            record = orjson.loads(line[1:])
            micros = int(record["Metadata"]["WriteTimestampMicros"]["N"])
            return change_line("ION", record["Keys"], record.get("OldImage"), record.get("NewImage"), view, micros)
        return item_line("ION", line.rstrip(b"\n"))

    return convert


def _put_data_file(buckets: Buckets, job: ExportJob, root: str, lines: list[bytes]) -> _DataFile:
    name = base64.b32encode(uuid.uuid4().bytes).decode().rstrip("=").lower()
    key = f"{root}/data/{name}{data_file_suffix(job.export_format)}"
    body = compress(b"".join(lines), "GZIP")
    md5 = base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()
    etag = buckets.put_object(job.bucket, key, body)
    return _DataFile(key, len(lines), md5, etag)


def _iso(instant: float | None) -> str | None:
    if instant is None:
        return None
    return datetime.fromtimestamp(instant, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(instant * 1000) % 1000:03d}Z"


def _write_manifests(
    buckets: Buckets, job: ExportJob, root: str, files: list[_DataFile], count: int, billed: int
) -> str:
    files_text = b"".join(
        orjson.dumps({"itemCount": f.item_count, "md5Checksum": f.md5, "etag": f.etag, "dataFileS3Key": f.key}) + b"\n"
        for f in files
    )
    files_key = f"{root}/manifest-files.json"
    buckets.put_object(job.bucket, files_key, files_text)
    buckets.put_object(job.bucket, f"{root}/manifest-files.checksum", _md5_hex(files_text))
    summary = orjson.dumps(_summary(job, files_key, count, billed))
    summary_key = f"{root}/manifest-summary.json"
    buckets.put_object(job.bucket, summary_key, summary)
    buckets.put_object(job.bucket, f"{root}/manifest-summary.checksum", _md5_hex(summary))
    return summary_key


def _summary(job: ExportJob, files_key: str, count: int, billed: int) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "version": SUMMARY_VERSION,
        "exportArn": job.arn,
        "startTime": _iso(job.start_time),
        "endTime": _iso(job.end_time or job.start_time),
        "tableArn": job.table_arn,
        "tableId": job.table_id,
        "exportTime": _iso(job.export_time),
        "s3Bucket": job.bucket,
        "s3Prefix": job.prefix,
        "s3SseAlgorithm": job.sse_algorithm or "AES256",
        "s3SseKmsKeyId": job.sse_kms_key_id,
        "manifestFilesS3Key": files_key,
        "billedSizeBytes": billed,
        "itemCount": count,
        "outputFormat": job.export_format,
    }
    if job.export_type == "INCREMENTAL_EXPORT":
        summary["version"] = INCREMENTAL_SUMMARY_VERSION
        summary["exportType"] = job.export_type
        summary["exportFromTime"] = _iso(job.from_time)
        summary["exportToTime"] = _iso(job.to_time)
        summary["outputView"] = job.view_type or "NEW_AND_OLD_IMAGES"
        summary.pop("exportTime")
    return summary


def _md5_hex(data: bytes) -> bytes:
    return hashlib.md5(data, usedforsecurity=False).hexdigest().encode()
