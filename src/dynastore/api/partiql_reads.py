"""PartiQL SELECT: a Query (partition key equality or IN) or a Scan, one page of DynamoDB's 1 MB, with NextToken.

A SELECT becomes the engine's page reads (engine/pages.py ``read_page``), one per partition it names, in the
order of the IN list (or of the partition key with ORDER BY on it), each narrowed by a sort-key condition; the
rest of the WHERE clause is the page's filter. ``Limit`` counts the items read, across partitions, as Query's
does. The NextToken names the partition to go on with and the stored key after which it goes on, with a
fingerprint of the statement, its parameters and ConsistentRead: a token of another statement is refused.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
from typing import Any

import orjson

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.partiql_requests import read_space, table_of
from dynastore.api.read_requests import check_key_paths, json_array
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.engine.item_reads import GetItemRequest, get_item
from dynastore.engine.key_spaces import IndexKeySpace, KeySpace, key_condition_bounds, range_bounds
from dynastore.engine.pages import Json, PageRequest, TableFetch, condition_paths, read_page
from dynastore.errors import ValidationException
from dynastore.expressions import ResolvedCondition, ResolvedProjection, project
from dynastore.expressions.key_condition import KeyCondition
from dynastore.limits import MAX_PAGE_BYTES
from dynastore.model.values import AttributeValue, Item, compare_scalars
from dynastore.partiql import (
    ReadPlan,
    ast,
    key_equality,
    plan_multi_read,
    plan_read,
    translate_condition,
    translate_projection,
)

__all__ = ["SelectPage", "execute_select"]


class SelectPage:
    __slots__ = ("items", "next_token", "last_key", "half_units", "space")

    def __init__(
        self,
        items: list[Json],
        next_token: str | None,
        last_key: dict[str, Any] | None,
        half_units: int,
        space: KeySpace,
    ) -> None:
        self.items = items
        self.next_token = next_token
        self.last_key = last_key
        self.half_units = half_units
        self.space = space


class _Read:
    """A SELECT made ready to read: its key space, partition ranges, filter, projection and direction."""

    __slots__ = ("space", "ranges", "filter", "projection", "reverse", "fetch", "lookup")

    def __init__(
        self,
        space: KeySpace,
        ranges: list[tuple[bytes, bytes, bytes]],
        filt: ResolvedCondition | None,
        projection: ResolvedProjection | None,
        reverse: bool,
        fetch: TableFetch | None,
        lookup: Item | None = None,
    ) -> None:
        self.space = space
        self.ranges = ranges  # (lo, hi, admitted at) per partition, or the whole key space for a Scan
        self.filter = filt
        self.projection = projection
        self.reverse = reverse
        self.fetch = fetch
        self.lookup = lookup  # the item's whole key, when the read is of that one item (no ranges)


def execute_select(
    ctx: Context,
    select: ast.Select,
    params: list[AttributeValue],
    *,
    text: str,
    consistent: bool,
    limit: int | None,
    next_token: str | None,
) -> SelectPage:
    read = _prepare(ctx, select, params, consistent=consistent, one_page=limit is None and next_token is None)
    if read.lookup is not None:
        return _look_up(ctx, read, consistent)
    start_range: int = 0
    start_key: bytes | None = None
    if next_token is not None:
        start_range, start_key = _decode_token(next_token, _fingerprint(text, params, consistent), read.ranges)
    items: list[Json] = []
    half_units = 0
    remaining_limit = limit
    remaining_bytes = MAX_PAGE_BYTES
    for position in range(start_range, len(read.ranges)):
        lo, hi, admit_at = read.ranges[position]
        if start_key is not None and position == start_range:
            if read.reverse:
                hi = min(hi, start_key)
            else:
                lo = max(lo, start_key + b"\x00")
        page = read_page(
            ctx,
            PageRequest(
                read.space,
                lo,
                hi,
                reverse=read.reverse,
                limit=remaining_limit,
                filter=read.filter,
                projection=read.projection,
                page_bytes=remaining_bytes,
                fetch=read.fetch,
                consistent=consistent,
                admit_at=admit_at,
            ),
        )
        items.extend(page.items)
        half_units += read_half_units(page.read_bytes, consistent=consistent) + page.fetch_half_units
        if page.last_key is not None:
            # only a page that stops needs the statement's fingerprint
            token = _encode_token(_fingerprint(text, params, consistent), position, read.space.start_key(page.last_key))
            return SelectPage(items, token, page.last_key, half_units, read.space)
        if remaining_limit is not None:
            remaining_limit -= page.scanned_count
        remaining_bytes -= page.read_bytes
        more = position + 1 < len(read.ranges)
        if more and (remaining_limit == 0 or remaining_bytes <= 0):
            token = _encode_token(_fingerprint(text, params, consistent), position + 1, None)
            return SelectPage(items, token, None, half_units, read.space)
    return SelectPage(items, None, None, half_units, read.space)


def _look_up(ctx: Context, read: _Read, consistent: bool) -> SelectPage:
    """A SELECT naming one item by its whole key (``WHERE <partition key> = v``, with ``AND <sort key> = w`` on a
    table with a sort key) reads it with GetItem's lookup, which costs what the Query of that key costs (the
    item's size rounded, or the minimum when there is none)."""
    assert read.lookup is not None
    result = get_item(ctx, GetItemRequest(read.space.table, read.lookup, consistent=consistent))
    items: list[Json] = []
    stored = result.item_json
    if stored is not None:
        items.append(stored if read.projection is None else orjson.dumps(project(result.item(), read.projection)))
    return SelectPage(items, None, None, result.half_units, read.space)


