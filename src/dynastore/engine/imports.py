"""Running an import: every object under the source prefix, parsed line by line, loaded into the new table.

Reading an object and parsing it (decompression, JSON / Ion / CSV) runs in a worker thread; the items are
written on the event loop's thread (the store's rule) in batches of ``ITEMS_PER_BATCH``, each one storage
transaction through the one write path (engine/writes.py: indexes and the change log maintained), with a turn
of the loop between batches so requests keep being served. The new table stays CREATING until the last batch.

A line that cannot become an item of the table (unparsable, not the format's shape, a malformed attribute, a
key missing or of the wrong type, an item over 400 KB) is counted in ErrorCount and reported with its object
key and line number (``on_error``): the import goes on with the next line, as DynamoDB's does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

from dynastore import messages
from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, key_schema_problem, storage_key
from dynastore.engine.progress import IMPORT, Job
from dynastore.engine.transfer_formats import CsvOptions, FormatError, LineError, decompress, read_items
from dynastore.engine.transfer_jobs import ImportJob
from dynastore.engine.writes import PutPlan
from dynastore.errors import DynamoError
from dynastore.limits import MAX_ITEM_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.storage.buckets import Buckets

__all__ = ["ITEMS_PER_BATCH", "ImportProgress", "NoObjectsError", "run_import"]

ITEMS_PER_BATCH = 500
# Lines parsed per hand-over from the worker thread to the loop.
LINES_PER_CHUNK = 5_000

ErrorReporter = Callable[[str, int, str], None]  # (object key, line, message)


class NoObjectsError(Exception):
    """No object under the source prefix."""


class ImportProgress(Job):
    """Counts as DescribeImport reports them, updated while the import runs; as a job of the progress registry
    it counts the bytes of the source processed (``done``, alias ``processed_bytes``) of their total."""

    __slots__ = ("processed_items", "imported_items", "errors")

    def __init__(self, key: str = "", table: str = "") -> None:
        super().__init__(IMPORT, key, table)
        self.unit = "bytes"
        self.processed_items = 0
        self.imported_items = 0
        self.errors = 0

    @property
    def processed_bytes(self) -> int:
        return self.done

    @processed_bytes.setter
    def processed_bytes(self, count: int) -> None:
        self.done = count


async def run_import(
    ctx: Context,
    job: ImportJob,
    table_of: Callable[[], TableDef],
    buckets: Buckets,
    progress: ImportProgress,
    on_error: ErrorReporter,
    on_batch: Callable[[], None],
) -> None:
    """Load every object of the job's source into the table ``table_of()`` returns (read again per batch: its
    definition changes as its GSIs' backfills end). Raises storage.buckets.BucketError, NoObjectsError."""
    keys = await asyncio.to_thread(_source_keys, buckets, job)
    if not keys:
        raise NoObjectsError(messages.IMPORT_NO_OBJECTS.format(bucket=job.bucket, prefix=job.key_prefix or ""))
    progress.total = sum(size for _, size in keys)
    typed = _typed_columns(table_of())
    options = CsvOptions(job.csv_delimiter or ",", job.csv_header) if job.input_format == "CSV" else None
    for key, size in keys:
        try:
            content = await asyncio.to_thread(_object_content, buckets, job, key)
        except FormatError as e:
            progress.errors += 1
            on_error(key, 0, e.message)
            continue
        lines = read_items(job.input_format, content, options, typed)
        # ProcessedSizeBytes grows with the lines read: the object's size shared out over its lines
        line_count = max(1, content.count(b"\n") + (not content.endswith(b"\n")))
        done_bytes = 0
        while True:
            chunk = await asyncio.to_thread(_take, lines, LINES_PER_CHUNK)
            if not chunk:
                break
            share = min(size, size * chunk[-1][0] // line_count) - done_bytes
            progress.processed_bytes += share
            done_bytes += share
            for start in range(0, len(chunk), ITEMS_PER_BATCH):
                _load(ctx, table_of(), chunk[start : start + ITEMS_PER_BATCH], key, progress, on_error)
                on_batch()
                await asyncio.sleep(0)
        progress.processed_bytes += size - done_bytes


def _source_keys(buckets: Buckets, job: ImportJob) -> list[tuple[str, int]]:
    return [(key, size) for key, size in buckets.list_keys(job.bucket, job.key_prefix or "") if not key.endswith("/")]


def _object_content(buckets: Buckets, job: ImportJob, key: str) -> bytes:
    return decompress(buckets.get_object(job.bucket, key), job.compression)


def _take(lines: Iterator[tuple[int, Item | LineError]], count: int) -> list[tuple[int, Item | LineError]]:
    chunk = []
    for entry in lines:
        chunk.append(entry)
        if len(chunk) >= count:
            break
    return chunk


def _typed_columns(table: TableDef) -> dict[str, str]:
    """The key attributes of the table and its GSIs with their types (CSV columns that are not strings)."""
    typed: dict[str, str] = {}
    for attr in table.attribute_definitions:
        typed[attr.name] = attr.type
    return typed


def _load(
    ctx: Context,
    table: TableDef,
    chunk: list[tuple[int, Item | LineError]],
    object_key: str,
    progress: ImportProgress,
    on_error: ErrorReporter,
) -> None:
    """Write the chunk's good items in one storage transaction; count and report the others. Items with the same
    key overwrite one another (the last wins, as DynamoDB's import does without counting an error)."""
    planned: dict[bytes, tuple[TableDef, bytes, Any]] = {}
    for line, entry in chunk:
        progress.processed_items += 1
        if isinstance(entry, LineError):
            progress.errors += 1
            on_error(object_key, line, entry.message)
            continue
        problem = _item_problem(table, entry)
        if problem is not None:
            progress.errors += 1
            on_error(object_key, line, problem)
            continue
        key = storage_key(table, entry)
        planned[key] = (table, key, PutPlan(entry, size=item_size(entry)))
    if planned:
        writes.execute_batch(ctx, list(planned.values()))
        progress.imported_items += len(planned)


def _item_problem(table: TableDef, item: Item) -> str | None:
    problem = key_schema_problem(table, item, is_full_item=True)
    if problem is not None:
        return problem
    for index in table.gsis:
        for attr in index.key_schema.attributes:
            value = item.get(attr.name)
            if value is not None and attr.type not in value:
                return messages.IMPORT_INDEX_KEY_TYPE.format(name=attr.name, index=index.name, expected=attr.type)
    if item_size(item) > MAX_ITEM_BYTES:
        return messages.IMPORT_ITEM_TOO_LARGE
    try:
        check_table_key(table, item, is_full_item=True)  # empty or oversized key values
    except DynamoError as e:
        return e.message or type(e).__name__
    return None
