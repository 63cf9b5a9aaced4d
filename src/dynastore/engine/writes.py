"""Single-item writes: one plan, one storage transaction.

A plan's ``apply(old)`` is pure: it evaluates the condition against the stored item and returns the new item,
or CONDITION_FAILED. ``execute`` reads the old item, applies the plan and writes the result in one transaction;
the server answers only once that transaction is durable (see storage/group_commit.py).

On a table with secondary indexes the same transaction also writes the LSI entries, the GSI backlog record
and the item collection's size (engine/indexes.py); a table without indexes pays one truth test for that.
"""

from __future__ import annotations

from typing import Any, Final

from dynastore import messages
from dynastore.engine import indexes
from dynastore.engine.context import Context
from dynastore.errors import ValidationException
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

    def apply(self, old: Item | None) -> Applied:
        if self.condition is not None and not evaluate(self.condition, old):
            return CONDITION_FAILED
        return Applied(None)


class UpdatePlan:
    __slots__ = ("key", "update", "condition")
    needs_old = True

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


def execute(ctx: Context, table: TableDef, key: bytes, plan: Plan) -> WriteResult:
    """Apply ``plan`` to the item at ``key`` atomically. Raises ConditionFailedError (nothing written), or
    StorageUnavailableError while the store refuses writes (a delete still runs on a full disk: it frees space)."""
    with ctx.kv.write(frees_space=isinstance(plan, DeletePlan)) as txn:
        result = apply_in(ctx, txn, table, key, plan)
    _record_stats(ctx, table, result)
    return result


def execute_batch(ctx: Context, writes: list[tuple[TableDef, bytes, Plan]]) -> list[WriteResult]:
    """Apply unconditional plans to distinct keys in one storage transaction (BatchWriteItem)."""
    with ctx.kv.write(frees_space=all(isinstance(plan, DeletePlan) for _, _, plan in writes)) as txn:
        results = [apply_in(ctx, txn, table, key, plan) for table, key, plan in writes]
    for (table, _, _), result in zip(writes, results, strict=True):
        _record_stats(ctx, table, result)
    return results


def apply_in(ctx: Context, txn: WriteTxn, table: TableDef, key: bytes, plan: Plan) -> WriteResult:
    """Apply ``plan`` to the item at ``key`` inside ``txn``, with the index maintenance ``table`` needs."""
    if table.lsis or table.gsis:
        return _apply(txn, key, plan, table=table, index_state=ctx.indexes)
    return _apply(txn, key, plan)


def _apply(
    txn: WriteTxn,
    key: bytes,
    plan: Plan,
    *,
    table: TableDef | None = None,
    index_state: indexes.IndexState | None = None,
) -> WriteResult:
    """With ``table`` and ``index_state`` (a table with indexes) the old item is always decoded and the indexes
    are maintained in ``txn``."""
    raw = txn.get(key)
    maintained = index_state is not None and table is not None
    old = decode_item(raw) if raw is not None and (maintained or plan.needs_old) else None
    applied = plan.apply(old)
    if applied is CONDITION_FAILED:
        raise ConditionFailedError(old)
    new = applied.new
    old_size = stored_size(raw) if raw is not None else 0
    new_size = _new_size(plan, new)
    _check_result(plan, new, new_size)
    new_raw = None
    if new is not None:
        new_raw = encode_item(new, new_size)
        txn.put(key, new_raw)
    elif raw is not None:
        txn.delete(key)
    effects = None
    if index_state is not None and table is not None:
        effects = indexes.apply_write(
            index_state,
            txn,
            table,
            key,
            (old, raw, old_size, new, new_raw, new_size),
            updated=isinstance(plan, UpdatePlan),
        )
    return WriteResult(raw is not None, old, new, old_size, new_size, applied.updated_paths, effects)


def _new_size(plan: Plan, new: Item | None) -> int:
    if new is None:
        return 0
    if isinstance(plan, PutPlan) and plan.size is not None:
        return plan.size
    return item_size(new)


def _record_stats(ctx: Context, table: TableDef, result: WriteResult) -> None:
    ctx.catalog.add_stats(table.name, (result.new is not None) - result.existed, result.new_size - result.old_size)
    if result.index is not None:
        for index_id, items, size in result.index.lsi_stats:
            ctx.catalog.add_index_stats(table.name, index_id, items, size)


def _check_result(plan: Plan, new: Item | None, new_size: int) -> None:
    """Checks that need the new item; raising here aborts the transaction."""
    if not isinstance(plan, UpdatePlan):
        return
    if new_size > MAX_ITEM_BYTES:
        raise ValidationException(messages.ITEM_TOO_LARGE_AFTER_UPDATE)
    # A SET of a nested path, or of a copied value, can nest the item past 32 levels: only its targets are walked.
    if plan.update is not None and new is not None:
        for path, _ in plan.update.sets:
            value = new.get(path[0])
            if value is not None and nesting_exceeded(value):
                raise ValidationException(messages.AV_NESTING)