def select_capacity(mode: str | None, table_name: str, page: SelectPage) -> dict[str, Any] | None:
    """Reading a table charges the table; reading an index charges the index (Query's and Scan's rule)."""
    index = page.space.index
    if index is None:
        return consumed_capacity(mode, table_name, page.half_units)
    per_index = {index.name: page.half_units}
    if index.kind == "LSI":
        return consumed_capacity(mode, table_name, 0, lsi_half_units=per_index)
    return consumed_capacity(mode, table_name, 0, gsi_half_units=per_index)


def select_response(page: SelectPage, consumed: dict[str, Any] | None) -> bytes:
    if page.next_token is None and page.last_key is None and consumed is None:
        return b'{"Items":' + json_array(page.items) + b"}"  # (a key lookup's answer, most often)
    parts = [b'"Items":' + json_array(page.items)]
    if page.next_token is not None:
        parts.append(b'"NextToken":' + orjson.dumps(page.next_token))
    if page.last_key is not None:
        parts.append(b'"LastEvaluatedKey":' + orjson.dumps(page.last_key))
    if consumed is not None:
        parts.append(b'"ConsumedCapacity":' + orjson.dumps(consumed))
    return b"{" + b",".join(parts) + b"}"


# ---------------------------------------------------------------- planning


def _prepare(
    ctx: Context, select: ast.Select, params: list[AttributeValue], *, consistent: bool, one_page: bool
) -> _Read:
    table = table_of(ctx, select.table)
    space = read_space(ctx, table, select.index, consistent=consistent)
    projection = translate_projection(select.projection)
    range_key = space.range_key
    hash_key = (space.hash_key.name, space.hash_key.type)
    schema = space.key_schema
    range_pair = None if range_key is None else (range_key.name, range_key.type)
    plan = None if schema.is_multi_attribute else key_equality(select.where, params, hash_key, range_pair)
    if plan is None:
        where = translate_condition(select.where, params) if select.where is not None else None
        if schema.is_multi_attribute:
            hash_keys = tuple((a.name, a.type) for a in schema.hash_keys)
            plan = plan_multi_read(where, hash_keys, tuple((a.name, a.type) for a in schema.range_keys))
        else:
            plan = plan_read(where, hash_key, range_pair)
    elif one_page and not select.order_by and space.index is None and len(plan.hash_values or ()) == 1:
        # A key lookup's plan: what follows for others checks nothing here but the projection's key paths (no
        # ORDER BY to check, no index to fetch from), so the item's key is had at once.
        assert plan.hash_values is not None
        lookup = _whole_key(space, plan, plan.hash_values[0])
        if lookup is not None:
            if projection is not None:
                check_key_paths(table, projection.paths)
            return _Read(space, [], None, projection, False, None, lookup)
    reverse, hash_descending = _order(select, space, plan)
    check_key_paths(table, projection.paths if projection is not None else ())
    fetch = _index_fetch(space, plan.filter, projection, consistent)
    if plan.partitions is not None:
        ranges = _multi_key_ranges(space, plan, ordered=bool(select.order_by), descending=hash_descending)
        return _Read(space, ranges, plan.filter, projection, reverse, fetch)
    if plan.hash_values is None:
        lo, hi = space.segment(0, 1)
        return _Read(space, [(lo, hi, lo)], plan.filter, projection, reverse, fetch)
    values = plan.hash_values
    if one_page and space.index is None and plan.filter is None and len(values) == 1:
        lookup = _whole_key(space, plan, values[0])
        if lookup is not None:
            return _Read(space, [], None, projection, False, None, lookup)
    if select.order_by:
        type_name = space.hash_key.type

        def order(a: AttributeValue, b: AttributeValue) -> int:
            return compare_scalars(type_name, a[type_name], b[type_name])

        values = sorted(values, key=functools.cmp_to_key(order), reverse=hash_descending)
    range_type = range_key.type if range_key is not None else "S"
    ranges = []
    for value in values:
        prefix = space.partition_prefix((value,))
        lo, hi = range_bounds(prefix, range_type, plan.range_op, plan.range_values)
        ranges.append((lo, hi, prefix))
    return _Read(space, ranges, plan.filter, projection, reverse, fetch)


