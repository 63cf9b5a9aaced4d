"""Request semantics Query and Scan share: Select rules, legacy parameters, ExclusiveStartKey checks, the key
space a request reads, what an index read must fetch, nested key paths; and the page response both return.

BatchGetItem, GetItem and TransactGetItems use the projection and nested-key-path checks too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from dynastore import limits, messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.engine.key_spaces import IndexKeySpace, KeySpace
from dynastore.engine.pages import Json, Page, TableFetch, condition_paths
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, ResolvedCondition, ResolvedProjection, legacy
from dynastore.expressions import check_expression_maps as expression_maps
from dynastore.expressions.ast import ResolvedPath
from dynastore.model.table_schema import KeyAttr, TableDef
from dynastore.model.values import Item
from dynastore.validation.attribute_values import check_conditions, check_name, invalid_entry, key_value_bytes

# AttributeValue problems DynamoDB reports in an ExclusiveStartKey without the "starting key is invalid" prefix.
_UNPREFIXED_START_KEY = re.compile(
    r"contains duplicates|number set|numeric value|significant digits|number with|ttribute name"
)


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


def key_space(ctx: Context, table: TableDef, req: dict[str, Any]) -> KeySpace:
    """The table, or the index ``IndexName`` names once it may be read (ACTIVE; strongly consistent reads
    only from the table and its LSIs)."""
    index_name = req.get("IndexName")
    if index_name is None:
        return ctx.table_spaces.of(table)
    index = table.index(index_name)
    if index is None:
        raise ValidationException(messages.INDEX_NOT_IN_TABLE.format(index=index_name), bare=True)
    if index.kind == "GSI":
        if req.get("ConsistentRead"):
            raise ValidationException(messages.GSI_CONSISTENT_READ, bare=True)
        if not index.readable:
            raise ValidationException(messages.INDEX_BACKFILLING, bare=True)
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
                raise ValidationException(problem, bare=True)
            payload = value[attr.type]
            if (payload == "" and attr.type != "N") or key_value_bytes(attr.type, payload) > limit:
                raise ValidationException(problem, bare=True)


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
            raise ValidationException(messages.GSI_SELECT_ALL.format(index=index.name), bare=True)
        if missing:
            raise ValidationException(
                messages.GSI_NOT_PROJECTED.format(index=index.name, names=", ".join(missing)), bare=True
            )
        return None
    for_filter = any(str(path[0]) not in projected for path in filter_paths(filt))
    if not for_filter and (count_only or not (wants_all or missing)):
        return None
    return TableFetch(space, for_filter=for_filter, consistent=bool(req.get("ConsistentRead")))


def filter_paths(filt: ResolvedCondition | None) -> list[ResolvedPath]:
    return condition_paths(filt) if filt is not None else []


def check_key_paths(table: TableDef, paths: Iterable[ResolvedPath]) -> None:
    """Nested paths (``a.b``, ``a[0]``) into a key attribute of the table or of one of its indexes."""
    nested = {path[0] for path in paths if len(path) > 1}
    if not nested:
        return
    for attr in key_attributes(table):
        if attr.name in nested:
            raise ValidationException(messages.KEY_PATH_NOT_SCALAR.format(kind="Key", name=attr.name), bare=True)
    for index in (*table.gsis, *table.lsis):
        for attr in index.key_schema.attributes:  # every attribute of a multi-attribute key
            if attr.name in nested:
                raise ValidationException(
                    messages.KEY_PATH_NOT_SCALAR.format(kind="IndexKey", name=attr.name), bare=True
                )


def wants_capacity(req: dict[str, Any]) -> bool:
    mode = req.get("ReturnConsumedCapacity")
    return mode is not None and mode != "NONE"


def json_array(items: list[Json]) -> bytes:
    """``[a,b,...]`` of ready JSON fragments (items as the engine read them)."""
    return b"[" + b",".join(items) + b"]"


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
