"""TransactGetItems: up to 100 Gets across tables, read from one snapshot, with projections."""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.context import Context
from dynastore.engine import transactions
from dynastore.engine.capacity import consumed_capacity, read_half_units
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, project
from dynastore.model.item_size import item_size
from dynastore.validation.attribute_values import check_item
from dynastore.validation.common import check_expression_params


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    gets = [entry["Get"] for entry in req["TransactItems"]]
    projections = [_projection(get) for get in gets]

    actions: list[transactions.GetAction] = []
    seen: set[bytes] = set()
    for get in gets:
        table = ctx.catalog.get_active(get["TableName"])
        check_table_key(table, get["Key"], is_full_item=False)
        key = storage_key(table, get["Key"])
        if key in seen:
            raise ValidationException(messages.TRANSACTION_MULTIPLE_OPERATIONS_ON_ITEM)
        seen.add(key)
        actions.append(transactions.GetAction(table, key))

    items = transactions.execute_get(ctx, actions)

    responses: list[dict[str, Any]] = []
    units: dict[str, int] = {}
    for action, item, projection in zip(actions, items, projections, strict=True):
        size = 0
        if item is None:
            responses.append({})
        else:
            size = item_size(item)
            responses.append({"Item": item if projection is None else project(item, projection)})
        name = action.table.name
        units[name] = units.get(name, 0) + read_half_units(size, consistent=True, transactional=True)
    response: dict[str, Any] = {"Responses": responses}
    mode = req.get("ReturnConsumedCapacity")
    if mode is not None and mode != "NONE":
        response["ConsumedCapacity"] = [consumed_capacity(mode, name, half) for name, half in units.items()]
    return response


def _projection(get: dict[str, Any]) -> Any:
    check_expression_params(get, ("ProjectionExpression",), ())
    check_item(get["Key"])
    exprs = ExpressionContext(get.get("ExpressionAttributeNames"), None)
    text = get.get("ProjectionExpression")
    projection = exprs.projection(text) if text is not None else None
    exprs.check_unused()
    return projection
