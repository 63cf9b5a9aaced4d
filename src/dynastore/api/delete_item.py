"""DeleteItem: remove one item, optionally under a condition."""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api import strong_items
from dynastore.api.item_requests import (
    add_write_capacity,
    conditional_check_failed,
    expression_context,
    write_condition,
)
from dynastore.api.services import RequestServices
from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import ValidationException
from dynastore.model.table_schema import TableDef
from dynastore.validation.attribute_values import check_item
from dynastore.validation.common import check_conditional_operator, check_expression_params


def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> strong_items.Answer:
    check_expression_params(req, ("ConditionExpression",), ("Expected", "ConditionalOperator"))
    check_conditional_operator(req, "Expected")
    key = req["Key"]
    check_item(key)
    return_values = req.get("ReturnValues")
    if return_values is not None and return_values not in ("NONE", "ALL_OLD"):
        raise ValidationException(messages.RETURN_VALUES_PUT_DELETE)
    exprs = expression_context(req, ctx.expressions)
    condition = write_condition(req, exprs)
    exprs.check_unused()

    table = ctx.catalog.get_active(req["TableName"])
    check_table_key(table, key, is_full_item=False)
    plan = writes.DeletePlan(condition, return_old=return_values == "ALL_OLD")
    if table.strong_log is not None:
        return strong_items.write(req, ctx, services, table, key, plan, lambda result: _answer(req, table, result))
    try:
        result = writes.perform(ctx, table, storage_key(table, key), plan)
    except writes.ConditionFailedError as e:
        raise conditional_check_failed(req, e) from None
    return _answer(req, table, result)


def _answer(req: dict[str, Any], table: TableDef, result: writes.WriteResult) -> dict[str, Any]:
    response: dict[str, Any] = {}
    if req.get("ReturnValues") == "ALL_OLD" and result.old is not None:
        response["Attributes"] = result.old
    add_write_capacity(response, req, table, result)
    return response