def _whole_key(space: KeySpace, plan: ReadPlan, hash_value: AttributeValue) -> Item | None:
    """The key of the one item a read of one partition names whole (its sort key too, if it has one), else None."""
    range_key = space.range_key
    if range_key is None:
        return {space.hash_key.name: hash_value}
    if plan.range_op == "=" and len(plan.range_values) == 1 and range_key.type in plan.range_values[0]:
        return {space.hash_key.name: hash_value, range_key.name: plan.range_values[0]}
    return None


def _order(select: ast.Select, space: KeySpace, plan: ReadPlan) -> tuple[bool, bool]:
    """(sort key descending, partition key descending) from ORDER BY, after DynamoDB's rules: a WHERE clause,
    a partition-key condition, and key attributes only."""
    if not select.order_by:
        return False, False
    if select.where is None:
        raise ValidationException(messages.PARTIQL_ORDER_BY_WITHOUT_WHERE, bare=True)
    if plan.hash_values is None and plan.partitions is None:
        raise ValidationException(messages.PARTIQL_ORDER_BY_NEEDS_HASH, bare=True)
    reverse = hash_descending = False
    hash_names = {a.name for a in space.key_schema.hash_keys}
    range_names = {a.name for a in space.key_schema.range_keys}
    for term in select.order_by:
        elements = term.path.elements
        name = elements[0]
        if len(elements) == 1 and name in hash_names:
            hash_descending = term.descending
        elif len(elements) == 1 and name in range_names:
            reverse = term.descending
        else:
            raise ValidationException(messages.PARTIQL_ORDER_BY_NOT_KEY.format(name=_path_text(elements)), bare=True)
    return reverse, hash_descending


