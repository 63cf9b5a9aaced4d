"""UpdateItem: change attributes of one item (creating it if absent), optionally under a condition."""

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
from dynastore.expressions import ResolvedUpdate, legacy, updated_view
from dynastore.model.table_schema import TableDef
from dynastore.validation.attribute_values import check_attribute_updates, check_item
from dynastore.validation.common import check_conditional_operator, check_expression_params


def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> strong_items.Answer:
    check_expression_params(
        req, ("UpdateExpression", "ConditionExpression"), ("AttributeUpdates", "Expected", "ConditionalOperator")
    )
    check_conditional_operator(req, "Expected")
    key = req["Key"]
    check_item(key)
    exprs = expression_context(req, ctx.expressions)
    text = req.get("UpdateExpression")
    attribute_updates = req.get("AttributeUpdates")
    if text is not None:
        update = exprs.update(text)
    elif attribute_updates:
        check_attribute_updates(attribute_updates)
        update = legacy.attribute_updates(attribute_updates)
    else:
        update = None
    condition = write_condition(req, exprs)
    exprs.check_unused()

    table = ctx.catalog.get_active(req["TableName"])
    check_table_key(table, key, is_full_item=False)
    if update is not None:
        _check_key_untouched(table, update)
    plan = writes.UpdatePlan(key, update, condition)
    if table.strong_log is not None:
        return strong_items.write(req, ctx, services, table, key, plan, lambda result: _answer(req, table, result))
    try:
        result = writes.perform(ctx, table, storage_key(table, key), plan)
    except writes.ConditionFailedError as e:
        raise conditional_check_failed(req, e) from None
    return _answer(req, table, result)


def _answer(req: dict[str, Any], table: TableDef, result: writes.WriteResult) -> dict[str, Any]:
    response: dict[str, Any] = {}
    attributes = _returned_attributes(req.get("ReturnValues"), result)
    if attributes:
        response["Attributes"] = attributes
    add_write_capacity(response, req, table, result)
    return response


def _check_key_untouched(table: TableDef, update: ResolvedUpdate) -> None:
    targets = {path[0] for path in update.paths}
    for key_attr in (table.key_schema.hash_key, table.key_schema.range_key):
        if key_attr is not None and key_attr.name in targets:
            raise ValidationException(messages.CANNOT_UPDATE_KEY.format(name=key_attr.name), bare=True)


def _returned_attributes(return_values: str | None, result: writes.WriteResult) -> dict[str, Any] | None:
    if return_values is None or return_values == "NONE":
        return None
    if return_values == "ALL_OLD":
        return result.old
    if return_values == "ALL_NEW":
        return result.new
    if result.updated_paths is None:
        return None
    source = result.old if return_values == "UPDATED_OLD" else result.new
    if source is None:
        return None
    return updated_view(source, result.updated_paths)
