"""Restores: a new table filled from stored item values (a backup's image, the items a table held at an instant),
in the background (docs/backups.md).

``start_restore`` creates the target table CREATING, with its RestoreSummary saying where it comes from and that
the restore is in progress, and loads the items in chunks, one storage transaction each, yielding to the event
loop in between: the base items, every LSI and GSI entry built from them, and the table's and indexes'
statistics. Only then does the table turn ACTIVE (RestoreInProgress false), in a commit after every chunk's, so
no crash can show a half table ACTIVE: a table still restoring when the server stops (kill -9 included) is
dropped when it starts again (``abandon_unfinished``), as is one whose load fails (a full disk).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Callable, Iterable

from dynastore import limits, messages
from dynastore.engine import indexes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.engine.progress import RESTORE
from dynastore.engine.recovery_state import Progress
from dynastore.errors import (
    LimitExceededException,
    TableAlreadyExistsException,
    TableInUseException,
    ValidationException,
)
from dynastore.model.table_schema import ACTIVE, CREATING, DELETING, IndexDef, RestoreSummary, TableDef
from dynastore.model.values import Item
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item, stored_size
from dynastore.storage.kv import WriteTxn

__all__ = [
    "RESTORE_CHUNK_BYTES",
    "RESTORE_CHUNK_ITEMS",
    "abandon_unfinished",
    "progress_of",
    "restored_definition",
    "start_restore",
]

log = logging.getLogger("dynastore")

RESTORE_CHUNK_ITEMS = 1000  # items per storage transaction (the event loop serves requests between two)
RESTORE_CHUNK_BYTES = 4 << 20  # ... or fewer, once their stored values reach this size


def start_restore(
    ctx: Context,
    target: TableDef,
    items: Callable[[], Iterable[bytes]],
    summary: RestoreSummary,
    total: int | None = None,
    on_end: Callable[[], None] | None = None,
) -> TableDef:
    """Create ``target`` (a new table: fresh table and index ids) CREATING with ``summary`` (in progress) and
    load ``items()`` into it in the background (``total``: how many, if known, for the progress; ``on_end``:
    called once the load is over, done or failed). Returns the table as created. ResourceInUseException if the
    name is taken; the caller checks what its operation's errors are first (TableAlreadyExistsException)."""
    table = dataclasses.replace(
        target, status=CREATING, status_until=None, restore=dataclasses.replace(summary, in_progress=True)
    )
    # (What engine/tables.create does; this module is below engine/tables.py, whose deletes leave SYSTEM backups.)
    created = ctx.catalog.create(table)
    progress = ctx.engine.progress.start(
        RESTORE, _progress_key(ctx, table.name), table.name, total=total,
        account=ctx.catalog.account_id, region=ctx.catalog.region,
    )  # fmt: skip
    key = _progress_key(ctx, table.name)
    ctx.recovery.restores[key] = progress
    ctx.recovery.run(_load(ctx, created, items, progress, on_end), f"the restore of table {table.name}")
    return created


def restored_definition(ctx: Context, source: TableDef, name: str) -> TableDef:
    """The definition a restore of ``source`` (a backup's or a table's) into table ``name`` starts from: the same
    keys, indexes, billing, throughput (a replica's own read capacities and maxima as it applies them), encryption
    and table class, with new table and index ids. What DynamoDB does not restore is left out: tags, the stream,
    time to live, deletion protection, resource policies, the item statistics (the load counts them again). The
    caller applies the request's overrides."""
    return dataclasses.replace(
        source,
        name=name,
        table_id=ctx.catalog.next_table_id(),
        uuid=str(uuid.uuid4()),
        created_at=ctx.clock.now(),
        lsis=tuple(_restored_index(ctx, i) for i in source.lsis),
        gsis=tuple(
            _restored_index(ctx, dataclasses.replace(i, on_demand=source.on_demand_of(i)))
            for i in source.gsis
            if i.status != DELETING
        ),
        on_demand=source.on_demand_of(),
        own_max_read=None,
        own_gsi_max_reads=(),
        stream=None,
        ttl=None,
        tags=(),
        deletion_protection=False,
        throughput=source.pending_throughput or source.throughput,
        resource_policy=None,
        stream_policy=None,
        pending_throughput=None,
        item_count=0,
        size_bytes=0,
        status=CREATING,
        status_until=None,
        restore=None,
    )


def _restored_index(ctx: Context, index: IndexDef) -> IndexDef:
    """An index of the restored table: CREATING with it (the restore loads its entries, no backfill)."""
    return indexes.copy_index_definition(ctx, index, status=CREATING, backfilling=False, online=False)


def progress_of(ctx: Context, table_name: str) -> Progress | None:
    """How far the restore loading ``table_name`` is (None: no restore running for it)."""
    return ctx.recovery.restores.get(_progress_key(ctx, table_name))


def check_target_name(ctx: Context, name: str) -> None:
    """A restore's new table ``name`` is free, and fewer than 50 restores run in the account (what every restore
    checks, from a backup or to a point in time)."""
    existing = ctx.catalog.find(name)
    if existing is not None:
        if existing.status in (CREATING, DELETING):
            raise TableInUseException(messages.BACKUP_TABLE_IN_USE.format(name=name))
        raise TableAlreadyExistsException(messages.BACKUP_TABLE_ALREADY_EXISTS.format(name=name))
    restoring = sum(1 for key in ctx.recovery.restores if key[0] == ctx.catalog.account_id)
    if restoring >= limits.MAX_CONCURRENT_RESTORES:
        raise LimitExceededException(messages.RESTORES_CONCURRENT_LIMIT.format(limit=limits.MAX_CONCURRENT_RESTORES))


