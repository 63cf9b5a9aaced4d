"""GetItem: read one item by its key."""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.item_requests import expression_context
from dynastore.api.scan import check_key_paths
from dynastore.engine.capacity import admission
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionCache, legacy, project
from dynastore.model.item_size import item_size
from dynastore.storage.itemcodec import decode_item, item_json
from dynastore.validation.attribute_values import check_item, check_name
from dynastore.validation.common import check_expression_params


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any] | bytes:
    check_expression_params(req, ("ProjectionExpression",), ("AttributesToGet",))
    key = req["Key"]
    check_item(key)
    projection = _projection(req, ctx.expressions)

    table = ctx.catalog.get_active(req["TableName"])
    check_table_key(table, key, is_full_item=False)
    if projection is not None:
        check_key_paths(table, projection.paths)
    item_key = storage_key(table, key)
    with ctx.kv.read() as txn:
        raw = txn.get(item_key)
    # Capacity (docs/capacity.md): a read has no effect, so it is admitted at its exact cost after it ran.
    admission.admit_read(ctx, table, item_key, admission.read_cost(raw, consistent=bool(req.get("ConsistentRead"))))

    capacity_mode = req.get("ReturnConsumedCapacity")
    wants_capacity = capacity_mode is not None and capacity_mode != "NONE"
    if raw is not None and projection is None and not wants_capacity:
        return b'{"Item":' + item_json(raw) + b"}"  # the stored JSON goes out as it is, never decoded

    response: dict[str, Any] = {}
    size = 0
    if raw is not None:
        item = decode_item(raw)
        size = item_size(item)
        response["Item"] = item if projection is None else project(item, projection)
    consumed = consumed_capacity(
        capacity_mode, req["TableName"], read_half_units(size, consistent=bool(req.get("ConsistentRead")))
    )
    if consumed is not None:
        response["ConsumedCapacity"] = consumed
    return response


def _projection(req: dict[str, Any], cache: ExpressionCache) -> Any:
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
