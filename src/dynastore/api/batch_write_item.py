"""BatchWriteItem: up to 25 puts and deletes across tables, each unconditional.

Checks, in order: the 25-request total; per table, a WriteRequest with neither or both of PutRequest and
DeleteRequest (DynamoDB's text for it is the AttributeValue "more than one datatypes" one), then per request the
AttributeValues and the 400 KB item size (dynalite ``validations/batchWriteItem.js`` order); then every table
(ResourceNotFoundException), every key against its table's schema, and two requests on one key.

Capacity (docs/capacity.md): each request is admitted on its own partition before the batch runs, a put at its
item's size (and on the partitions of the GSIs the item goes into), a delete at one write unit. Refused requests
come back untouched in ``UnprocessedItems`` and are not written; when every request is refused the batch fails
with the first refusal's error, as DynamoDB does when none of the items can be processed. The admitted writes run
in one storage transaction and are settled afterwards at their real cost (the larger of the old and new item),
which also keeps the partitions' item counts and sizes (and their size splits) right. Requests on items a
transaction holds come back in ``UnprocessedItems`` too, after the refused ones (engine/writes.py perform_batch).
"""

from __future__ import annotations

import asyncio
from typing import Any

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.item_requests import item_collection_metrics
from dynastore.api.services import RequestServices
from dynastore.api.strong_items import Answer
from dynastore.engine import writes
from dynastore.engine.capacity.units import write_half_units
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key, key_attributes, storage_key
from dynastore.errors import (
    DynamoError,
    ProvisionedThroughputExceededException,
    ReplicatedWriteConflictException,
    ThrottlingException,
    ValidationException,
)
from dynastore.global_tables.strong import StrongTables
from dynastore.limits import MAX_BATCH_WRITE, MAX_ITEM_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.validation.attribute_values import check_item

Planned = tuple[TableDef, bytes, writes.Plan]


def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> Answer:
    request_items: dict[str, list[dict[str, Any]]] = req["RequestItems"]
    if sum(len(requests) for requests in request_items.values()) > MAX_BATCH_WRITE:
        raise ValidationException(messages.BATCH_WRITE_TOO_MANY)
    checked_sizes: list[int] = []
    for requests in request_items.values():
        for request in requests:
            if (request.get("PutRequest") is None) == (request.get("DeleteRequest") is None):
                raise ValidationException(messages.BATCH_WRITE_REQUEST_SHAPE)
        checked_sizes.extend(_check_request(request) for request in requests)
    planned, sources = _plan(ctx, request_items, checked_sizes)
    strong = [i for i, (table, _, _) in enumerate(planned) if table.strong_log is not None]
    if strong and services.strong.logged:
        return asyncio.ensure_future(_logged(req, ctx, services.strong, planned, sources, strong))
    outcome = writes.perform_batch(ctx, planned)
    for i in strong:  # (regions of this server: each write applied to the others now)
        if outcome.results[i] is not None:
            table = planned[i][0]
            services.strong.spread(ctx, table, key_attributes(table, _source(sources[i][1])))
    return _answer(req, planned, sources, outcome)


async def _logged(
    req: dict[str, Any],
    ctx: Context,
    strong: StrongTables,
    planned: list[Planned],
    sources: list[tuple[str, dict[str, Any]]],
    strong_writes: list[int],
) -> dict[str, Any]:
    """A batch with writes to MRSC tables whose writes are committed to a strong log: the others run as a batch,
    then each of these on its own (global_tables/strong.py); one that met a concurrent write from another region
    or was throttled is returned unprocessed, as DynamoDB returns an item it could not write now."""
    results: list[writes.WriteResult | None] = [None] * len(planned)
    refused: list[int] = []
    deferred: list[int] = []
    others = [i for i in range(len(planned)) if i not in set(strong_writes)]
    if others:
        batch = writes.perform_batch(ctx, [planned[i] for i in others])
        for position, i in enumerate(others):
            results[i] = batch.results[position]
        refused.extend(others[position] for position in batch.refused)
        deferred.extend(others[position] for position in batch.deferred)
    first_refusal: DynamoError | None = None
    for i in strong_writes:
        table, _, plan = planned[i]
        try:
            results[i] = await strong.write(ctx, table, key_attributes(table, _source(sources[i][1])), plan)
        except (ReplicatedWriteConflictException, ProvisionedThroughputExceededException, ThrottlingException) as e:
            first_refusal = first_refusal or e
            refused.append(i)
    if first_refusal is not None and all(result is None for result in results):
        raise first_refusal
    return _answer(req, planned, sources, writes.BatchOutcome(results, sorted(refused), deferred))


