"""Scan (and parallel Scan): one page of a table in hash order (request semantics shared with Query:
api/read_requests.py).

Order of the checks (dynalite ``validations/scan.js`` + ``actions/scan.js``, which DynamoDB's texts follow):
expression/legacy mixing, Select rules, duplicate AttributesToGet, ScanFilter, ExclusiveStartKey values,
Segment/TotalSegments, the expressions; then the table, IndexName, the start key against the key schema and
the segment, and nested paths on key attributes.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.item_requests import expression_context
from dynastore.api.read_requests import (
    check_attributes_to_get,
    check_condition_values,
    check_expression_maps,
    check_index_key_types,
    check_key_paths,
    check_start_key_values,
    filter_and_projection,
    filter_paths,
    index_fetch,
    key_attributes,
    key_space,
    page_response,
    select_rule_problem,
    table_part,
)
from dynastore.engine.context import Context
from dynastore.engine.key_spaces import KeySpace
from dynastore.engine.keys import check_table_key
from dynastore.engine.pages import PageRequest, read_page
from dynastore.errors import ValidationException
from dynastore.expressions import legacy
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.validation.common import check_conditional_operator, check_expression_params


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
    space = key_space(ctx, table, req)
    lo, hi = space.segment(segment, total)
    start = req.get("ExclusiveStartKey")
    if start is not None:
        _check_scan_start_key(table, space, start)
        start_key = space.start_key(start)
        if total > 1 and not lo <= start_key < hi:
            detail = messages.START_KEY_WRONG_SEGMENT.format(total=total, segment=segment)
            raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=detail), bare=True)
        lo = max(lo, start_key + b"\x00")
    check_key_paths(table, projection.paths if projection is not None else ())
    check_key_paths(table, filter_paths(filt))
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
        consistent=bool(req.get("ConsistentRead")),
    )
    page = read_page(ctx, page_request)
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
        raise ValidationException(mismatch, bare=True)
    try:
        check_table_key(table, table_part(table, start), is_full_item=False)
    except ValidationException as e:
        raise ValidationException(messages.START_KEY_INVALID_DETAIL.format(detail=e.detail), bare=True) from None
    check_index_key_types(space, start, mismatch)
