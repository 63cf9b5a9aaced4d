"""PutItem: create or replace one item, optionally under a condition."""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api import strong_items
from dynastore.api.item_requests import (
    add_write_capacity,
    conditional_check_failed,
    expression_context,
    legacy_write_condition,
    uses_expressions,
    write_condition,
)
from dynastore.api.services import RequestServices
from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import ValidationException
from dynastore.limits import MAX_ITEM_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.validation.attribute_values import check_item
from dynastore.validation.common import check_conditional_operator, check_expression_params


def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> strong_items.Answer:
    with_expressions = uses_expressions(req, "ConditionExpression")
    if with_expressions:
        check_expression_params(req, ("ConditionExpression",), ("Expected", "ConditionalOperator"))
    check_conditional_operator(req, "Expected")
    item = req["Item"]
    check_item(item)
    return_values = req.get("ReturnValues")
    if return_values is not None and return_values not in ("NONE", "ALL_OLD"):
        raise ValidationException(messages.RETURN_VALUES_PUT_DELETE)
    if with_expressions:
        exprs = expression_context(req, ctx.expressions)
        condition = write_condition(req, exprs)
        exprs.check_unused()
    else:
        condition = legacy_write_condition(req)

    table = ctx.catalog.get_active(req["TableName"])
    size = item_size(item)
    if size > MAX_ITEM_BYTES:  # after the table's existence, as DynamoDB checks it (docs/validation-order.md)
        raise ValidationException(messages.ITEM_TOO_LARGE, bare=True)
    check_table_key(table, item, is_full_item=True)
    plan = writes.PutPlan(item, condition, size, return_old=return_values == "ALL_OLD")
    if table.strong_log is not None:
        return strong_items.write(req, ctx, services, table, item, plan, lambda result: _answer(req, table, result))
    try:
        result = writes.perform(ctx, table, storage_key(table, item), plan)
    except writes.ConditionFailedError as e:
        raise conditional_check_failed(req, e) from None
    return _answer(req, table, result)


def _answer(req: dict[str, Any], table: TableDef, result: writes.WriteResult) -> dict[str, Any]:
    response: dict[str, Any] = {}
    if req.get("ReturnValues") == "ALL_OLD" and result.old is not None:
        response["Attributes"] = result.old
    add_write_capacity(response, req, table, result)
    return response
