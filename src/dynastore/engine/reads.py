"""Reading many items: one page of a Query or Scan, and the key lookups of BatchGetItem.

A page walks one contiguous key range of a ``KeySpace`` (a table's items today; a secondary index's entries
later, which plug in as another ``KeySpace`` with their own key attributes, bounds and start-key encoding):

* ``Limit`` counts the items *read* (evaluated), before the filter; reaching it ends the page with a
  ``LastEvaluatedKey`` even when no item follows (DynamoDB does the same);
* the 1 MB page limit is measured on the sizes (DynamoDB's item-size rules, ``model.item_size``) of the items
  read, again before the filter: the page ends after the item that brings the total to 1 MB or more;
* ``Count`` counts the items that pass the filter, ``ScannedCount`` the items read;
* capacity: the sizes of all items read, summed and rounded once (``read_half_units``).

Reading avoids decoding what it will not return. A stored item is its size (exact, written with the item)
and its wire JSON (``itemcodec``): page limits and capacity read the size from the header, and an item that
needs no filter and no projection goes out as a slice of the stored value, never decoded.

Range bounds come from the order-preserving, self-delimiting key encodings (``storage.keycodec``): every sort
key condition is a byte range, so items are never decoded to test a key condition.

Throttling (a later issue) plugs into ``batch_get`` through ``admit``: a key it refuses is left unprocessed,
as are the keys after the 16 MB response limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

import orjson

from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.indexes import table_item_key
from dynastore.expressions import ResolvedCondition, ResolvedProjection, evaluate, project
from dynastore.expressions.ast import (
    ArithOperand,
    BetweenCondition,
    Comparison,
    FunctionCondition,
    FunctionOperand,
    InCondition,
    PathOperand,
    ResolvedOperand,
    ResolvedPath,
    iter_conditions,
)
from dynastore.limits import MAX_BATCH_GET_RESPONSE_BYTES, MAX_PAGE_BYTES
from dynastore.model.table_schema import IndexDef, KeyAttr, KeySchema, TableDef
from dynastore.model.values import AttributeValue, Item
from dynastore.storage.itemcodec import item_json, sized_json, stored_size
from dynastore.storage.keycodec import decode_value, encode_value
from dynastore.storage.keyspace import (
    KEY_HEAD_BYTES,
    hash_key_prefix,
    index_hash_key_prefix,
    index_key,
    index_prefix,
    index_segment_bounds,
    prefix_end,
    segment_bounds,
    table_prefix,
)
from dynastore.storage.kv import ReadTxn

__all__ = [
    "GetRequest",
    "GetResult",
    "IndexKeySpace",
    "KeySpace",
    "Page",
    "PageRequest",
    "TableFetch",
    "TableKeySpace",
    "batch_get",
    "condition_paths",
    "json_array",
    "range_bounds",
    "read_page",
    "table_space",
]

Json = bytes | memoryview


class KeySpace(Protocol):
    """Where a read walks and how its keys are encoded and decoded."""

    @property
    def hash_key(self) -> KeyAttr: ...

    @property
    def range_key(self) -> KeyAttr | None: ...

    @property
    def key_schema(self) -> KeySchema: ...

    @property
    def index(self) -> IndexDef | None:
        """The secondary index read, or None for the table itself."""
        ...

    def partition_prefix(self, hash_values: tuple[AttributeValue, ...]) -> bytes:
        """Prefix of every entry whose partition key is ``hash_values`` (in sort-key order)."""
        ...

    def segment(self, segment: int, total_segments: int) -> tuple[bytes, bytes]:
        """``[lo, hi)`` of one Scan segment (segment 0 of 1 is the whole space)."""
        ...

    def start_key(self, key: Item) -> bytes:
        """The stored key of an ExclusiveStartKey (already validated against the key attributes)."""
        ...

    def last_key(self, stored_key: bytes) -> Item:
        """The LastEvaluatedKey of the entry stored under ``stored_key``."""
        ...


@dataclass(frozen=True, slots=True)
class TableKeySpace:
    """A table's items: ``I | table_id | phash | hash_enc | range_enc``. Make it with ``table_space``, which
    keeps one per table definition (the key attributes are read on every request)."""

    table: TableDef
    key_schema: KeySchema = field(init=False)
    hash_key: KeyAttr = field(init=False)
    range_key: KeyAttr | None = field(init=False)
    index: IndexDef | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        schema = self.table.key_schema
        object.__setattr__(self, "key_schema", schema)
        object.__setattr__(self, "hash_key", schema.hash_key)
        object.__setattr__(self, "range_key", schema.range_key)

    def partition_prefix(self, hash_values: tuple[AttributeValue, ...]) -> bytes:
        hash_key = self.hash_key
        return hash_key_prefix(self.table.table_id, encode_value(hash_key.type, hash_values[0][hash_key.type]))

    def segment(self, segment: int, total_segments: int) -> tuple[bytes, bytes]:
        if total_segments == 1:
            prefix = table_prefix(self.table.table_id)
            return prefix, prefix_end(prefix)
        return segment_bounds(self.table.table_id, segment, total_segments)

    def start_key(self, key: Item) -> bytes:
        hash_key, range_key = self.hash_key, self.range_key
        out = self.partition_prefix((key[hash_key.name],))
        if range_key is not None:
            out += encode_value(range_key.type, key[range_key.name][range_key.type])
        return out

    def last_key(self, stored_key: bytes) -> Item:
        hash_key, range_key = self.hash_key, self.range_key
        payload, offset = decode_value(hash_key.type, stored_key, KEY_HEAD_BYTES)
        key: Item = {hash_key.name: {hash_key.type: payload}}
        if range_key is not None:
            key[range_key.name] = {range_key.type: decode_value(range_key.type, stored_key, offset)[0]}
        return key


_TABLE_SPACES: dict[int, TableKeySpace] = {}
_TABLE_SPACES_MAX = 1024


def table_space(table: TableDef) -> TableKeySpace:
    """The key space of ``table``, made once per table definition (a catalog change makes a new TableDef; the
    cached space holds the old one, so its id is not reused while it is cached)."""
    space = _TABLE_SPACES.get(id(table))
    if space is None or space.table is not table:
        if len(_TABLE_SPACES) >= _TABLE_SPACES_MAX:
            _TABLE_SPACES.clear()
        space = _TABLE_SPACES[id(table)] = TableKeySpace(table)
    return space


@dataclass(frozen=True, slots=True)
class IndexKeySpace:
    """A secondary index's entries: ``X | index_id | phash(idx_hash) | idx_hash | idx_range | hash | range``
    (``storage.keyspace.index_key``); a multi-attribute index key is its attributes' encodings in KeySchema
    order. Its LastEvaluatedKey holds the index key and the table key."""

    table: TableDef
    index: IndexDef

    @property
    def hash_key(self) -> KeyAttr:
        return self.index.key_schema.hash_key

    @property
    def range_key(self) -> KeyAttr | None:
        return self.index.key_schema.range_key

    @property
    def key_schema(self) -> KeySchema:
        return self.index.key_schema

    def partition_prefix(self, hash_values: tuple[AttributeValue, ...]) -> bytes:
        return index_hash_key_prefix(self.index.index_id, _encode_all(self.index.key_schema.hash_keys, hash_values))

    def segment(self, segment: int, total_segments: int) -> tuple[bytes, bytes]:
        if total_segments == 1:
            prefix = index_prefix(self.index.index_id)
            return prefix, prefix_end(prefix)
        return index_segment_bounds(self.index.index_id, segment, total_segments)

    def start_key(self, key: Item) -> bytes:
        schema, table_schema = self.index.key_schema, self.table.key_schema
        idx_range = schema.range_keys
        table_range = table_schema.range_key
        return index_key(
            self.index.index_id,
            _encode_all(schema.hash_keys, tuple(key[a.name] for a in schema.hash_keys)),
            _encode_all(idx_range, tuple(key[a.name] for a in idx_range)) if idx_range else None,
            _range_enc(table_schema.hash_key.type, key[table_schema.hash_key.name]),
            None if table_range is None else _range_enc(table_range.type, key[table_range.name]),
        )

    def last_key(self, stored_key: bytes) -> Item:
        key: Item = {}
        offset = KEY_HEAD_BYTES
        for attr in (*self.index.key_schema.attributes, *self.table.key_schema.attributes):
            payload, offset = decode_value(attr.type, stored_key, offset)
            key[attr.name] = {attr.type: payload}
        return key

    def table_key(self, stored_key: bytes) -> bytes:
        """The storage key of the table item an index entry stands for."""
        return table_item_key(self.table, self.index, stored_key)


def _encode_all(attrs: tuple[KeyAttr, ...], values: tuple[AttributeValue, ...]) -> bytes:
    """Self-delimiting encodings concatenated: the byte order is the values' order, attribute by attribute."""
    return b"".join(encode_value(attr.type, value[attr.type]) for attr, value in zip(attrs, values, strict=True))


