"""Stored item values: one format-version byte, then the item's wire-shaped JSON.

Format versions (the first byte of every stored item). NEVER renumber or reuse a retired value:

* ``0x01``: the item's DynamoDB size (4 bytes, big-endian), then ``orjson.dumps(item)`` of the wire-shaped item
  (``{"a": {"S": "x"}, "n": {"N": "1.5"}}``). Numbers stay strings, binary stays base64 text, exactly as on
  the wire, so a stored item can be spliced into a response (``item_json``) without being decoded, and its
  size (for capacity units, page limits and statistics) is known without decoding it (``stored_size``).

Unknown versions raise ``StorageCorruptionError``.
"""

from __future__ import annotations

from typing import Any, Final

import orjson
from orjson import JSONDecodeError

from dynastore.storage.kv import StorageCorruptionError

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
dumps: Final = orjson.dumps
loads: Final = orjson.loads

__all__ = ["FORMAT_JSON_V1", "decode_item", "encode_item", "item_json", "stored_size"]

FORMAT_JSON_V1: Final = 0x01
_V1: Final = b"\x01"
_HEADER: Final = 5  # version byte + 4-byte size


def encode_item(item: dict[str, Any], size: int) -> bytes:
    """The stored form of a wire-shaped item whose DynamoDB size (model.item_size) is ``size``."""
    return _V1 + size.to_bytes(4, "big") + dumps(item)


def stored_size(raw: bytes) -> int:
    """The DynamoDB size of a stored item, read from its header (four byte reads, native code once compiled,
    where ``int.from_bytes`` of a slice costs a slice and a method call by name)."""
    _check_header(raw)
    return raw[1] << 24 | raw[2] << 16 | raw[3] << 8 | raw[4]


def decode_item(raw: bytes) -> dict[str, Any]:
    """The wire-shaped item of a stored value."""
    _check_header(raw)
    try:
        # A slice, not a memoryview: copying a small item's text costs less than making the view (a large item's
        # copy is small beside its parse).
        item = loads(raw[_HEADER:])
    except JSONDecodeError as e:
        raise StorageCorruptionError(f"stored item is not valid JSON: {e}") from e
    if not isinstance(item, dict):
        raise StorageCorruptionError("stored item is not a JSON object")
    return item


def item_json(raw: bytes) -> memoryview:
    """The item's JSON text as a zero-copy view, ready to splice into a response body.

    ``b"".join([...])`` and ``bytes + view`` accept it directly; call ``bytes(view)`` only if a real
    ``bytes`` object is needed.
    """
    _check_header(raw)
    return memoryview(raw)[_HEADER:]


def sized_json(raw: bytes) -> tuple[int, memoryview]:
    """``(stored_size(raw), item_json(raw))`` in one step, for loops over many items."""
    return stored_size(raw), memoryview(raw)[_HEADER:]


def _check_header(raw: bytes) -> None:
    """Raise unless ``raw`` starts with a whole header of a known format version."""
    if len(raw) < _HEADER or raw[0] != FORMAT_JSON_V1:
        raise _bad_version(raw)


def _bad_version(raw: bytes) -> StorageCorruptionError:
    if not raw:
        return StorageCorruptionError("stored item is empty")
    if raw[0] == FORMAT_JSON_V1:
        return StorageCorruptionError(f"stored item is truncated: {len(raw)} bytes, shorter than its header")
    return StorageCorruptionError(f"unknown stored item format version {raw[0]:#04x}")
