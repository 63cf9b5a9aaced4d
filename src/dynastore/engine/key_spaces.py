"""Key spaces: where a Query or Scan walks, and every key range it needs, as stored bytes.

A page walks one contiguous key range of a ``KeySpace``: a table's items (``TableKeySpace``) or a secondary
index's entries (``IndexKeySpace``), each with its own key attributes, bounds and start-key encoding.

Range bounds come from the order-preserving, self-delimiting key encodings (``storage.keycodec``, laid out by
``storage.keyspace``): every sort
key condition is a byte range (``range_bounds``, ``key_condition_bounds``), so items are never decoded to test
a key condition, and the api layer never encodes a key itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from dynastore.engine.keys import table_item_key
from dynastore.expressions import KeyCondition
from dynastore.model.table_schema import IndexDef, KeyAttr, KeySchema, TableDef
from dynastore.model.values import AttributeValue, Item
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

__all__ = [
    "IndexKeySpace",
    "KeySpace",
    "TableKeySpace",
    "TableSpaces",
    "key_condition_bounds",
    "range_bounds",
    "sort_key_satisfies",
]


class KeySpace(Protocol):
    """Where a read walks and how its keys are encoded and decoded."""

    @property
    def table(self) -> TableDef: ...

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
    """A table's items: ``I | table_id | phash | hash_enc | range_enc``. A dynastore keeps one per table definition
    (``ctx.table_spaces``, ``TableSpaces``): the key attributes are read on every request."""

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


class TableSpaces:
    """The key space of each table, made once per table definition and kept by the dynastore (``ctx``): a
    catalog change makes a new TableDef, and the cached space holds the old one, so a reused ``id`` is told
    apart. Emptied when full."""

    __slots__ = ("_spaces", "_max")

    def __init__(self, maxsize: int = 1024) -> None:
        self._spaces: dict[int, TableKeySpace] = {}
        self._max = maxsize

    def of(self, table: TableDef) -> TableKeySpace:
        space = self._spaces.get(id(table))
        if space is None or space.table is not table:
            if len(self._spaces) >= self._max:
                self._spaces.clear()
            space = self._spaces[id(table)] = TableKeySpace(table)
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


def key_condition_bounds(space: KeySpace, condition: KeyCondition, prefix: bytes) -> tuple[bytes, bytes]:
    """``[lo, hi)`` of a Query's key condition under its partition's ``prefix``: the partition, narrowed by the
    equalities on leading sort attributes (multi-attribute index keys) and the condition on the sort attribute
    after them."""
    range_keys = space.key_schema.range_keys
    if not range_keys or condition.range_op is None:
        return range_bounds(prefix, "S", None, ())
    stem = prefix + b"".join(
        encode_value(attr.type, value[attr.type])
        for attr, value in zip(range_keys, condition.sort_prefix, strict=False)
    )
    attr = range_keys[len(condition.sort_prefix)]
    return range_bounds(stem, attr.type, condition.range_op, condition.range_values)


def sort_key_satisfies(range_key: KeyAttr, condition: KeyCondition, value: AttributeValue) -> bool:
    """Whether a sort key ``value`` (of ``range_key``'s type) meets the condition's sort-key operator, whatever
    its partition: the same byte range as ``range_bounds``, under a one-byte stand-in prefix."""
    stand_in = b"\x01"
    lo, hi = range_bounds(stand_in, range_key.type, condition.range_op, condition.range_values)
    return lo <= stand_in + encode_value(range_key.type, value[range_key.type]) < hi
