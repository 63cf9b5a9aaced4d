"""BatchGetItem: up to 100 keys across tables, each table with its own projection and consistency.

Checks (dynalite ``validations/batchGetItem.js`` texts): the 100-key total; per table the expression/legacy
mixing, duplicate AttributesToGet, the ProjectionExpression and its names, well-formed keys; then every table
(ResourceNotFoundException), every key against its table's schema, and duplicate keys within a table.

Keys the engine does not process (past the 16 MB response limit, or refused by the capacity model) come back in
``UnprocessedKeys`` with the table's other parameters. Capacity (docs/capacity.md): like GetItem, each key is
admitted after its item was looked up, at the item's exact cost (``engine.item_reads.batch_get``); when every
key is refused the batch fails with the first refusal's error (DynamoDB: "If none of the items can be processed
due to insufficient provisioned throughput ... ProvisionedThroughputExceeded").
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.read_requests import (
    check_attributes_to_get,
    check_expression_maps,
    check_key_paths,
    json_array,
    wants_capacity,
)
from dynastore.engine.context import Context
from dynastore.engine.item_reads import BatchGetRequest, BatchGetResult, batch_get
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionCache, ExpressionContext, ResolvedProjection, legacy
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
        projections.append(_projection(spec, ctx.expressions))
        for key in spec["Keys"]:
            check_item(key)
        _check_no_duplicate_keys(spec["Keys"])

    requests: list[BatchGetRequest] = []
    for (name, spec), projection in zip(request_items.items(), projections, strict=True):
        table = ctx.catalog.get_active(name)
        keys: list[bytes] = []
        seen: set[bytes] = set()
        for key in spec["Keys"]:
            check_table_key(table, key, is_full_item=False)
            stored = storage_key(table, key)
            if stored in seen:  # equal once the key schema is applied (e.g. a key with another attribute)
                raise ValidationException(messages.BATCH_DUPLICATE_KEYS, bare=True)
            seen.add(stored)
            keys.append(stored)
        if projection is not None:
            check_key_paths(table, projection.paths)
        requests.append(BatchGetRequest(table, tuple(keys), projection, bool(spec.get("ConsistentRead"))))

    results = batch_get(ctx, requests)
    return _response(req, request_items, requests, results, wants_capacity(req))


def _check_no_duplicate_keys(keys: list[Any]) -> None:
    """Two equal keys of one table, found before the table is looked up, as DynamoDB finds them
    (docs/validation-order.md); numbers are canonical by now, so equal keys serialize alike."""
    if len({orjson.dumps(key, option=orjson.OPT_SORT_KEYS) for key in keys}) != len(keys):
        raise ValidationException(messages.BATCH_DUPLICATE_KEYS)


def _projection(spec: dict[str, Any], cache: ExpressionCache) -> ResolvedProjection | None:
    exprs = ExpressionContext(spec.get("ExpressionAttributeNames"), None, cache)
    text = spec.get("ProjectionExpression")
    projection = exprs.projection(text) if text is not None else None
    exprs.check_unused()
    names = spec.get("AttributesToGet")
    return legacy.attributes_to_get(names) if names is not None else projection


def _response(
    req: dict[str, Any],
    request_items: dict[str, dict[str, Any]],
    requests: list[BatchGetRequest],
    results: list[BatchGetResult],
    exact: bool,
) -> bytes:
    responses = b",".join(
        orjson.dumps(name) + b":" + json_array(result.items)
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
            consumed_capacity(mode, name, result.half_units)
            for name, result in zip(request_items, results, strict=True)
        ]
        body += b',"ConsumedCapacity":' + orjson.dumps(consumed)
    return body + b"}"
