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

from dynastore import messages
from dynastore.api.context import Context
from dynastore.api.item_requests import expression_context
from dynastore.engine.capacity import consumed_capacity, read_half_units
from dynastore.engine.keys import check_table_key
from dynastore.engine.reads import (
    KeySpace,
    Page,
    PageRequest,
    TableKeySpace,
    condition_paths,
    json_array,
    read_page,
)
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, ResolvedCondition, ResolvedProjection, legacy
from dynastore.expressions import check_expression_maps as expression_maps
from dynastore.expressions.ast import ResolvedPath
from dynastore.model.table_schema import KeyAttr, TableDef
from dynastore.model.values import Item
from dynastore.validation.attribute_values import check_value, invalid_entry
from dynastore.validation.common import check_expression_params

# AttributeValue problems DynamoDB reports in an ExclusiveStartKey without the "starting key is invalid" prefix.
_UNPREFIXED_START_KEY = re.compile(r"contains duplicates|number set|numeric value|significant digits|number with")


def handle(req: dict[str, Any], ctx: Context) -> bytes:
    check_expression_params(
        req, ("ProjectionExpression", "FilterExpression"), ("AttributesToGet", "ScanFilter", "ConditionalOperator")
    )
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
    exprs = expression_context(req)
    filt, projection = filter_and_projection(req, exprs, legacy_filter)
    exprs.check_unused()

    table = ctx.catalog.get_active(req["TableName"])
    space = key_space(table, req.get("IndexName"))
    lo, hi = space.segment(segment, total)
    start = req.get("ExclusiveStartKey")
    if start is not None:
        _check_scan_start_key(table, start)
        start_key = space.start_key(start)
        if total > 1 and not lo <= start_key < hi:
            detail = messages.START_KEY_WRONG_SEGMENT.format(total=total, segment=segment)
            raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=detail))
        lo = max(lo, start_key + b"\x00")
    check_key_paths(table, projection.paths if projection is not None else ())
    check_key_paths(table, _filter_paths(filt))

    page_request = PageRequest(
        space,
        lo,
        hi,
        limit=req.get("Limit"),
        filter=filt,
        projection=projection,
        count_only=req.get("Select") == "COUNT",
    )
    with ctx.kv.read() as txn:
        page = read_page(txn, page_request)
    return page_response(req, table, page, count_only=page_request.count_only)


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


def _check_scan_start_key(table: TableDef, start: Item) -> None:
    if len(start) != len(key_attributes(table)):
        raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=messages.KEY_SCHEMA_MISMATCH))
    try:
        check_table_key(table, start, is_full_item=False)
    except ValidationException as e:
        raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=e.message)) from None


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
        if name in seen:
            raise ValidationException(messages.DUPLICATE_ATTRIBUTE_NAME.format(name=name))
        seen.add(name)


def check_condition_values(conditions: dict[str, Any] | None) -> None:
    """Well-formed AttributeValues in a legacy condition map (QueryFilter, ScanFilter, KeyConditions)."""
    for condition in (conditions or {}).values():
        for value in condition.get("AttributeValueList") or ():
            check_value(value)


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


def key_space(table: TableDef, index_name: str | None) -> KeySpace:
    if index_name is None:
        return TableKeySpace(table)
    if any(index.name == index_name for index in (*table.lsis, *table.gsis)):
        raise ValidationException(messages.INDEX_READS_NOT_SUPPORTED.format(index=index_name))
    raise ValidationException(messages.INDEX_NOT_IN_TABLE.format(index=index_name))


def key_attributes(table: TableDef) -> tuple[KeyAttr, ...]:
    range_key = table.key_schema.range_key
    return (table.key_schema.hash_key,) if range_key is None else (table.key_schema.hash_key, range_key)


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


def page_response(req: dict[str, Any], table: TableDef, page: Page, *, count_only: bool) -> bytes:
    parts: list[bytes] = []
    if not count_only:
        parts.append(b'"Items":' + json_array(page.items))
    parts.append(b'"Count":%d,"ScannedCount":%d' % (page.count, page.scanned_count))
    if page.last_key is not None:
        parts.append(b'"LastEvaluatedKey":' + orjson.dumps(page.last_key))
    if wants_capacity(req):
        half_units = read_half_units(page.read_bytes, consistent=bool(req.get("ConsistentRead")))
        consumed = consumed_capacity(req.get("ReturnConsumedCapacity"), table.name, half_units)
        parts.append(b'"ConsumedCapacity":' + orjson.dumps(consumed))
    return b"{" + b",".join(parts) + b"}"