def abandon_unfinished(ctx: Context) -> list[str]:
    """Drop every table whose restore is not running although its data is not whole: at start, those a restore
    was loading when the server stopped; later, one whose restore failed while the store refused writes (a full
    disk), once it takes them again. Returns their names (``account/region/name``)."""
    dropped = []
    running = ctx.recovery.restores
    for td in ctx.catalog.every_table():
        if td.restore is None or not td.restore.in_progress:
            continue
        catalog = ctx.catalog.owner(td)
        if (catalog.account_id, catalog.region, td.name) not in running:
            catalog.abandon(td.name)
            dropped.append(f"{catalog.account_id}/{catalog.region}/{td.name}")
    ctx.recovery.orphaned = False
    return dropped


def _progress_key(ctx: Context, table_name: str) -> tuple[str, str, str]:
    return (ctx.catalog.account_id, ctx.catalog.region, table_name)


async def _load(
    ctx: Context,
    table: TableDef,
    items: Callable[[], Iterable[bytes]],
    progress: Progress,
    on_end: Callable[[], None] | None,
) -> None:
    failure: str | None = "the server stopped"
    try:
        chunk: list[bytes] = []
        size = 0
        for raw in items():
            chunk.append(raw)
            size += len(raw)
            if len(chunk) >= RESTORE_CHUNK_ITEMS or size >= RESTORE_CHUNK_BYTES:
                _write_chunk(ctx, table, chunk)
                progress.done += len(chunk)
                chunk, size = [], 0
                await asyncio.sleep(0)
        if chunk:
            _write_chunk(ctx, table, chunk)
            progress.done += len(chunk)
        ctx.catalog.update(table.name, _restored)
        failure = None
    except asyncio.CancelledError:
        raise  # the server stops: the table is dropped when it starts again
    except Exception as e:
        failure = str(e)
        log.error("the restore of table %s failed, the table is dropped: %s", table.name, e)
        try:
            ctx.catalog.abandon(table.name)
        except Exception as drop_error:  # the store refuses writes: dropped once it takes them again
            log.error("dropping table %s failed, it is dropped once writes resume: %s", table.name, drop_error)
            ctx.recovery.orphaned = True
    finally:
        ctx.recovery.restores.pop(_progress_key(ctx, table.name), None)
        ctx.engine.progress.finish(progress, failure)
        if on_end is not None:
            on_end()


def _restored(td: TableDef) -> TableDef:
    assert td.restore is not None
    return dataclasses.replace(
        td,
        status=ACTIVE,
        status_until=None,
        restore=dataclasses.replace(td.restore, in_progress=False),
        lsis=tuple(dataclasses.replace(i, status=ACTIVE) for i in td.lsis),
        gsis=tuple(dataclasses.replace(i, status=ACTIVE, backfilling=False) for i in td.gsis),
    )


def _write_chunk(ctx: Context, table: TableDef, chunk: list[bytes]) -> None:
    """Store ``chunk``'s items and their index entries in one transaction, then count them."""
    stats = _Stats()
    with ctx.kv.write() as txn:
        for raw in chunk:
            item = decode_item(raw)
            key = storage_key(table, item)
            size = stored_size(raw)
            if txn.get(key) is not None:
                continue  # the same key twice (an import's duplicate lines): the first one stays
            txn.put(key, raw)
            stats.items += 1
            stats.bytes += size
            if table.lsis or table.gsis:
                _index(ctx, txn, table, key, item, raw, size, stats)
    ctx.catalog.add_stats(table.name, stats.items, stats.bytes)
    for index_id, (count, size) in stats.indexes.items():
        ctx.catalog.add_index_stats(table.name, index_id, count, size)


class _Stats:
    __slots__ = ("items", "bytes", "indexes")

    def __init__(self) -> None:
        self.items = 0
        self.bytes = 0
        self.indexes: dict[int, list[int]] = {}

    def add(self, index_id: int, size: int) -> None:
        counters = self.indexes.setdefault(index_id, [0, 0])
        counters[0] += 1
        counters[1] += size


def _index(
    ctx: Context, txn: WriteTxn, table: TableDef, key: bytes, item: Item, raw: bytes, size: int, stats: _Stats
) -> None:
    """The item's LSI entries (and its item collection's size) as a write maintains them, its GSI entries written
    at once (the table is not readable yet, so nothing needs them propagated). An item whose index key attribute
    has another type than an overriding index says is left out of that index, as a backfill does."""
    try:
        effects = indexes.apply_write(ctx.indexes, txn, table, key, (None, None, 0, item, raw, size), updated=False)
    except ValidationException:
        _index_leniently(txn, table, item, stats)
        return
    for index_id, count, entry_size in effects.lsi_stats:
        if count:
            stats.add(index_id, entry_size)
    for entry_key, value in effects.gsi_changes:
        if value is not None:
            txn.put(entry_key, value)
            stats.add(_index_id(entry_key), stored_size(value))


def _index_leniently(txn: WriteTxn, table: TableDef, item: Item, stats: _Stats) -> None:
    for index in table.lsis + table.gsis:
        entry = indexes.entry_for(table, index, item)
        if entry is not None:
            txn.put(entry[0], entry[1])
            stats.add(index.index_id, stored_size(entry[1]))


def _index_id(entry_key: bytes) -> int:
    tag = len(keyspace.INDEX_TAG)
    return int.from_bytes(entry_key[tag : tag + 4], "big")