def _range_enc(type_name: str, value: AttributeValue) -> bytes:
    return encode_value(type_name, value[type_name])


def range_bounds(
    prefix: bytes, range_type: str, op: str | None, values: tuple[AttributeValue, ...]
) -> tuple[bytes, bytes]:
    """``[lo, hi)`` of the entries under ``prefix`` whose sort key satisfies ``op`` over ``values``.

    Encodings are self-delimiting, so ``prefix + enc(v)`` starts exactly the entries whose sort key is ``v``
    (an index entry continues with the table key after it) and ``prefix_end`` of it ends them.
    """
    end = prefix_end(prefix)
    if op is None:
        return prefix, end
    if op == "begins_with":
        stem = prefix + _range_enc(range_type, values[0])[:-2]  # S/B: drop the 00 00 terminator
        return stem, prefix_end(stem)
    at = prefix + _range_enc(range_type, values[0])
    if op == "=":
        return at, prefix_end(at)
    if op == "<":
        return prefix, at
    if op == "<=":
        return prefix, prefix_end(at)
    if op == ">":
        return prefix_end(at), end
    if op == ">=":
        return at, end
    assert op == "BETWEEN"
    return at, prefix_end(prefix + _range_enc(range_type, values[1]))


def condition_paths(condition: ResolvedCondition) -> list[ResolvedPath]:
    """Every document path of a condition, in source order."""
    paths: list[ResolvedPath] = []

    def operand(node: ResolvedOperand) -> None:
        if isinstance(node, PathOperand):
            paths.append(node.path)
        elif isinstance(node, FunctionOperand):
            for arg in node.args:
                operand(arg)
        elif isinstance(node, ArithOperand):
            operand(node.left)
            operand(node.right)

    for node in iter_conditions(condition.root):
        if isinstance(node, Comparison):
            operand(node.left)
            operand(node.right)
        elif isinstance(node, BetweenCondition):
            for part in (node.operand, node.low, node.high):
                operand(part)
        elif isinstance(node, InCondition):
            operand(node.operand)
            for option in node.options:
                operand(option)
        elif isinstance(node, FunctionCondition):
            for arg in node.args:
                operand(arg)
    return paths


