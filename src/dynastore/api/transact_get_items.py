"""TransactGetItems: up to 100 Gets across tables, read from one snapshot, with projections.

Capacity (docs/capacity.md): a read has no effect, so, as for GetItem, each item is admitted after it was read, at
its exact transactional cost (two strongly consistent reads). A global table with multi-Region strong
consistency refuses transactions (api/multi_region_strong.py). A refusal cancels the transaction, with
``ProvisionedThroughputExceeded`` or ``ThrottlingError`` at the refused items' positions, and gives back what
the other items took.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.multi_region_strong import check_transaction_table
from dynastore.api.read_requests import check_key_paths
from dynastore.engine import transactions
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, key_schema_problem, storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionCache, ExpressionContext, project
from dynastore.validation.attribute_values import check_item
from dynastore.validation.common import check_expression_params


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    gets = [entry["Get"] for entry in req["TransactItems"]]
    projections = [_projection(get, ctx.expressions) for get in gets]

    # A Key that does not fit its table's schema cancels the transaction (ValidationError at the first such
    # Get); an empty or oversized key value fails the request itself.
    tables = []
    misfit: tuple[int, str] | None = None
    for index, get in enumerate(gets):
        table = ctx.catalog.get_active(get["TableName"])
        check_transaction_table(table)
        tables.append(table)
        problem = key_schema_problem(table, get["Key"], is_full_item=False)
        if problem is None:
            check_table_key(table, get["Key"], is_full_item=False)
        elif misfit is None:
            misfit = (index, problem)
    if misfit is not None:
        raise transactions.canceled_by_invalid_key(len(gets), *misfit)

    actions: list[transactions.GetAction] = []
    seen: set[bytes] = set()
    for get, projection, table in zip(gets, projections, tables, strict=True):
        if projection is not None:
            check_key_paths(table, projection.paths)
        key = storage_key(table, get["Key"])
        if key in seen:
            raise ValidationException(messages.TRANSACTION_MULTIPLE_OPERATIONS_ON_ITEM, bare=True)
        seen.add(key)
        actions.append(transactions.GetAction(table, key))

    outcomes = transactions.execute_get(ctx, actions)

    responses: list[dict[str, Any]] = []
    units: dict[str, int] = {}
    for action, outcome, projection in zip(actions, outcomes, projections, strict=True):
        item = outcome.item
        if item is None:
            responses.append({})
        else:
            responses.append({"Item": item if projection is None else project(item, projection)})
        name = action.table.name
        units[name] = units.get(name, 0) + outcome.half_units
    response: dict[str, Any] = {"Responses": responses}
    mode = req.get("ReturnConsumedCapacity")
    if mode is not None and mode != "NONE":
        response["ConsumedCapacity"] = [consumed_capacity(mode, name, half) for name, half in units.items()]
    return response


def _projection(get: dict[str, Any], cache: ExpressionCache) -> Any:
    check_expression_params(get, ("ProjectionExpression",), ())
    check_item(get["Key"])
    exprs = ExpressionContext(get.get("ExpressionAttributeNames"), None, cache)
    text = get.get("ProjectionExpression")
    projection = exprs.projection(text) if text is not None else None
    exprs.check_unused()
    return projection
