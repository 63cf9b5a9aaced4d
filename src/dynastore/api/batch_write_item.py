"""BatchWriteItem: up to 25 puts and deletes across tables, each unconditional."""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.context import Context
from dynastore.engine import writes
from dynastore.engine.capacity import write_half_units
from dynastore.engine.keys import check_table_key, storage_key
from dynastore.errors import ValidationException
from dynastore.limits import MAX_BATCH_WRITE, MAX_ITEM_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.validation.attribute_values import check_item


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    request_items: dict[str, list[dict[str, Any]]] = req["RequestItems"]
    if sum(len(requests) for requests in request_items.values()) > MAX_BATCH_WRITE:
        raise ValidationException(messages.BATCH_WRITE_TOO_MANY)
    for requests in request_items.values():
        for request in requests:
            _check_request(request)

    planned: list[tuple[TableDef, bytes, writes.Plan]] = []
    for table_name, requests in request_items.items():
        table = ctx.catalog.get_active(table_name)
        seen: set[bytes] = set()
        for request in requests:
            put = request.get("PutRequest")
            source = put["Item"] if put is not None else request["DeleteRequest"]["Key"]
            check_table_key(table, source, is_full_item=put is not None)
            key = storage_key(table, source)
            if key in seen:
                raise ValidationException(messages.BATCH_DUPLICATE_KEYS)
            seen.add(key)
            planned.append((table, key, writes.PutPlan(put["Item"]) if put is not None else writes.DeletePlan()))

    results = writes.execute_batch(ctx, planned)
    response: dict[str, Any] = {"UnprocessedItems": {}}
    mode = req.get("ReturnConsumedCapacity")
    if mode is not None and mode != "NONE":
        response["ConsumedCapacity"] = _capacity(mode, planned, results)
    return response


def _check_request(request: dict[str, Any]) -> None:
    put, delete = request.get("PutRequest"), request.get("DeleteRequest")
    if (put is None) == (delete is None):
        raise ValidationException(messages.BATCH_WRITE_REQUEST_SHAPE)
    if put is not None:
        check_item(put["Item"])
        if item_size(put["Item"]) > MAX_ITEM_BYTES:
            raise ValidationException(messages.ITEM_TOO_LARGE)
    elif delete is not None:
        check_item(delete["Key"])


def _capacity(
    mode: str, planned: list[tuple[TableDef, bytes, writes.Plan]], results: list[writes.WriteResult]
) -> list[dict[str, Any]]:
    per_table: dict[str, int] = {}
    for (table, _, _), result in zip(planned, results, strict=True):
        units = write_half_units(max(result.old_size, result.new_size))
        per_table[table.name] = per_table.get(table.name, 0) + units
    consumed = []
    for name, half_units in per_table.items():
        entry: dict[str, Any] = {"TableName": name, "CapacityUnits": half_units / 2}
        if mode == "INDEXES":
            entry["Table"] = {"CapacityUnits": half_units / 2}
        consumed.append(entry)
    return consumed