# ---------------------------------------------------------------- Query / Scan pages


@dataclass(frozen=True, slots=True)
class TableFetch:
    """An LSI read that needs attributes the index does not project: each entry's table item is read too
    (DynamoDB's "fetch from the table"), each rounded to 4 KB on its own."""

    space: IndexKeySpace
    for_filter: bool  # the filter names unprojected attributes: fetch every entry read, before filtering
    consistent: bool


# PageRequest and Page are plain classes rather than dataclasses: each Query and Scan makes one of each, and a
# compiled build makes a dataclass through its interpreted __init__ (docs/design.md "Compiled modules").
class PageRequest:
    __slots__ = ("space", "lo", "hi", "reverse", "limit", "filter", "projection", "count_only", "page_bytes", "fetch")

    def __init__(
        self,
        space: KeySpace,
        lo: bytes,
        hi: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
        filter: ResolvedCondition | None = None,
        projection: ResolvedProjection | None = None,
        count_only: bool = False,
        page_bytes: int = MAX_PAGE_BYTES,
        fetch: TableFetch | None = None,
    ) -> None:
        self.space: Final = space
        self.lo: Final = lo
        self.hi: Final = hi
        self.reverse: Final = reverse
        self.limit: Final = limit
        self.filter: Final = filter
        self.projection: Final = projection
        self.count_only: Final = count_only
        self.page_bytes: Final = page_bytes
        self.fetch: Final = fetch


class Page:
    __slots__ = ("items", "count", "scanned_count", "last_key", "read_bytes", "fetch_half_units")

    def __init__(
        self,
        items: list[Json],
        count: int,
        scanned_count: int,
        last_key: Item | None,
        read_bytes: int,
        fetch_half_units: int = 0,
    ) -> None:
        self.items = items  # the JSON of each returned item, ready to splice into a response
        self.count = count
        self.scanned_count = scanned_count
        self.last_key = last_key
        self.read_bytes = read_bytes  # the sum of the sizes of the items (or index entries) read (capacity)
        self.fetch_half_units = fetch_half_units  # table fetches of an LSI read


