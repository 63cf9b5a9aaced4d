"""ExecuteTransaction: up to 100 PartiQL statements, all or nothing, on the machinery of TransactWriteItems and
TransactGetItems (engine/transactions.py).

A transaction is all reads (SELECT by full key: TransactGetItems) or all writes, where ``EXISTS(SELECT ...)`` is
a condition check (ConditionCheck). A statement that fails validation fails the request with
``Validation failed in TransactStatements[i]: ...``; a condition that fails cancels the transaction with
CancellationReasons (an INSERT of a key that exists: ``DuplicateItem``). ClientRequestToken makes a write
transaction idempotent, as TransactWriteItems' does. A global table with multi-Region strong consistency refuses
transactions, as TransactWriteItems and TransactGetItems do (api/multi_region_strong.py).
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.multi_region_strong import check_transaction_table
from dynastore.api.partiql_requests import parameters, parsed_statement
from dynastore.api.partiql_writes import KeyedRead, keyed_read, prepare_write
from dynastore.api.services import RequestServices
from dynastore.api.transact_write_items import perform_transaction
from dynastore.engine import transactions
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ResolvedCondition, evaluate, project
from dynastore.expressions.ast import AndCondition, FunctionCondition, PathOperand
from dynastore.partiql import ast

_READ = dict(key_message=messages.PARTIQL_TRANSACTION_READ_KEY, index_message=messages.PARTIQL_TRANSACTION_INDEX_READ)


def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    entries = req["TransactStatements"]
    statements: list[ast.Statement] = []
    for index, entry in enumerate(entries):
        try:
            statements.append(parsed_statement(services.statements, entry["Statement"], parameters(entry)).statement)
        except ValidationException as e:
            raise _in_statement(index, e) from None
    selects = [isinstance(s, ast.Select) for s in statements]
    if any(selects) and not all(selects):
        raise ValidationException(messages.PARTIQL_TRANSACTION_MIXED, bare=True)
    if all(selects):
        return _read(req, ctx, entries, statements)
    return _write(req, ctx, entries, statements)


def _in_statement(index: int, error: ValidationException) -> ValidationException:
    """A statement's validation error, naming the statement."""
    detail = messages.PARTIQL_TRANSACTION_FAILED.format(index=index, detail=error.detail)
    return ValidationException(detail, bare=error.bare)


def _read(
    req: dict[str, Any], ctx: Context, entries: list[dict[str, Any]], statements: list[ast.Statement]
) -> dict[str, Any]:
    reads: list[KeyedRead] = []
    for index, (entry, statement) in enumerate(zip(entries, statements, strict=True)):
        assert isinstance(statement, ast.Select)
        try:
            reads.append(keyed_read(ctx, statement, parameters(entry), **_READ))
        except ValidationException as e:
            raise _in_statement(index, e) from None
    actions: list[transactions.GetAction] = []
    seen: set[bytes] = set()
    for read in reads:
        check_transaction_table(read.table)
        key = storage_key(read.table, read.key)
        if key in seen:
            raise ValidationException(messages.TRANSACTION_MULTIPLE_OPERATIONS_ON_ITEM, bare=True)
        seen.add(key)
        actions.append(transactions.GetAction(read.table, key))
    outcomes = transactions.execute_get(ctx, actions)
    responses: list[dict[str, Any]] = []
    units: dict[str, int] = {}
    for read, outcome in zip(reads, outcomes, strict=True):
        item = outcome.item
        if item is not None and (read.condition is None or evaluate(read.condition, item)):
            responses.append({"Item": item if read.projection is None else project(item, read.projection)})
        else:
            responses.append({})
        units[read.table.name] = units.get(read.table.name, 0) + outcome.half_units
    response: dict[str, Any] = {"Responses": responses}
    mode = req.get("ReturnConsumedCapacity")
    if mode is not None and mode != "NONE":
        response["ConsumedCapacity"] = [consumed_capacity(mode, name, half) for name, half in units.items()]
    return response


def _write(
    req: dict[str, Any], ctx: Context, entries: list[dict[str, Any]], statements: list[ast.Statement]
) -> dict[str, Any]:
    actions: list[transactions.WriteAction] = []
    for index, (entry, statement) in enumerate(zip(entries, statements, strict=True)):
        try:
            actions.append(_action(ctx, statement, entry))
        except ValidationException as e:
            raise _in_statement(index, e) from None
    seen: set[bytes] = set()
    for action in actions:
        check_transaction_table(action.table)
        if action.key in seen:
            raise ValidationException(messages.TRANSACTION_MULTIPLE_OPERATIONS_ON_ITEM, bare=True)
        seen.add(action.key)
    return perform_transaction(req, ctx, actions)[1]


def _action(ctx: Context, statement: ast.Statement, entry: dict[str, Any]) -> transactions.WriteAction:
    params = parameters(entry)
    return_old = entry.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
    if isinstance(statement, ast.Exists):
        read = keyed_read(ctx, statement.select, params, **_READ)
        if read.condition is None:
            raise ValidationException(messages.PARTIQL_EXISTS_NEEDS_CONDITION, bare=True)
        exists = FunctionCondition("attribute_exists", (PathOperand((read.table.key_schema.hash_key.name,)),))
        plan = transactions.ConditionCheckPlan(ResolvedCondition(AndCondition(exists, read.condition.root)))
        return transactions.WriteAction(read.table, storage_key(read.table, read.key), plan, return_old)
    assert not isinstance(statement, ast.Select)
    if not isinstance(statement, ast.Insert) and statement.returning is not None:
        raise ValidationException(messages.PARTIQL_TRANSACTION_RETURNING, bare=True)
    prepared = prepare_write(ctx, statement, params)
    failure = ("DuplicateItem", messages.PARTIQL_DUPLICATE_ITEM) if prepared.kind == "INSERT" else None
    return transactions.WriteAction(prepared.table, prepared.stored_key, prepared.plan, return_old, failure)
