"""TransactWriteItems: up to 100 Put, Update, Delete and ConditionCheck actions across tables, all or nothing.

Phase 3 checks, in order: one action per entry; each action's expressions, item and key well-formed (in
request order); the 4 MB payload; tables (a global table with multi-Region strong consistency refuses
transactions: api/multi_region_strong.py); key attributes against each schema; at most one action per item.
Failures found only while applying (a condition, an updated item grown too large) cancel the transaction
with CancellationReasons (engine/transactions.py).

Capacity (docs/capacity.md): before the transaction runs, every action is admitted on its item's partition at
transactional cost (two units of work per item): a Put at its item's size (and on the partitions of the GSIs
the item goes into), the others at one write unit, settled at their real cost after the commit. A refusal
cancels the transaction, with ``ProvisionedThroughputExceeded`` or ``ThrottlingError`` at the refused items'
positions, and gives back what the other actions took.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.item_requests import item_collection_metrics
from dynastore.api.multi_region_strong import check_transaction_table
from dynastore.engine import transactions, writes
from dynastore.engine.capacity.units import write_half_units
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, key_schema_problem, storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionCache, ExpressionContext, ResolvedUpdate
from dynastore.limits import MAX_ITEM_BYTES, MAX_TRANSACT_PAYLOAD_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.validation.attribute_values import check_item
from dynastore.validation.common import check_expression_params

_KINDS = ("ConditionCheck", "Put", "Delete", "Update")


@dataclass(frozen=True, slots=True)
class _Parsed:
    kind: str
    body: dict[str, Any]
    condition: Any
    update: ResolvedUpdate | None
    payload: int
    size: int  # of the Put's item (of the key for the other actions)


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    parsed = [_parse(entry, ctx.expressions) for entry in req["TransactItems"]]
    payload = sum(p.payload for p in parsed)
    if payload > MAX_TRANSACT_PAYLOAD_BYTES:
        raise ValidationException(messages.TRANSACT_PAYLOAD_TOO_LARGE.format(size=payload))

    tables = _check_keys(ctx, parsed)
    actions: list[transactions.WriteAction] = []
    seen: set[bytes] = set()
    for p, table in zip(parsed, tables, strict=True):
        source = p.body["Item"] if p.kind == "Put" else p.body["Key"]
        if p.update is not None:
            _check_key_untouched(table, p.update)
        key = storage_key(table, source)
        if key in seen:
            raise ValidationException(messages.TRANSACTION_MULTIPLE_OPERATIONS_ON_ITEM, bare=True)
        seen.add(key)
        return_old = p.body.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
        actions.append(transactions.WriteAction(table, key, _plan(p), return_old))

    outcome, response = perform_transaction(req, ctx, actions)
    if req.get("ReturnItemCollectionMetrics") == "SIZE" and outcome.replayed is None:
        written = zip((action.table for action in actions), outcome.results, strict=True)
        response["ItemCollectionMetrics"] = item_collection_metrics(written)
    return response


def _check_keys(ctx: Context, parsed: list[_Parsed]) -> list[TableDef]:
    """Every member's table, then its key against the schema: a key that does not fit (an attribute missing or
    of another type) cancels the transaction with a ValidationError reason at the first such member, before
    duplicates and conditions are looked at; an empty or oversized key value fails the request itself."""
    tables: list[TableDef] = []
    misfit: tuple[int, str] | None = None
    for index, p in enumerate(parsed):
        table = ctx.catalog.get_active(p.body["TableName"])
        check_transaction_table(table)
        tables.append(table)
        source = p.body["Item"] if p.kind == "Put" else p.body["Key"]
        problem = key_schema_problem(table, source, is_full_item=p.kind == "Put")
        if problem is None:
            check_table_key(table, source, is_full_item=p.kind == "Put")
        elif misfit is None:
            misfit = (index, problem)
    if misfit is not None:
        raise transactions.canceled_by_invalid_key(len(parsed), *misfit)
    return tables


def _parse(entry: dict[str, Any], cache: ExpressionCache) -> _Parsed:
    present = [kind for kind in _KINDS if entry.get(kind) is not None]
    if len(present) > 1:
        raise ValidationException(messages.TRANSACT_ITEM_MULTIPLE_ACTIONS)
    if not present:
        raise ValidationException(messages.TRANSACT_ITEM_NO_ACTION)
    kind = present[0]
    body: dict[str, Any] = entry[kind]
    expressions = ("UpdateExpression", "ConditionExpression") if kind == "Update" else ("ConditionExpression",)
    check_expression_params(body, expressions, ())
    source: Item = body["Item"] if kind == "Put" else body["Key"]
    check_item(source)
    size = item_size(source)
    if kind == "Put" and size > MAX_ITEM_BYTES:
        raise ValidationException(messages.ITEM_TOO_LARGE, bare=True)
    exprs = ExpressionContext(body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues"), cache)
    update = exprs.update(body["UpdateExpression"]) if kind == "Update" else None
    text = body.get("ConditionExpression")
    condition = exprs.condition("ConditionExpression", text) if text is not None else None
    exprs.check_unused()
    payload = size + sum(len(body.get(name, "").encode()) for name in expressions)
    return _Parsed(kind, body, condition, update, payload, size)


def _plan(p: _Parsed) -> writes.Plan | transactions.ConditionCheckPlan:
    if p.kind == "Put":
        return writes.PutPlan(p.body["Item"], p.condition, p.size)
    if p.kind == "Update":
        return writes.UpdatePlan(p.body["Key"], p.update, p.condition)
    if p.kind == "Delete":
        return writes.DeletePlan(p.condition)
    return transactions.ConditionCheckPlan(p.condition)


def _check_key_untouched(table: TableDef, update: ResolvedUpdate) -> None:
    targets = {path[0] for path in update.paths}
    for key_attr in (table.key_schema.hash_key, table.key_schema.range_key):
        if key_attr is not None and key_attr.name in targets:
            raise ValidationException(messages.CANNOT_UPDATE_KEY.format(name=key_attr.name), bare=True)


def perform_transaction(
    req: dict[str, Any], ctx: Context, actions: list[transactions.WriteAction]
) -> tuple[transactions.WriteOutcome, dict[str, Any]]:
    """Run a write transaction's actions (once per ClientRequestToken) and start its response with the capacity
    it consumed: TransactWriteItems and PartiQL's ExecuteTransaction share both."""
    token = req.get("ClientRequestToken")
    request_hash = _request_hash(req) if token is not None else ""
    outcome = transactions.perform_write(ctx, actions, token=token, request_hash=request_hash)
    response: dict[str, Any] = {}
    mode = req.get("ReturnConsumedCapacity")
    if mode is not None and mode != "NONE":
        if outcome.replayed is not None:  # a repeated token reports the reads of the items, not the writes
            response["ConsumedCapacity"] = [
                consumed_capacity(mode, name, units) for name, units in outcome.replayed.read_half_units.items()
            ]
        else:
            response["ConsumedCapacity"] = transaction_write_capacity(mode, actions, outcome.results)
    return outcome, response


