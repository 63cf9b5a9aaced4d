"""Applying replicated changes to a replica table: last writer wins (docs/design.md "Global tables").

A batch is applied in one storage transaction of the target namespace. Each change is compared with the local
version of its item (global_tables/versions.py): a newer change replaces the item (or deletes it) through the
write path every write takes (``writes.apply_in``), so the replica's GSIs, LSIs, stream and triggers follow,
and its version is stored; an older one (or the same one again) is dropped. Applying a batch twice changes
nothing the second time.

Replicated writes are never throttled (no capacity admission: they are the work of the service, as DynamoDB's
replicated writes are accounted apart); they run as ``REPLICATION``, whose changes the versioner leaves to this
module (the incoming version is stored, not a new one).

A replicated write honours the target region's transactions as its own writes do: while a TransactWriteItems
whose commit is not final yet holds an item of the batch (engine/transaction_locks.py), nothing of the batch is
applied and ``HeldByTransaction`` is raised, so the replicator sends the batch again shortly (as BatchWriteItem
returns such an item unprocessed rather than failing). The transaction is never cancelled for it; once its
commit is final the replicated change is applied if its version wins (last writer wins on the versions: the
transaction's own write carries its region's stamp).

A change the replica cannot take (its key does not fit the table; the write path refuses it, as an item
collection of an LSI over its size limit) aborts the batch with ``ChangeRefused`` naming the change: the
replicator tries it a bounded number of times, then skips it and sends the rest.
"""

from __future__ import annotations

from dynastore.engine import keys, writes
from dynastore.engine.context import Context
from dynastore.errors import DynamoError
from dynastore.global_tables import versions
from dynastore.global_tables.changes import ChangeRefused, ReplicatedChange
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.model.namespace import Origin
from dynastore.model.table_schema import TableDef

__all__ = [
    "REPLICATION",
    "REPLICATION_PRINCIPAL",
    "HeldByTransaction",
    "applied_writes",
    "apply_changes",
    "as_replication",
]

REPLICATION_PRINCIPAL = "replication.dynamodb.amazonaws.com"
# Who makes replicated writes. Not ``is_service``: a replicated write's stream record carries no service
# userIdentity (that marks the region's own TTL deletions).
REPLICATION = Origin(REPLICATION_PRINCIPAL, REPLICATION_PRINCIPAL)


class HeldByTransaction(Exception):
    """An item of a replicated batch is held by a transaction of the target region: the batch waits."""


def as_replication(ctx: Context) -> Context:
    """``ctx``'s namespace, called by the replication service."""
    if ctx.origin is REPLICATION:
        return ctx
    return Context(ctx.engine, ctx.namespace, ctx.catalog, REPLICATION)


def apply_changes(
    ctx: Context, table: TableDef, changes: list[ReplicatedChange], clock: HybridClock | None = None
) -> int:
    """Apply the changes newer than the local versions of their items to ``table`` (of ``ctx``'s namespace) in one
    transaction; returns how many were applied. ``clock``: this server's hybrid clock, told every stamp seen."""
    return len(applied_writes(ctx, table, changes, clock))


def applied_writes(
    ctx: Context, table: TableDef, changes: list[ReplicatedChange], clock: HybridClock | None = None
) -> list[writes.WriteResult]:
    """``apply_changes``, returning the write of each change applied (in the order of ``changes``)."""
    ctx = as_replication(ctx)
    for index, change in enumerate(changes):
        try:
            keys.check_table_key(table, change.key, is_full_item=False)
        except DynamoError as e:
            raise ChangeRefused(_reason(e), index, final=True) from None
    item_keys = [keys.storage_key(table, change.key) for change in changes]
    _check_not_held(ctx, table, changes, item_keys)
    writes.prepare(ctx, table)
    results: list[writes.WriteResult] = []
    with ctx.kv.write() as txn:
        for index, (change, key) in enumerate(zip(changes, item_keys, strict=True)):
            if not versions.wins(change.version, versions.read(txn, key)):
                continue
            item = None if change.version.deleted else change.item
            plan: writes.Plan = writes.DeletePlan() if item is None else writes.PutPlan(item)
            try:
                results.append(writes.apply_in(ctx, txn, table, key, plan))
            except DynamoError as e:
                if e.status >= 500:
                    raise  # the region cannot write now: tried again as it is
                raise ChangeRefused(_reason(e), index) from None  # leaving the ``with`` aborts the batch
            versions.write(txn, key, change.version)
    _record_stats(ctx, table, results)
    if clock is not None and changes:
        clock.observe(max(change.version.stamp for change in changes))
    return results


def _check_not_held(ctx: Context, table: TableDef, changes: list[ReplicatedChange], item_keys: list[bytes]) -> None:
    """Raise HeldByTransaction when a transaction not final yet holds an item of the batch (the check the
    region's own writes make: engine/writes.py ``perform``)."""
    locks = ctx.locks
    if locks.idle:
        return
    for change, key in zip(changes, item_keys, strict=True):
        if locks.is_locked(key):
            raise HeldByTransaction(f"a transaction holds the item {change.key} of {table.name}")


def _reason(error: DynamoError) -> str:
    return f"{type(error).__name__}: {error.message}" if error.message else type(error).__name__


def _record_stats(ctx: Context, table: TableDef, results: list[writes.WriteResult]) -> None:
    catalog = ctx.catalog.owner(table)
    for result in results:
        catalog.add_stats(table.name, (result.new is not None) - result.existed, result.new_size - result.old_size)
        if result.index is not None:
            for index_id, items, size in result.index.lsi_stats:
                catalog.add_index_stats(table.name, index_id, items, size)
