"""The control plane's changes to tables, as the engine runs them: the one place a table is created, changed or
deleted (the catalog, storage/catalog.py, keeps the definitions; what else a change must reach, such as the
capacity model, is told here)."""

from __future__ import annotations

from collections.abc import Callable

from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import archive_of
from dynastore.model.table_schema import TableDef
from dynastore.storage.kv import WriteTxn

__all__ = ["change", "create", "delete", "update"]

Mutation = Callable[[TableDef], TableDef]


def create(ctx: Context, table: TableDef) -> TableDef:
    """Store a new table (ResourceInUseException when the name is taken, even by a table being deleted)."""
    return ctx.catalog.create(table)


def update(ctx: Context, name: str, mutate: Mutation) -> TableDef:
    """UpdateTable: ``mutate(current)`` (which raises to refuse the change) replaces the table. The capacity
    model sees the table as it was first, so partitions are sized from the throughput before the change
    (docs/capacity.md)."""
    current = ctx.catalog.get(name)  # ResourceNotFoundException before any rule of the change
    ctx.capacity.state(current)
    new = ctx.catalog.update(name, mutate)
    if _streaming(current) and not _streaming(new):
        _end_stream(ctx, current)
    return new


def change(ctx: Context, name: str, mutate: Mutation) -> TableDef:
    """A change of a table's settings that leaves its schema and throughput alone (tags, time to live)."""
    return ctx.catalog.update(name, mutate)


def delete(ctx: Context, name: str) -> TableDef:
    """Start deleting a table; returns its DELETING definition (its items are purged in the background)."""
    table = ctx.catalog.delete(name)
    if table.pitr is not None:
        _end_recovery(ctx, table)
    if table.stream is not None and table.stream.label is not None:
        # its streams (the enabled one, ended now, and those that ended within the retention period) stay readable
        ctx.shards.deleted_tables()  # loaded before the transaction (loading reads the store)
        ctx.shards.of(table.table_id)
        with ctx.kv.write() as txn:
            if _streaming(table):
                _close_stream(ctx, txn, table)
            ctx.shards.remember_deleted(txn, table, ctx.clock.now(), ctx.catalog.scope)
    return table


def _end_recovery(ctx: Context, table: TableDef) -> None:
    """A table with point-in-time recovery on was deleted: the archive leaves the SYSTEM backup DynamoDB keeps of
    it (its items are still in the store: they are purged later), then drops its recovery period."""
    archive = archive_of(ctx)
    if archive is not None:
        archive.table_deleted(ctx, table)


def _streaming(table: TableDef) -> bool:
    return table.stream is not None and table.stream.enabled


def _end_stream(ctx: Context, table: TableDef) -> None:
    """The stream was disabled or its table deleted (``table``: as it was, stream enabled): its open shards close
    at the last change logged (its records stay readable for the retention period)."""
    with ctx.kv.write() as txn:
        _close_stream(ctx, txn, table)


def _close_stream(ctx: Context, txn: WriteTxn, table: TableDef) -> None:
    stream = table.stream
    assert stream is not None and stream.label is not None and stream.view_type is not None
    ctx.shards.close_stream(
        txn, table.table_id, stream.label, stream.view_type, ctx.changelog.next_seq - 1, ctx.clock.now()
    )
