"""Item writes: one plan per item, one storage transaction, and the one path every write takes.

``perform`` (PutItem, UpdateItem, DeleteItem) and ``perform_batch`` (BatchWriteItem) are the engine's write
operations: refuse an item a transaction holds, admit under the capacity model (engine/capacity/admission.py),
execute, and settle the write's real cost. Transactions take the same steps in engine/transactions.py.

A plan's ``apply(old)`` is pure: it evaluates the condition against the stored item and returns the new item,
or CONDITION_FAILED. ``execute`` reads the old item, applies the plan and writes the result in one transaction;
the server answers only once that transaction is durable (see storage/group_commit.py).

On a table with secondary indexes the same transaction also writes the LSI entries and the item collection's
size (engine/indexes.py); the change log (engine/changelog.py) decides whether, and how, the write is logged for
its consumers (GSI propagation, streams, triggers, ...): this module only hands it the change.
"""

from __future__ import annotations

from typing import Any, Final

from dynastore import messages
from dynastore.engine import indexes
from dynastore.engine.capacity import admission
from dynastore.engine.capacity.admission import MIN_WRITE_HALF_UNITS
from dynastore.engine.capacity.units import write_half_units
from dynastore.engine.changelog import LogPlan
from dynastore.engine.context import Context
from dynastore.errors import DynamoError, TransactionConflictException, ValidationException
from dynastore.expressions import apply_update, creates_item, evaluate
from dynastore.limits import MAX_ITEM_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.storage.itemcodec import decode_item, encode_item, stored_size
from dynastore.storage.kv import WriteTxn
from dynastore.validation.attribute_values import nesting_exceeded


class ConditionFailedError(Exception):
    """The plan's condition was false; ``old`` is the stored item (None if there was none)."""

    def __init__(self, old: Item | None) -> None:
        super().__init__("condition failed")
        self.old = old


# The plans and results below are plain classes rather than dataclasses: every single-item write makes a few,
# and a compiled build makes a dataclass through its interpreted __init__ (docs/design.md "Compiled modules").
class Applied:
    __slots__ = ("new", "updated_paths")

    def __init__(self, new: Item | None, updated_paths: Any = None) -> None:
        self.new: Final = new
        self.updated_paths: Final = updated_paths


CONDITION_FAILED: Final = Applied(None)


class PutPlan:
    __slots__ = ("item", "condition", "size", "return_old")

    def __init__(self, item: Item, condition: Any = None, size: int | None = None, return_old: bool = False) -> None:
        self.item: Final = item
        self.condition: Final = condition
        self.size: Final = size  # the item's size when the caller has already computed it
        self.return_old: Final = return_old

    @property
    def needs_old(self) -> bool:
        return self.condition is not None or self.return_old

    @property
    def estimate_half_units(self) -> int:
        """What the write is admitted at: the new item's size (settled on max(old, new) after it ran)."""
        assert self.size is not None
        return write_half_units(self.size)

    @property
    def admitted_item(self) -> Item | None:
        return self.item  # admitted on the partitions of the GSIs it goes into too

    def apply(self, old: Item | None) -> Applied:
        if self.condition is not None and not evaluate(self.condition, old):
            return CONDITION_FAILED
        return Applied(self.item)


class DeletePlan:
    __slots__ = ("condition", "return_old")

    def __init__(self, condition: Any = None, return_old: bool = False) -> None:
        self.condition: Final = condition
        self.return_old: Final = return_old

    @property
    def needs_old(self) -> bool:
        return self.condition is not None or self.return_old

    # The size is known only once the delete ran: admitted at one unit, settled on the old item's size.
    estimate_half_units = MIN_WRITE_HALF_UNITS
    admitted_item = None

    def apply(self, old: Item | None) -> Applied:
        if self.condition is not None and not evaluate(self.condition, old):
            return CONDITION_FAILED
        return Applied(None)


