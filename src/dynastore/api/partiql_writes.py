"""PartiQL INSERT, UPDATE and DELETE: one item each, as the engine's write plans (engine/writes.py).

* INSERT is a Put under ``attribute_not_exists(<partition key>)``; a key that exists is DuplicateItemException;
* UPDATE names the whole key by equalities in its WHERE clause; the rest of the clause is the condition, and the
  item must exist (an Update under ``attribute_exists``): a missing item is ConditionalCheckFailedException;
* DELETE names the whole key the same way; the rest of the clause is the condition (a missing item without one
  is no error).

``prepare_write`` makes the plan (all the checks a request gets before it writes); ExecuteStatement and
BatchExecuteStatement run it with ``writes.perform``, ExecuteTransaction as one action of a transaction.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.partiql_requests import table_of
from dynastore.engine import writes
from dynastore.engine.capacity.units import write_half_units
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, key_attributes, storage_key
from dynastore.errors import (
    ConditionalCheckFailedException,
    DuplicateItemException,
    DynamoError,
    ValidationException,
)
from dynastore.expressions import ResolvedCondition, ResolvedUpdate, updated_view
from dynastore.expressions.ast import AndCondition, FunctionCondition, PathOperand, ResolvedNode
from dynastore.global_tables.strong import StrongTables
from dynastore.limits import MAX_ITEM_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.model.values import AttributeValue, Item
from dynastore.partiql import ast, bind_value, split_key, translate_condition, translate_projection, translate_update
from dynastore.validation.attribute_values import check_item

__all__ = ["PreparedWrite", "perform", "prepare_write", "returned_items", "write_capacity"]


class PreparedWrite:
    """A write statement made ready: its table, key (storage form too), plan and RETURNING."""

    __slots__ = ("kind", "table", "key", "stored_key", "plan", "returning")

    def __init__(self, kind: str, table: TableDef, key: Item, plan: writes.Plan, returning: str | None) -> None:
        self.kind = kind  # INSERT, UPDATE or DELETE
        self.table = table
        self.key = key
        self.stored_key = storage_key(table, key)
        self.plan = plan
        self.returning = returning


def _exists(name: str, *, negated: bool = False) -> ResolvedNode:
    return FunctionCondition("attribute_not_exists" if negated else "attribute_exists", (PathOperand((name,)),))


def key_names(table: TableDef) -> tuple[str, ...]:
    schema = table.key_schema
    return (schema.hash_key.name,) if schema.range_key is None else (schema.hash_key.name, schema.range_key.name)


def keyed_where(
    table: TableDef, where: ast.Condition | None, params: list[AttributeValue]
) -> tuple[Item, ResolvedNode | None]:
    """The key a WHERE clause names by equalities on every key attribute, and the rest of the clause."""
    resolved = translate_condition(where, params) if where is not None else None
    split = split_key(resolved, key_names(table))
    if split is None:
        raise ValidationException(messages.PARTIQL_KEY_EQUALITY, bare=True)
    key, rest = split
    check_table_key(table, key, is_full_item=False)
    return key, rest


def prepare_write(
    ctx: Context, statement: ast.Insert | ast.Update | ast.Delete, params: list[AttributeValue]
) -> PreparedWrite:
    table = table_of(ctx, statement.table)
    if isinstance(statement, ast.Insert):
        value = bind_value(statement.item, params)
        item = value.get("M")
        if not isinstance(item, dict):
            raise ValidationException(messages.PARTIQL_INSERT_NOT_TUPLE, bare=True)
        check_item(item)
        size = item_size(item)
        if size > MAX_ITEM_BYTES:
            raise ValidationException(messages.ITEM_TOO_LARGE, bare=True)
        check_table_key(table, item, is_full_item=True)
        condition = ResolvedCondition(_exists(table.key_schema.hash_key.name, negated=True))
        key = {name: item[name] for name in key_names(table)}
        return PreparedWrite("INSERT", table, key, writes.PutPlan(item, condition, size), None)
    key, rest = keyed_where(table, statement.where, params)
    if isinstance(statement, ast.Update):
        update = translate_update(statement.actions, params)
        _check_key_untouched(table, update)
        exists = _exists(table.key_schema.hash_key.name)
        condition = ResolvedCondition(exists if rest is None else AndCondition(exists, rest))
        return PreparedWrite("UPDATE", table, key, writes.UpdatePlan(key, update, condition), statement.returning)
    plan = writes.DeletePlan(
        ResolvedCondition(rest) if rest is not None else None, return_old=statement.returning == "ALL_OLD"
    )
    return PreparedWrite("DELETE", table, key, plan, statement.returning)


def _check_key_untouched(table: TableDef, update: ResolvedUpdate) -> None:
    targets = {path[0] for path in update.paths}
    for name in key_names(table):
        if name in targets:
            raise ValidationException(messages.CANNOT_UPDATE_KEY.format(name=name), bare=True)


def perform(
    ctx: Context, prepared: PreparedWrite, strong: StrongTables, *, return_old_on_failure: bool
) -> writes.WriteResult:
    """Run the write (``writes.perform``: conflicts, capacity, one storage transaction), with PartiQL's errors; a
    write to an MRSC table is applied to the set's other regions of this server too (``strong.spread``). (With a
    strong log, such a write runs through ``perform_logged`` instead.)"""
    try:
        result = writes.perform(ctx, prepared.table, prepared.stored_key, prepared.plan)
    except writes.ConditionFailedError as e:
        raise _condition_failed(prepared, e, return_old_on_failure) from None
    if prepared.table.strong_log is not None:
        strong.spread(ctx, prepared.table, key_attributes(prepared.table, prepared.key))
    return result


async def perform_logged(
    ctx: Context, prepared: PreparedWrite, strong: StrongTables, *, return_old_on_failure: bool
) -> writes.WriteResult:
    """``perform`` of a write to an MRSC table whose writes are committed to a strong log."""
    try:
        return await strong.write(ctx, prepared.table, key_attributes(prepared.table, prepared.key), prepared.plan)
    except writes.ConditionFailedError as e:
        raise _condition_failed(prepared, e, return_old_on_failure) from None


def _condition_failed(prepared: PreparedWrite, e: writes.ConditionFailedError, return_old: bool) -> DynamoError:
    if prepared.kind == "INSERT":
        return DuplicateItemException(messages.PARTIQL_DUPLICATE_ITEM)
    if return_old and e.old is not None:
        return ConditionalCheckFailedException(Item=e.old)
    return ConditionalCheckFailedException()


def returned_items(prepared: PreparedWrite, result: writes.WriteResult) -> list[Item]:
    """What RETURNING asks for: the whole item or the modified attributes, before or after."""
    returning = prepared.returning
    if returning is None:
        return []
    source = result.old if returning.endswith("OLD") else result.new
    if source is None:
        return []
    if returning.startswith("MODIFIED"):
        if result.updated_paths is None:
            return []
        source = updated_view(source, result.updated_paths)
    return [source] if source else []


def write_capacity(mode: str | None, table_name: str, result: writes.WriteResult) -> dict[str, Any] | None:
    """A write's ConsumedCapacity: the table's write units, and its index writes (PutItem's rule)."""
    lsi, gsi = result.index_half_units()
    return consumed_capacity(
        mode,
        table_name,
        write_half_units(max(result.old_size, result.new_size)),
        lsi_half_units=lsi,
        gsi_half_units=gsi,
    )


class KeyedRead:
    """A SELECT of one item by its full key (BatchExecuteStatement, ExecuteTransaction, EXISTS)."""

    __slots__ = ("table", "key", "condition", "projection")

    def __init__(self, table: TableDef, key: Item, condition: ResolvedCondition | None, projection: Any) -> None:
        self.table = table
        self.key = key
        self.condition = condition  # the rest of the WHERE clause, evaluated on the item read
        self.projection = projection


def keyed_read(
    ctx: Context, select: ast.Select, params: list[AttributeValue], *, key_message: str, index_message: str
) -> KeyedRead:
    table = table_of(ctx, select.table)
    if select.index is not None:
        raise ValidationException(index_message, bare=True)
    resolved = translate_condition(select.where, params) if select.where is not None else None
    split = split_key(resolved, key_names(table))
    if split is None:
        raise ValidationException(key_message, bare=True)
    key, rest = split
    check_table_key(table, key, is_full_item=False)
    return KeyedRead(
        table, key, ResolvedCondition(rest) if rest is not None else None, translate_projection(select.projection)
    )
