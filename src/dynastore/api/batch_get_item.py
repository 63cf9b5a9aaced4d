"""BatchGetItem: up to 100 keys across tables, each table with its own projection and consistency.

Checks (dynalite ``validations/batchGetItem.js`` texts): the 100-key total; per table the expression/legacy
mixing, duplicate AttributesToGet, the ProjectionExpression and its names, well-formed keys; then every table
(ResourceNotFoundException), every key against its table's schema, and duplicate keys within a table.

Keys the engine does not process (past the 16 MB response limit, or refused by the capacity model) come back in
``UnprocessedKeys`` with the table's other parameters. Capacity (docs/capacity.md): like GetItem, each key is
admitted after its item was looked up, at the item's exact cost (``_Admission``, the ``admit`` hook of
``reads.batch_get``); when every key is refused the batch fails with the first refusal's error (DynamoDB: "If none
of the items can be processed due to insufficient provisioned throughput ... ProvisionedThroughputExceeded").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.scan import check_attributes_to_get, check_expression_maps, check_key_paths, wants_capacity
from dynastore.engine import reads
from dynastore.engine.capacity import admission
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import DynamoError, ValidationException
from dynastore.expressions import ExpressionCache, ExpressionContext, ResolvedProjection, legacy
from dynastore.limits import MAX_BATCH_GET
from dynastore.model.table_schema import TableDef
from dynastore.storage.kv import ReadTxn
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
        if projection is not None:
            check_key_paths(table, projection.paths)
        requests.append(reads.GetRequest(table, tuple(keys), projection, bool(spec.get("ConsistentRead"))))

    with ctx.kv.read() as txn:
        admit = _Admission(ctx, txn, requests)
        results = reads.batch_get(admit, requests, admit=admit)
    if admit.refusal is not None and not admit.tickets:
        raise admit.refusal  # not one key could be read
    admit.refund_unprocessed(requests, results)
    return _response(req, request_items, requests, results, wants_capacity(req))


class _Admission:
    """The capacity model's ``admit`` hook for ``reads.batch_get``, and the read transaction it reads through.

    The hook looks the item up to admit the key at its exact cost (a read has no effect, so it is admitted
    after it ran, as GetItem is); the engine's read of that same key, which follows at once, is then answered
    from here instead of being looked up again.
    """

    def __init__(self, ctx: Context, txn: ReadTxn, requests: list[reads.GetRequest]) -> None:
        self.ctx = ctx
        self.txn = txn
        self.consistent = {request.table.name: request.consistent for request in requests}
        self.tickets: dict[bytes, admission.Ticket] = {}  # storage keys are unique across tables
        self.refusal: DynamoError | None = None
        self._looked_up: tuple[bytes, bytes | None] | None = None

    def __call__(self, table: TableDef, key: bytes) -> bool:
        raw = self.txn.get(key)
        self._looked_up = (key, raw)
        cost = admission.read_cost(raw, consistent=self.consistent[table.name])
        outcome = admission.attempt_read(self.ctx, table, key, cost)
        if isinstance(outcome, DynamoError):
            self.refusal = self.refusal or outcome
            return False
        self.tickets[key] = outcome
        return True

    def get(self, key: bytes) -> bytes | None:
        looked_up = self._looked_up
        if looked_up is not None and looked_up[0] == key:
            self._looked_up = None
            return looked_up[1]
        return self.txn.get(key)

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        return self.txn.iter_range(lo, hi, reverse=reverse)

    def refund_unprocessed(self, requests: list[reads.GetRequest], results: list[reads.GetResult]) -> None:
        """Give back what admitted keys took that were then left unprocessed (past the 16 MB response limit)."""
        for request, result in zip(requests, results, strict=True):
            for index in result.unprocessed:
                ticket = self.tickets.pop(request.keys[index], None)
                if ticket is not None:
                    admission.refund(self.ctx, ticket)


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
            consumed_capacity(mode, name, result.half_units)
            for name, result in zip(request_items, results, strict=True)
        ]
        body += b',"ConsumedCapacity":' + orjson.dumps(consumed)
    return body + b"}"
