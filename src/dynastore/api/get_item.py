"""GetItem: read one item by its key."""

from __future__ import annotations

from functools import partial
from typing import Any, cast

from dynastore import messages
from dynastore.api import strong_items
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.item_requests import expression_context
from dynastore.api.read_requests import check_key_paths
from dynastore.api.services import RequestServices
from dynastore.api.strong_items import Answer
from dynastore.engine.context import Context
from dynastore.engine.item_reads import GetItemRequest, get_item
from dynastore.engine.keys import check_table_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionCache, legacy, project
from dynastore.validation.attribute_values import check_item, check_name
from dynastore.validation.common import check_expression_params


def handle(services: RequestServices, req: dict[str, Any], ctx: Context, caught_up: bool = False) -> Answer:
    check_expression_params(req, ("ProjectionExpression",), ("AttributesToGet",))
    key = req["Key"]
    check_item(key)
    projection = _projection(req, ctx.expressions)

    table = ctx.catalog.get_active(req["TableName"])
    check_table_key(table, key, is_full_item=False)
    if projection is not None:
        check_key_paths(table, projection.paths)
    consistent = bool(req.get("ConsistentRead"))
    if consistent and table.strong_log is not None and not caught_up:  # (an MRSC table: api/strong_items.py)
        again = partial(handle, services, req, ctx, caught_up=True)  # answers at once: a response, never a future
        return strong_items.read(ctx, services, [table], lambda: cast(strong_items.Response, again()))
    # Capacity (docs/capacity.md): a read has no effect, so it is admitted at its exact cost after it ran.
    result = get_item(ctx, GetItemRequest(table, key, consistent=consistent))

    capacity_mode = req.get("ReturnConsumedCapacity")
    wants_capacity = capacity_mode is not None and capacity_mode != "NONE"
    stored_json = result.item_json
    if stored_json is not None and projection is None and not wants_capacity:
        return b'{"Item":' + stored_json + b"}"  # the stored JSON goes out as it is, never decoded

    response: dict[str, Any] = {}
    if stored_json is not None:
        item = result.item()
        response["Item"] = item if projection is None else project(item, projection)
    consumed = consumed_capacity(capacity_mode, req["TableName"], result.half_units)
    if consumed is not None:
        response["ConsumedCapacity"] = consumed
    return response


def _projection(req: dict[str, Any], cache: ExpressionCache) -> Any:
    get = req.get
    if (
        get("ProjectionExpression") is None
        and get("AttributesToGet") is None
        and get("ExpressionAttributeNames") is None
        and get("ExpressionAttributeValues") is None
    ):
        return None  # most GetItems: nothing to resolve, no name or value that could go unused
    attributes = req.get("AttributesToGet")
    if attributes is not None:
        seen: set[str] = set()
        for name in attributes:
            check_name(name)
            if name in seen:
                raise ValidationException(messages.DUPLICATE_ATTRIBUTE_NAME.format(name=name))
            seen.add(name)
    exprs = expression_context(req, cache)
    text = req.get("ProjectionExpression")
    projection = exprs.projection(text) if text is not None else None
    exprs.check_unused()
    if attributes is not None:
        return legacy.attributes_to_get(attributes)
    return projection