def _multi_key_ranges(
    space: KeySpace, plan: ReadPlan, *, ordered: bool, descending: bool
) -> list[tuple[bytes, bytes, bytes]]:
    """The byte range of each partition a multi-attribute key's plan reads, narrowed as its key condition would
    narrow a Query; with ORDER BY on a partition attribute, partitions in the order of their values (attribute
    by attribute, as the index orders them)."""
    assert plan.partitions is not None
    partitions = plan.partitions
    if ordered:
        by_values = functools.partial(_compare_partitions, tuple(a.type for a in space.key_schema.hash_keys))
        partitions = sorted(partitions, key=functools.cmp_to_key(by_values), reverse=descending)
    ranges = []
    for values in partitions:
        prefix = space.partition_prefix(values)
        condition = KeyCondition(values[0], plan.range_op, plan.range_values, values[1:], plan.sort_prefix)
        lo, hi = key_condition_bounds(space, condition, prefix)
        ranges.append((lo, hi, prefix))
    return ranges


def _compare_partitions(types: tuple[str, ...], a: tuple[AttributeValue, ...], b: tuple[AttributeValue, ...]) -> int:
    for type_name, left, right in zip(types, a, b, strict=True):
        order = compare_scalars(type_name, left[type_name], right[type_name])
        if order:
            return order
    return 0


def _path_text(elements: tuple[str | int, ...]) -> str:
    return "".join(f"[{e}]" if isinstance(e, int) else (f".{e}" if i else e) for i, e in enumerate(elements))


def _index_fetch(
    space: KeySpace, filt: ResolvedCondition | None, projection: ResolvedProjection | None, consistent: bool
) -> TableFetch | None:
    """An index that does not project every attribute: a filter may name only projected attributes; a projection
    naming others is refused on a GSI and fetched from the table on an LSI."""
    index = space.index
    if not isinstance(space, IndexKeySpace) or index is None or index.projection.type == "ALL":
        return None
    projected = {*space.key_schema.names, *space.table.key_schema.names, *index.projection.non_key_attributes}
    if filt is not None:
        outside = sorted({str(path[0]) for path in condition_paths(filt)} - projected)
        if outside:
            raise ValidationException(
                messages.PARTIQL_INDEX_FILTER_NOT_PROJECTED.format(index=index.name, names=", ".join(outside)),
                bare=True,
            )
    wanted = sorted({str(path[0]) for path in (projection.paths if projection is not None else ())} - projected)
    if not wanted:
        return None
    if index.kind == "GSI":
        raise ValidationException(
            messages.PARTIQL_GSI_NOT_PROJECTED.format(index=index.name, names=", ".join(wanted)), bare=True
        )
    return TableFetch(space, for_filter=False, consistent=consistent)


# ---------------------------------------------------------------- NextToken


def _fingerprint(text: str, params: list[AttributeValue], consistent: bool) -> str:
    digest = hashlib.blake2b(digest_size=12)
    digest.update(text.encode())
    digest.update(orjson.dumps(params, option=orjson.OPT_SORT_KEYS))
    digest.update(b"1" if consistent else b"0")
    return digest.hexdigest()


def _encode_token(fingerprint: str, position: int, stored_key: bytes | None) -> str:
    body = {"f": fingerprint, "p": position, "k": None if stored_key is None else stored_key.hex()}
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode()


def _decode_token(token: str, fingerprint: str, ranges: list[tuple[bytes, bytes, bytes]]) -> tuple[int, bytes | None]:
    """The partition and stored key a NextToken goes on from; it must be this statement's, and its key inside
    that partition's range (a token cannot steer a read elsewhere)."""
    invalid = ValidationException(messages.PARTIQL_NEXT_TOKEN_INVALID, bare=True)
    try:
        body = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        position, key_hex = body["p"], body["k"]
        if body["f"] != fingerprint or not isinstance(position, int) or not 0 <= position < len(ranges):
            raise invalid
        key = None if key_hex is None else bytes.fromhex(key_hex)
    except (ValueError, TypeError, KeyError, binascii.Error, orjson.JSONDecodeError, UnicodeEncodeError):
        raise invalid from None
    if key is not None:
        lo, hi, _ = ranges[position]
        if not lo <= key < hi:
            raise invalid
    return position, key
