"""BatchGetItem: up to 100 keys across tables, each table with its own projection and consistency.

Checks (dynalite ``validations/batchGetItem.js`` texts): the 100-key total; per table the expression/legacy
mixing, duplicate AttributesToGet, the ProjectionExpression and its names, well-formed keys; then every table
(ResourceNotFoundException), every key against its table's schema, and duplicate keys within a table.

Keys the engine does not process (past the 16 MB response limit, or refused by the capacity model once it
exists: ``reads.batch_get(admit=...)``) come back in ``UnprocessedKeys`` with the table's other parameters.
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore import messages
from dynastore.api.context import Context
from dynastore.api.scan import check_attributes_to_get, check_expression_maps, wants_capacity
from dynastore.engine import reads
from dynastore.engine.capacity import consumed_capacity
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, ResolvedProjection, legacy
from dynastore.limits import MAX_BATCH_GET
from dynastore.validation.attribute_values import check_item
from dynastore.validation.common import check_expression_params


def handle(req: dict[str, Any], ctx: Context) -> bytes:
    request_items: dict[str, dict[str, Any]] = req["RequestItems"]
    if sum(len(spec["Keys"]) for spec in request_items.values()) > MAX_BATCH_GET:
        raise ValidationException(messages.BATCH_GET_TOO_MANY)
    projections: list[ResolvedProjection | None] = []
    for spec in request_items.values():
        check_expression_params(spec, ("ProjectionExpression",), ("AttributesToGet",))
        check_attributes_to_get(spec)
        check_expression_maps(spec)
        projections.append(_projection(spec))
        for key in spec["Keys"]:
            check_item(key)

    requests: list[reads.GetRequest] = []
    for (name, spec), projection in zip(request_items.items(), projections, strict=True):
        table = ctx.catalog.get_active(name)
        keys: list[bytes] = []
        seen: set[bytes] = set()
        for key in spec["Keys"]:
            check_table_key(table, key, is_full_item=False)
            stored = storage_key(table, key)
            if stored in seen:
                raise ValidationException(messages.BATCH_DUPLICATE_KEYS)
            seen.add(stored)
            keys.append(stored)
        requests.append(reads.GetRequest(table, tuple(keys), projection, bool(spec.get("ConsistentRead"))))

    with ctx.kv.read() as txn:
        results = reads.batch_get(txn, requests)
    return _response(req, request_items, requests, results, wants_capacity(req))


def _projection(spec: dict[str, Any]) -> ResolvedProjection | None:
    exprs = ExpressionContext(spec.get("ExpressionAttributeNames"), None)
    text = spec.get("ProjectionExpression")
    projection = exprs.projection(text) if text is not None else None
    exprs.check_unused()
    names = spec.get("AttributesToGet")
    return legacy.attributes_to_get(names) if names is not None else projection


def _response(
    req: dict[str, Any],
    request_items: dict[str, dict[str, Any]],
    requests: list[reads.GetRequest],
    results: list[reads.GetResult],
    exact: bool,
) -> bytes:
    responses = b",".join(
        orjson.dumps(name) + b":" + reads.json_array(result.items)
        for name, result in zip(request_items, results, strict=True)
    )
    unprocessed: dict[str, Any] = {}
    for (name, spec), result in zip(request_items.items(), results, strict=True):
        if result.unprocessed:
            rest = dict(spec)
            rest["Keys"] = [spec["Keys"][index] for index in result.unprocessed]
            unprocessed[name] = rest
    body = b'{"Responses":{' + responses + b'},"UnprocessedKeys":' + orjson.dumps(unprocessed)
    if exact:
        mode = req.get("ReturnConsumedCapacity")
        consumed = [
            consumed_capacity(mode, request.table.name, result.half_units)
            for request, result in zip(requests, results, strict=True)
        ]
        body += b',"ConsumedCapacity":' + orjson.dumps(consumed)
    return body + b"}"