class UpdatePlan:
    __slots__ = ("key", "update", "condition")
    needs_old = True
    # The new size is known only once the update ran: admitted at one unit, settled on max(old, new).
    estimate_half_units = MIN_WRITE_HALF_UNITS
    admitted_item = None

    def __init__(self, key: Item, update: Any = None, condition: Any = None) -> None:
        self.key: Final = key
        self.update: Final = update
        self.condition: Final = condition

    def apply(self, old: Item | None) -> Applied:
        if self.condition is not None and not evaluate(self.condition, old):
            return CONDITION_FAILED
        base = old if old is not None else dict(self.key)
        if self.update is None:
            return Applied(base)
        new, paths = apply_update(self.update, base, existed=old is not None)
        if old is None and not creates_item(self.update):
            return Applied(None, paths)  # REMOVE / DELETE alone never create the item
        return Applied(new, paths)


Plan = PutPlan | DeletePlan | UpdatePlan


class WriteResult:
    __slots__ = ("existed", "old", "new", "old_size", "new_size", "updated_paths", "index")

    def __init__(
        self,
        existed: bool,
        old: Item | None,
        new: Item | None,
        old_size: int,
        new_size: int,
        updated_paths: Any = None,
        index: indexes.IndexEffects | None = None,
    ) -> None:
        self.existed: Final = existed
        self.old: Final = old  # decoded only when the plan needs it (conditions, updates, returned values)
        self.new: Final = new
        self.old_size: Final = old_size
        self.new_size: Final = new_size
        self.updated_paths: Final = updated_paths
        self.index: Final = index  # tables with indexes: units, LSI statistics, item collection

    def index_half_units(self, *, factor: int = 1) -> tuple[dict[str, int], dict[str, int]]:
        """The write half-units of each LSI and of each GSI the write changed (``factor`` 2: transactional)."""
        lsi: dict[str, int] = {}
        gsi: dict[str, int] = {}
        if self.index is not None:
            for index, half_units in self.index.units:
                (lsi if index.kind == "LSI" else gsi)[index.name] = half_units * factor
        return lsi, gsi


# ---------------------------------------------------------------------------------------------- operations


def perform(ctx: Context, table: TableDef, key: bytes, plan: Plan) -> WriteResult:
    """Write one item (``key``: its storage key) the way every single-item write runs: refused with
    TransactionConflictException while a transaction holds it, admitted under the capacity model (raises the
    throttling error), executed in one storage transaction and settled at its real cost. Raises
    ConditionFailedError when the condition is false (nothing written; the old item's size is charged)."""
    locks = ctx.locks
    if not locks.idle and locks.is_locked(key):
        raise TransactionConflictException(messages.TRANSACTION_ONGOING)
    ticket = admission.admit_write(ctx, table, key, plan.estimate_half_units, item=plan.admitted_item)
    try:
        result = execute(ctx, table, key, plan)
    except ConditionFailedError as e:
        admission.settle_failed_write(ctx, ticket, e.old)
        raise
    settle(ctx, ticket, result)
    return result


class BatchOutcome:
    """What ``perform_batch`` did with each planned write, by position."""

    __slots__ = ("results", "refused", "deferred")

    def __init__(self, results: list[WriteResult | None], refused: list[int], deferred: list[int]) -> None:
        self.results: Final = results  # None where nothing was written
        self.refused: Final = refused  # positions the capacity model did not admit now
        self.deferred: Final = deferred  # positions on items a transaction holds

    @property
    def ran(self) -> bool:
        """Whether any write was attempted (a batch wholly held by transactions runs nothing)."""
        return len(self.deferred) < len(self.results)


def perform_batch(ctx: Context, planned: list[tuple[TableDef, bytes, Plan]]) -> BatchOutcome:
    """BatchWriteItem's unconditional writes on distinct keys: those on items a transaction holds are deferred
    (BatchWriteItem cannot fail with a conflict: DynamoDB returns them unprocessed), the others admitted one by
    one; the admitted run in one storage transaction and are settled afterwards. When the capacity model admits
    none of them, the first refusal's error is raised and nothing is written."""
    locks = ctx.locks
    deferred = [] if locks.idle else [i for i, (_, key, _) in enumerate(planned) if locks.is_locked(key)]
    held = set(deferred)
    admitted: list[int] = []
    tickets: list[admission.Ticket] = []
    refused: list[int] = []
    refusal: DynamoError | None = None
    for index, (table, key, plan) in enumerate(planned):
        if index in held:
            continue
        outcome = admission.attempt_write(ctx, table, key, plan.estimate_half_units, item=plan.admitted_item)
        if isinstance(outcome, DynamoError):
            refusal = refusal or outcome
            refused.append(index)
        else:
            admitted.append(index)
            tickets.append(outcome)
    if refusal is not None and not admitted:
        raise refusal
    results: list[WriteResult | None] = [None] * len(planned)
    if admitted:
        written = execute_batch(ctx, [planned[index] for index in admitted])
        for index, ticket, result in zip(admitted, tickets, written, strict=True):
            settle(ctx, ticket, result)
            results[index] = result
    return BatchOutcome(results, refused, deferred)