def _request_hash(req: dict[str, Any]) -> str:
    """What makes two requests "the same" for a ClientRequestToken (ReturnConsumedCapacity aside)."""
    significant = {name: value for name, value in req.items() if name != "ReturnConsumedCapacity"}
    return hashlib.sha256(orjson.dumps(significant, option=orjson.OPT_SORT_KEYS)).hexdigest()


def transaction_write_capacity(
    mode: str, actions: list[transactions.WriteAction], results: list[writes.WriteResult]
) -> list[dict[str, Any]]:
    """Two units of work per item (prepare and commit): transactional writes cost double, indexes too."""
    tables: dict[str, list[Any]] = {}  # name -> [table half units, lsi units, gsi units]
    for action, result in zip(actions, results, strict=True):
        entry = tables.setdefault(action.table.name, [0, {}, {}])
        entry[0] += write_half_units(max(result.old_size, result.new_size), transactional=True)
        if isinstance(action.plan, transactions.ConditionCheckPlan):
            continue
        lsi, gsi = result.index_half_units(factor=2)
        for bucket, units in ((entry[1], lsi), (entry[2], gsi)):
            for index_name, half_units in units.items():
                bucket[index_name] = bucket.get(index_name, 0) + half_units
    consumed = []
    for name, (table_units, lsi_units, gsi_units) in tables.items():
        capacity = consumed_capacity(mode, name, table_units, lsi_half_units=lsi_units, gsi_half_units=gsi_units)
        if capacity is not None:
            consumed.append(capacity)
    return consumed