def read_page(txn: ReadTxn, req: PageRequest) -> Page:
    """One page of ``req``'s range, starting at ``req.lo`` (or ``req.hi`` going backwards)."""
    if req.fetch is not None:
        return _read_page_fetching(txn, req, req.fetch)
    filt, projection, count_only, limit = req.filter, req.projection, req.count_only, req.limit
    page_bytes = req.page_bytes
    items: list[Json] = []
    count = scanned = total = 0
    last: bytes | None = None
    stopped = False
    sized, append = sized_json, items.append  # the loop runs once per item read: no lookups in it
    for key, raw in txn.iter_range(req.lo, req.hi, reverse=req.reverse):
        scanned += 1
        last = key
        size, view = sized(raw)
        total += size
        if filt is None:
            if not count_only:
                append(view if projection is None else orjson.dumps(project(orjson.loads(view), projection)))
        else:
            item = orjson.loads(view)
            if evaluate(filt, item):
                count += 1
                if not count_only:
                    append(view if projection is None else orjson.dumps(project(item, projection)))
        if scanned == limit or total >= page_bytes:
            stopped = True
            break
    if filt is None:
        count = scanned
    last_key = req.space.last_key(last) if stopped and last is not None else None
    return Page(items, count, scanned, last_key, total)


def _read_page_fetching(txn: ReadTxn, req: PageRequest, fetch: TableFetch) -> Page:
    """``read_page`` for an LSI read that fetches table items: page limits and the index part of the capacity
    count the index entries; each fetched item costs its own read (``Page.fetch_half_units``)."""
    filt, projection, limit = req.filter, req.projection, req.limit
    items: list[Json] = []
    count = scanned = total = fetched = 0
    last: bytes | None = None
    stopped = False
    for key, raw in txn.iter_range(req.lo, req.hi, reverse=req.reverse):
        scanned += 1
        last = key
        total += stored_size(raw)
        item: Item | None = None
        if fetch.for_filter:
            item, units = _fetch(txn, fetch, key)
            fetched += units
        passes = filt is None or evaluate(filt, item if item is not None else orjson.loads(item_json(raw)))
        if passes:
            count += 1
            if not req.count_only:
                if item is None:
                    item, units = _fetch(txn, fetch, key)
                    fetched += units
                items.append(orjson.dumps(item if projection is None else project(item, projection)))
        if scanned == limit or total >= req.page_bytes:
            stopped = True
            break
    last_key = req.space.last_key(last) if stopped and last is not None else None
    return Page(items, count, scanned, last_key, total, fetched)


def _fetch(txn: ReadTxn, fetch: TableFetch, entry_key: bytes) -> tuple[Item, int]:
    """The table item behind an index entry and the half-units of reading it. LSI entries are written in the
    item's own transaction, so the item is there."""
    raw = txn.get(fetch.space.table_key(entry_key))
    if raw is None:
        return {}, read_half_units(0, consistent=fetch.consistent)
    item: Item = orjson.loads(item_json(raw))
    return item, read_half_units(stored_size(raw), consistent=fetch.consistent)


# ---------------------------------------------------------------- BatchGetItem


@dataclass(frozen=True, slots=True)
class GetRequest:
    """One table's part of a BatchGetItem: stored keys in request order."""

    table: TableDef
    keys: tuple[bytes, ...]
    projection: ResolvedProjection | None = None
    consistent: bool = False


@dataclass(slots=True)
class GetResult:
    items: list[Json] = field(default_factory=list)
    unprocessed: list[int] = field(default_factory=list)  # indexes into GetRequest.keys
    half_units: int = 0


Admit = Callable[[TableDef, bytes], bool]


def batch_get(
    txn: ReadTxn,
    requests: list[GetRequest],
    *,
    admit: Admit | None = None,
    response_bytes: int = MAX_BATCH_GET_RESPONSE_BYTES,
) -> list[GetResult]:
    """Read every key; keys refused by ``admit`` or past the response limit are left unprocessed.

    The response limit counts the sizes of the items found; the item that would take the total over it, and
    every key after it, is left unprocessed. Each key read costs ``read_half_units`` of its item (of 0 bytes,
    the minimum, when there is no item): BatchGetItem rounds every item on its own.
    """
    results = [GetResult() for _ in requests]
    total = 0
    stopped = False
    for request, result in zip(requests, results, strict=True):
        projection, consistent, table = request.projection, request.consistent, request.table
        for index, key in enumerate(request.keys):
            if stopped or (admit is not None and not admit(table, key)):
                result.unprocessed.append(index)
                continue
            raw = txn.get(key)
            if raw is None:
                result.half_units += read_half_units(0, consistent=consistent)
                continue
            size = stored_size(raw)
            if total + size > response_bytes:
                stopped = True
                result.unprocessed.append(index)
                continue
            total += size
            result.half_units += read_half_units(size, consistent=consistent)
            view = item_json(raw)
            result.items.append(view if projection is None else orjson.dumps(project(orjson.loads(view), projection)))
    return results


def json_array(items: list[Json]) -> bytes:
    """``[a,b,...]`` of ready JSON fragments."""
    return b"[" + b",".join(items) + b"]"