def settle(ctx: Context, ticket: admission.Ticket, result: WriteResult) -> None:
    """Charge a committed write what it really cost: max(old, new) on the table, and on each GSI the units
    the write took there."""
    admission.settle_write(
        ctx,
        ticket,
        result.old_size,
        result.new_size,
        old_item=result.old,
        new_item=result.new,
        gsi_units=result.index_half_units()[1],
    )


# ---------------------------------------------------------------------------------------------- execution


def execute(ctx: Context, table: TableDef, key: bytes, plan: Plan) -> WriteResult:
    """Apply ``plan`` to the item at ``key`` atomically. Raises ConditionFailedError (nothing written), or
    StorageUnavailableError while the store refuses writes (a delete still runs on a full disk: it frees space)."""
    logged = _prepared(ctx, table)  # asked once: the hot path of a single write
    with ctx.kv.write(frees_space=isinstance(plan, DeletePlan)) as txn:
        result = _apply_in(ctx, txn, table, key, plan, logged)
    _record_stats(ctx, table, result)
    return result


def execute_batch(ctx: Context, writes: list[tuple[TableDef, bytes, Plan]]) -> list[WriteResult]:
    """Apply unconditional plans to distinct keys in one storage transaction (BatchWriteItem)."""
    logged = [_prepared(ctx, table) for table, _, _ in writes]
    frees_space = all(isinstance(plan, DeletePlan) for _, _, plan in writes)
    # The batch's changes go to the change log as one record (changelog.group).
    with ctx.kv.write(frees_space=frees_space) as txn, ctx.changelog.group(txn):
        results = [
            _apply_in(ctx, txn, table, key, plan, log_plan)
            for (table, key, plan), log_plan in zip(writes, logged, strict=True)
        ]
    for (table, _, _), result in zip(writes, results, strict=True):
        _record_stats(ctx, table, result)
    return results


def dry_run(ctx: Context, table: TableDef, key: bytes, plan: Plan) -> WriteResult:
    """What ``plan`` would do to the item at ``key`` as it is stored now, without writing anything: the old and
    new item and their sizes (no index effects). Raises ConditionFailedError, or ValidationException for a new
    item the write path refuses. A global table with multi-region strong consistency (global_tables/strong.py)
    evaluates a write here, commits its result to the table's strong log, then applies it."""
    with ctx.kv.read() as txn:
        raw = txn.get(key)
    old = decode_item(raw) if raw is not None else None
    applied = plan.apply(old)
    if applied is CONDITION_FAILED:
        raise ConditionFailedError(old)
    new = applied.new
    new_size = _new_size(plan, new)
    _check_result(plan, new, new_size)
    old_size = stored_size(raw) if raw is not None else 0
    return WriteResult(raw is not None, old, new, old_size, new_size, applied.updated_paths)


def prepare(ctx: Context, table: TableDef) -> None:
    """Before a write transaction: what logging a change of ``table`` reads must be current before the transaction
    opens (a stream's shards follow the partition map; bringing it up to date may write)."""
    _prepared(ctx, table)


def _prepared(ctx: Context, table: TableDef) -> LogPlan:
    """What the change log does with writes to ``table`` (its consumers' plan), prepared for."""
    logged = ctx.changelog.plan(table)
    if logged.placer is not None:
        logged.placer.prepare(table)
    return logged