def _source(request: dict[str, Any]) -> dict[str, Any]:
    put = request.get("PutRequest")
    return put["Item"] if put is not None else request["DeleteRequest"]["Key"]  # type: ignore[no-any-return]


def _answer(
    req: dict[str, Any],
    planned: list[Planned],
    sources: list[tuple[str, dict[str, Any]]],
    outcome: writes.BatchOutcome,
) -> dict[str, Any]:
    response: dict[str, Any] = {"UnprocessedItems": _unprocessed(sources, outcome)}
    if not outcome.ran:
        return response  # every item is held by a transaction: nothing ran, nothing to report
    written = [(i, result) for i, result in enumerate(outcome.results) if result is not None]
    mode = req.get("ReturnConsumedCapacity")
    if mode is not None and mode != "NONE":
        names = [sources[i][0] for i, _ in written]  # as the request named each table (a name or an ARN)
        held = set(outcome.deferred)
        tables = dict.fromkeys(name for i, (name, _) in enumerate(sources) if i not in held)  # in request order
        response["ConsumedCapacity"] = _capacity(mode, tables, names, [result for _, result in written])
    if req.get("ReturnItemCollectionMetrics") == "SIZE":
        response["ItemCollectionMetrics"] = item_collection_metrics((planned[i][0], result) for i, result in written)
    return response


def _plan(
    ctx: Context, request_items: dict[str, list[dict[str, Any]]], checked_sizes: list[int]
) -> tuple[list[Planned], list[tuple[str, dict[str, Any]]]]:
    """Each request's table, key and plan, in request order, with the table name and request it came from.
    Checks every table (ResourceNotFoundException), every key against its schema, and two requests on one key."""
    sizes = iter(checked_sizes)
    planned: list[Planned] = []
    sources: list[tuple[str, dict[str, Any]]] = []
    for table_name, requests in request_items.items():
        table = ctx.catalog.get_active(table_name)
        seen: set[bytes] = set()
        for request in requests:
            put = request.get("PutRequest")
            source = put["Item"] if put is not None else request["DeleteRequest"]["Key"]
            check_table_key(table, source, is_full_item=put is not None)
            key = storage_key(table, source)
            if key in seen:
                raise ValidationException(messages.BATCH_DUPLICATE_KEYS, bare=True)
            seen.add(key)
            size = next(sizes)
            plan = writes.PutPlan(put["Item"], size=size) if put is not None else writes.DeletePlan()
            planned.append((table, key, plan))
            sources.append((table_name, request))
    return planned, sources


def _unprocessed(sources: list[tuple[str, dict[str, Any]]], outcome: writes.BatchOutcome) -> dict[str, Any]:
    """The requests the capacity model refused, then those on items a transaction holds, per table as named."""
    unprocessed: dict[str, list[dict[str, Any]]] = {}
    for index in [*outcome.refused, *outcome.deferred]:
        table_name, request = sources[index]
        unprocessed.setdefault(table_name, []).append(request)
    return unprocessed


def _check_request(request: dict[str, Any]) -> int:
    """Checks one request on its own; returns the item's size (0 for a delete)."""
    put = request.get("PutRequest")
    if put is not None:
        check_item(put["Item"])
        size = item_size(put["Item"])
        if size > MAX_ITEM_BYTES:
            raise ValidationException(messages.ITEM_TOO_LARGE, bare=True)
        return size
    check_item(request["DeleteRequest"]["Key"])
    return 0


def _capacity(
    mode: str,
    tables: dict[str, None],
    names: list[str],
    results: list[writes.WriteResult],
) -> list[dict[str, Any]]:
    """One entry per table of the request: each write rounded on its own to 1 KB (larger of old and new), and
    the index writes it caused (INDEXES)."""
    per_table: dict[str, list[Any]] = {name: [0, {}, {}] for name in tables}
    for name, result in zip(names, results, strict=True):
        entry = per_table[name]
        entry[0] += write_half_units(max(result.old_size, result.new_size))
        for bucket, units in zip(entry[1:], result.index_half_units(), strict=True):
            for index_name, half_units in units.items():
                bucket[index_name] = bucket.get(index_name, 0) + half_units
    consumed = []
    for name, (half_units, lsi, gsi) in per_table.items():
        capacity = consumed_capacity(mode, name, half_units, lsi_half_units=lsi, gsi_half_units=gsi)
        assert capacity is not None
        consumed.append(capacity)
    return consumed
