"""Scan (and parallel Scan): one page of a table in hash order; request semantics shared with Query.

Order of the checks (dynalite ``validations/scan.js`` + ``actions/scan.js``, which DynamoDB's texts follow):
expression/legacy mixing, Select rules, duplicate AttributesToGet, ScanFilter, ExclusiveStartKey values,
Segment/TotalSegments, the expressions; then the table, IndexName, the start key against the key schema and
the segment, and nested paths on key attributes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from dynastore import limits, messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.item_requests import expression_context
from dynastore.engine import indexes
from dynastore.engine.capacity import admission
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key
from dynastore.engine.reads import (
    IndexKeySpace,
    KeySpace,
    Page,
    PageRequest,
    TableFetch,
    condition_paths,
    json_array,
    read_page,
    table_space,
)
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, ResolvedCondition, ResolvedProjection, legacy
from dynastore.expressions import check_expression_maps as expression_maps
from dynastore.expressions.ast import ResolvedPath
from dynastore.model.table_schema import KeyAttr, TableDef
from dynastore.model.values import Item
from dynastore.validation.attribute_values import check_conditions, check_name, invalid_entry, key_value_bytes
from dynastore.validation.common import check_conditional_operator, check_expression_params

# AttributeValue problems DynamoDB reports in an ExclusiveStartKey without the "starting key is invalid" prefix.
_UNPREFIXED_START_KEY = re.compile(
    r"contains duplicates|number set|numeric value|significant digits|number with|ttribute name"
)


def handle(req: dict[str, Any], ctx: Context) -> bytes:
    check_expression_params(
        req, ("ProjectionExpression", "FilterExpression"), ("AttributesToGet", "ScanFilter", "ConditionalOperator")
    )
    check_conditional_operator(req, "ScanFilter")
    select_problem = select_rule_problem(req)
    if select_problem is not None:
        raise ValidationException(select_problem)
    check_attributes_to_get(req)
    scan_filter = req.get("ScanFilter")
    check_condition_values(scan_filter)
    legacy_filter = legacy.scan_filter(scan_filter, req.get("ConditionalOperator")) if scan_filter else None
    check_start_key_values(req)
    segment, total = _segments(req)
    check_expression_maps(req)
    exprs = expression_context(req, ctx.expressions)
    filt, projection = filter_and_projection(req, exprs, legacy_filter)
    exprs.check_unused()

    table = ctx.catalog.get_active(req["TableName"])
    space = key_space(table, req)
    lo, hi = space.segment(segment, total)
    start = req.get("ExclusiveStartKey")
    if start is not None:
        _check_scan_start_key(table, space, start)
        start_key = space.start_key(start)
        if total > 1 and not lo <= start_key < hi:
            detail = messages.START_KEY_WRONG_SEGMENT.format(total=total, segment=segment)
            raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=detail))
        lo = max(lo, start_key + b"\x00")
    check_key_paths(table, projection.paths if projection is not None else ())
    check_key_paths(table, _filter_paths(filt))
    fetch = index_fetch(req, space, filt, projection)

    page_request = PageRequest(
        space,
        lo,
        hi,
        limit=req.get("Limit"),
        filter=filt,
        projection=projection,
        count_only=req.get("Select") == "COUNT",
        fetch=fetch,
    )
    page = read_page_admitted(ctx, table, space, lo, page_request, consistent=bool(req.get("ConsistentRead")))
    return page_response(req, table, space, page, count_only=page_request.count_only)


def _segments(req: dict[str, Any]) -> tuple[int, int]:
    segment, total = req.get("Segment"), req.get("TotalSegments")
    if segment is not None and total is None:
        raise ValidationException(messages.SCAN_SEGMENT_WITHOUT_TOTAL)
    if total is not None:
        if segment is None:
            raise ValidationException(messages.SCAN_TOTAL_WITHOUT_SEGMENT)
        if segment >= total:
            raise ValidationException(messages.SCAN_SEGMENT_TOO_LARGE.format(segment=segment, total=total))
        return segment, total
    return 0, 1


def _check_scan_start_key(table: TableDef, space: KeySpace, start: Item) -> None:
    mismatch = messages.START_KEY_INVALID_DETAIL.format(detail=messages.KEY_SCHEMA_MISMATCH)
    attributes = key_attributes(table, space)
    if len(start) != len(attributes) or any(attr.name not in start for attr in attributes):
        raise ValidationException(mismatch)
    try:
        check_table_key(table, table_part(table, start), is_full_item=False)
    except ValidationException as e:
        raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=e.message)) from None
    check_index_key_types(space, start, mismatch)


# ---------------------------------------------------------------- shared with Query


def select_rule_problem(req: dict[str, Any]) -> str | None:
    """The Select/projection rule the request breaks, or None."""
    select = req.get("Select")
    if select is None:
        return None
    param = (
        "ProjectionExpression"
        if req.get("ProjectionExpression") is not None
        else "AttributesToGet"
        if req.get("AttributesToGet") is not None
        else None
    )
    if select == "SPECIFIC_ATTRIBUTES":
        return messages.SELECT_SPECIFIC_WITHOUT_PROJECTION if param is None else None
    if param is not None:
        if select == "COUNT":
            return messages.SELECT_COUNT_WITH_PROJECTION.format(param=param)
        return messages.SELECT_ALL_WITH_PROJECTION.format(param=param, select=select)
    if select == "ALL_PROJECTED_ATTRIBUTES" and req.get("IndexName") is None:
        return messages.SELECT_ALL_PROJECTED_WITHOUT_INDEX
    return None


def check_attributes_to_get(req: dict[str, Any]) -> None:
    seen: set[str] = set()
    for name in req.get("AttributesToGet") or ():
        check_name(name)
        if name in seen:
            raise ValidationException(messages.DUPLICATE_ATTRIBUTE_NAME.format(name=name))
        seen.add(name)


def check_condition_values(conditions: dict[str, Any] | None) -> None:
    """Well-formed names and AttributeValues in a legacy condition map (QueryFilter, ScanFilter, KeyConditions)."""
    check_conditions(conditions)


def check_start_key_values(req: dict[str, Any]) -> None:
    start = req.get("ExclusiveStartKey")
    if start is None:
        return
    problem = invalid_entry(start)
    if problem is not None:
        text = problem[1]
        if _UNPREFIXED_START_KEY.search(text):
            raise ValidationException(text)
        raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=text))


def check_expression_maps(req: dict[str, Any]) -> None:
    """Checked before the other request semantics, as DynamoDB orders its errors for Query and Scan."""
    expression_maps(req.get("ExpressionAttributeNames"), req.get("ExpressionAttributeValues"))


def filter_and_projection(
    req: dict[str, Any], exprs: ExpressionContext, legacy_filter: ResolvedCondition | None
) -> tuple[ResolvedCondition | None, ResolvedProjection | None]:
    text = req.get("FilterExpression")
    filt = exprs.condition("FilterExpression", text) if text is not None else legacy_filter
    text = req.get("ProjectionExpression")
    projection = exprs.projection(text) if text is not None else None
    names = req.get("AttributesToGet")
    if names is not None:
        projection = legacy.attributes_to_get(names)
    return filt, projection


def key_space(table: TableDef, req: dict[str, Any]) -> KeySpace:
    """The table, or the index ``IndexName`` names once it may be read (ACTIVE; strongly consistent reads
    only from the table and its LSIs)."""
    index_name = req.get("IndexName")
    if index_name is None:
        return table_space(table)
    index = table.index(index_name)
    if index is None:
        raise ValidationException(messages.INDEX_NOT_IN_TABLE.format(index=index_name))
    if index.kind == "GSI":
        if req.get("ConsistentRead"):
            raise ValidationException(messages.GSI_CONSISTENT_READ)
        if not index.readable:
            raise ValidationException(messages.INDEX_BACKFILLING)
    return IndexKeySpace(table, index)


def key_attributes(table: TableDef, space: KeySpace | None = None) -> tuple[KeyAttr, ...]:
    """The attributes of a start or last-evaluated key: the table's key, and the index's key when reading one
    (index attributes first, as a LastEvaluatedKey lists them; a shared attribute once)."""
    attrs = table.key_schema.attributes
    if space is None or space.index is None:
        return attrs
    index_attrs = space.key_schema.attributes
    names = {a.name for a in index_attrs}
    return index_attrs + tuple(a for a in attrs if a.name not in names)


def table_part(table: TableDef, start: Item) -> Item:
    """The table-key attributes of a start key (an index's start key holds the index key too)."""
    return {attr.name: start[attr.name] for attr in table.key_schema.attributes}


def check_index_key_types(space: KeySpace, start: Item, problem: str) -> None:
    """The index key attributes of an ExclusiveStartKey have the index's types and are neither empty nor over the
    key size limits (ValidationException ``problem`` otherwise)."""
    if space.index is None:
        return
    schema = space.key_schema
    for attrs, limit in (
        (schema.hash_keys, limits.MAX_HASH_KEY_BYTES),
        (schema.range_keys, limits.MAX_RANGE_KEY_BYTES),
    ):
        for attr in attrs:
            value = start[attr.name]
            if attr.type not in value or len(value) != 1:
                raise ValidationException(problem)
            payload = value[attr.type]
            if (payload == "" and attr.type != "N") or key_value_bytes(attr.type, payload) > limit:
                raise ValidationException(problem)


def index_fetch(
    req: dict[str, Any], space: KeySpace, filt: ResolvedCondition | None, projection: ResolvedProjection | None
) -> TableFetch | None:
    """What reading an index needs beyond its entries. Asking for attributes the index does not project (Select
    ALL_ATTRIBUTES, or a projection naming them) fetches them from the table for an LSI and is refused for a
    GSI; a filter on unprojected attributes makes an LSI fetch before filtering (a GSI filter sees the entry)."""
    index = space.index
    if not isinstance(space, IndexKeySpace) or index is None or index.projection.type == "ALL":
        return None
    projected = {*space.key_schema.names, *space.table.key_schema.names, *index.projection.non_key_attributes}
    count_only = req.get("Select") == "COUNT"
    wants_all = req.get("Select") == "ALL_ATTRIBUTES"
    missing = sorted({str(p[0]) for p in (projection.paths if projection is not None else ())} - projected)
    if index.kind == "GSI":
        if wants_all:
            raise ValidationException(messages.GSI_SELECT_ALL.format(index=index.name))
        if missing:
            raise ValidationException(messages.GSI_NOT_PROJECTED.format(index=index.name, names=", ".join(missing)))
        return None
    for_filter = any(str(path[0]) not in projected for path in _filter_paths(filt))
    if not for_filter and (count_only or not (wants_all or missing)):
        return None
    return TableFetch(space, for_filter=for_filter, consistent=bool(req.get("ConsistentRead")))


def _filter_paths(filt: ResolvedCondition | None) -> list[ResolvedPath]:
    return condition_paths(filt) if filt is not None else []


def check_key_paths(table: TableDef, paths: Iterable[ResolvedPath]) -> None:
    """Nested paths (``a.b``, ``a[0]``) into a key attribute of the table or of one of its indexes."""
    nested = {path[0] for path in paths if len(path) > 1}
    if not nested:
        return
    for attr in key_attributes(table):
        if attr.name in nested:
            raise ValidationException(messages.KEY_PATH_NOT_SCALAR.format(kind="Key", name=attr.name))
    for index in (*table.gsis, *table.lsis):
        schema = index.key_schema
        for attr in (schema.hash_key,) if schema.range_key is None else (schema.hash_key, schema.range_key):
            if attr.name in nested:
                raise ValidationException(messages.KEY_PATH_NOT_SCALAR.format(kind="IndexKey", name=attr.name))


def wants_capacity(req: dict[str, Any]) -> bool:
    mode = req.get("ReturnConsumedCapacity")
    return mode is not None and mode != "NONE"


def read_page_admitted(
    ctx: Context, table: TableDef, space: KeySpace, start: bytes, page_request: PageRequest, *, consistent: bool
) -> Page:
    """One page under the capacity model (docs/capacity.md "How every operation is admitted"): admitted at the partition
    of ``start`` (a GSI's own partitions; an LSI shares the table's) before reading — a throttled read raises
    and reads nothing — and settled with the page's actual cost afterwards."""
    index = space.index
    gsi = index.name if index is not None and index.kind == "GSI" else None
    ticket = admission.admit_read(ctx, table, start, read_half_units(0, consistent=consistent), index=gsi)
    if gsi is not None:
        indexes.catch_up(ctx)  # the writes acknowledged before this read reach the GSI first (docs/indexes.md)
    with ctx.kv.read() as txn:
        page = read_page(txn, page_request)
    admission.settle_read(ctx, ticket, read_half_units(page.read_bytes, consistent=consistent) + page.fetch_half_units)
    return page


def page_response(req: dict[str, Any], table: TableDef, space: KeySpace, page: Page, *, count_only: bool) -> bytes:
    parts: list[bytes] = []
    if not count_only:
        parts.append(b'"Items":' + json_array(page.items))
    parts.append(b'"Count":%d,"ScannedCount":%d' % (page.count, page.scanned_count))
    if page.last_key is not None:
        parts.append(b'"LastEvaluatedKey":' + orjson.dumps(page.last_key))
    if wants_capacity(req):
        parts.append(b'"ConsumedCapacity":' + orjson.dumps(_consumed(req, table, space, page)))
    return b"{" + b",".join(parts) + b"}"


def _consumed(req: dict[str, Any], table: TableDef, space: KeySpace, page: Page) -> dict[str, Any] | None:
    """Reading a table charges the table; reading an index charges the index for its entries, and the table
    for the items an LSI fetched (each rounded on its own: the seeds' 0.5 + 2.0 = 2.5 units)."""
    mode = req.get("ReturnConsumedCapacity")
    half_units = read_half_units(page.read_bytes, consistent=bool(req.get("ConsistentRead")))
    index = space.index
    name = req["TableName"]  # as the request named the table: DynamoDB echoes a table ARN
    if index is None:
        return consumed_capacity(mode, name, half_units)
    per_index = {index.name: half_units}
    if index.kind == "LSI":
        return consumed_capacity(mode, name, page.fetch_half_units, lsi_half_units=per_index)
    return consumed_capacity(mode, name, 0, gsi_half_units=per_index)