def apply_in(ctx: Context, txn: WriteTxn, table: TableDef, key: bytes, plan: Plan) -> WriteResult:
    """Apply ``plan`` to the item at ``key`` inside ``txn``, with the index maintenance and the change log entry
    ``table`` needs."""
    return _apply_in(ctx, txn, table, key, plan, ctx.changelog.plan(table))


def _apply_in(ctx: Context, txn: WriteTxn, table: TableDef, key: bytes, plan: Plan, logged: LogPlan) -> WriteResult:
    # A table without indexes that no change log consumer follows pays these three tests.
    if table.lsis or table.gsis or logged.need:
        return _apply(txn, key, plan, table=table, ctx=ctx, logged=logged)
    return _apply(txn, key, plan)


def _apply(
    txn: WriteTxn,
    key: bytes,
    plan: Plan,
    *,
    table: TableDef | None = None,
    ctx: Context | None = None,
    logged: LogPlan | None = None,
) -> WriteResult:
    """With ``table``, ``ctx`` and ``logged`` (a table with indexes or followed by a change log consumer, and the
    change log's plan for it) the indexes are maintained and the change log is asked to log the change in
    ``txn``. The old item is decoded when the plan or the indexes need it; the change log decodes it only when it
    must (to tell an overwrite that changed nothing), and logs the stored bytes as they are."""
    indexed = table is not None and bool(table.lsis or table.gsis)
    # A put that reads nothing before it writes learns what it replaced from the write itself (its size is
    # what capacity and the table's statistics need; a change log, the bytes).
    blind = not indexed and not plan.needs_old and isinstance(plan, PutPlan)
    raw = None if blind else txn.get(key)
    old = decode_item(raw) if raw is not None and (indexed or plan.needs_old) else None
    applied = plan.apply(old)
    if applied is CONDITION_FAILED:
        raise ConditionFailedError(old)
    new = applied.new
    new_size = _new_size(plan, new)
    _check_result(plan, new, new_size)
    new_raw = None
    if new is not None:
        new_raw = encode_item(new, new_size)
        if blind:
            raw = txn.swap(key, new_raw)
        else:
            txn.put(key, new_raw)
    elif raw is not None:
        txn.delete(key)
    old_size = stored_size(raw) if raw is not None else 0
    effects = None
    if ctx is not None and table is not None and logged is not None:
        if table.lsis or table.gsis:
            effects = indexes.apply_write(
                ctx.indexes,
                txn,
                table,
                key,
                (old, raw, old_size, new, new_raw, new_size),
                updated=isinstance(plan, UpdatePlan),
            )
        gsi = effects.gsi_changes if effects is not None else []
        # The service's own changes (TTL deletions) say so in their record: a stream record's userIdentity.
        by_service = ctx.origin.is_service
        ctx.changelog.log_write(txn, table, logged, key, (old, raw, new, new_raw), gsi, by_service, ctx.origin)
    return WriteResult(raw is not None, old, new, old_size, new_size, applied.updated_paths, effects)


def _new_size(plan: Plan, new: Item | None) -> int:
    if new is None:
        return 0
    if isinstance(plan, PutPlan) and plan.size is not None:
        return plan.size
    return item_size(new)


def _record_stats(ctx: Context, table: TableDef, result: WriteResult) -> None:
    catalog = ctx.catalog.owner(table)  # the table's namespace's, whichever context wrote
    catalog.add_stats(table.name, (result.new is not None) - result.existed, result.new_size - result.old_size)
    if result.index is not None:
        for index_id, items, size in result.index.lsi_stats:
            catalog.add_index_stats(table.name, index_id, items, size)


def _check_result(plan: Plan, new: Item | None, new_size: int) -> None:
    """Checks that need the new item; raising here aborts the transaction."""
    if not isinstance(plan, UpdatePlan):
        return
    if new_size > MAX_ITEM_BYTES:
        raise ValidationException(messages.ITEM_TOO_LARGE_AFTER_UPDATE, bare=True)
    # A SET of a nested path, or of a copied value, can nest the item past 32 levels: only its targets are walked.
    if plan.update is not None and new is not None:
        for path, _ in plan.update.sets:
            value = new.get(path[0])
            if value is not None and nesting_exceeded(value):
                raise ValidationException(messages.AV_NESTING, bare=True)
