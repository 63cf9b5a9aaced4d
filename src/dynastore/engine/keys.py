"""From a table's key schema and an item (or a Key) to the item's storage key."""

from __future__ import annotations

from dynastore import messages
from dynastore.model.table_schema import IndexDef, TableDef
from dynastore.model.values import Item
from dynastore.storage.keycodec import decode_value, encode_value
from dynastore.storage.keyspace import KEY_HEAD_BYTES, item_key
from dynastore.validation.attribute_values import check_key


def check_table_key(table: TableDef, key_source: Item, *, is_full_item: bool) -> None:
    """Key attributes present, of the schema's types, within the size limits (ValidationException otherwise)."""
    hash_key = table.key_schema.hash_key
    range_key = table.key_schema.range_key
    check_key(
        key_source,
        (hash_key.name, hash_key.type),
        None if range_key is None else (range_key.name, range_key.type),
        is_full_item=is_full_item,
    )


def key_schema_problem(table: TableDef, key_source: Item, *, is_full_item: bool) -> str | None:
    """DynamoDB's text when ``key_source`` does not fit the key schema (an attribute missing or of another type,
    a Key with other attributes), else None; ``check_table_key`` finds the same problems, in the same order,
    and also empty and oversized key values. Transactions report the schema problems as a ValidationError
    cancellation reason and the others as a ValidationException."""
    hash_key = table.key_schema.hash_key
    range_key = table.key_schema.range_key
    attrs = (hash_key,) if range_key is None else (hash_key, range_key)
    if not is_full_item and len(key_source) != len(attrs):
        return messages.KEY_SCHEMA_MISMATCH
    for attr in attrs:
        av = key_source.get(attr.name)
        if av is None:
            return messages.KEY_MISSING_IN_ITEM.format(name=attr.name) if is_full_item else messages.KEY_SCHEMA_MISMATCH
        if attr.type not in av:
            if is_full_item:
                actual = next(iter(av), "")
                return messages.KEY_TYPE_MISMATCH_ITEM.format(name=attr.name, expected=attr.type, actual=actual)
            return messages.KEY_SCHEMA_MISMATCH
    return None


def storage_key(table: TableDef, key_source: Item) -> bytes:
    """The storage key of the item whose key attributes ``key_source`` holds (already checked against the schema)."""
    hash_key = table.key_schema.hash_key
    hash_enc = encode_value(hash_key.type, key_source[hash_key.name][hash_key.type])
    range_key = table.key_schema.range_key
    range_enc = None if range_key is None else encode_value(range_key.type, key_source[range_key.name][range_key.type])
    return item_key(table.table_id, hash_enc, range_enc)


def key_attributes(table: TableDef, item: Item) -> Item:
    """Only the key attributes of ``item``."""
    hash_key = table.key_schema.hash_key
    key = {hash_key.name: item[hash_key.name]}
    range_key = table.key_schema.range_key
    if range_key is not None:
        key[range_key.name] = item[range_key.name]
    return key


def table_item_key(table: TableDef, index: IndexDef, entry_key: bytes) -> bytes:
    """The storage key of the table item a secondary index entry belongs to (the entry's key ends with it)."""
    pos = KEY_HEAD_BYTES  # tag, index id, partition hash
    for attr in index.key_schema.hash_keys + index.key_schema.range_keys:
        _, pos = decode_value(attr.type, entry_key, pos)
    table_keys = entry_key[pos:]
    _, hash_end = decode_value(table.key_schema.hash_key.type, table_keys, 0)
    return item_key(table.table_id, table_keys[:hash_end], table_keys[hash_end:] or None)
