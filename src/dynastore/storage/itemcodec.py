"""Stored item values: one format-version byte, then the item's wire-shaped JSON.

Format versions (the first byte of every stored item). NEVER renumber or reuse a retired value:

* ``0x01``: ``orjson.dumps(item)`` of the wire-shaped item (``{"a": {"S": "x"}, "n": {"N": "1.5"}}``).
  Numbers stay strings, binary stays base64 text, exactly as on the wire, so a stored item can be spliced
  into a response (``item_json``) without being decoded.

Unknown versions raise ``StorageCorruptionError``.
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore.storage.kv import StorageCorruptionError

__all__ = ["FORMAT_JSON_V1", "decode_item", "encode_item", "item_json"]

FORMAT_JSON_V1 = 0x01
_V1 = b"\x01"


def encode_item(item: dict[str, Any]) -> bytes:
    """The stored form of a wire-shaped item."""
    return _V1 + orjson.dumps(item)


def decode_item(raw: bytes) -> dict[str, Any]:
    """The wire-shaped item of a stored value."""
    if raw[:1] != _V1:
        raise _bad_version(raw)
    try:
        item = orjson.loads(memoryview(raw)[1:])
    except orjson.JSONDecodeError as e:
        raise StorageCorruptionError(f"stored item is not valid JSON: {e}") from e
    if not isinstance(item, dict):
        raise StorageCorruptionError("stored item is not a JSON object")
    return item


def item_json(raw: bytes) -> memoryview:
    """The item's JSON text as a zero-copy view, ready to splice into a response body.

    ``b"".join([...])`` and ``bytes + view`` accept it directly; call ``bytes(view)`` only if a real
    ``bytes`` object is needed.
    """
    if raw[:1] != _V1:
        raise _bad_version(raw)
    return memoryview(raw)[1:]


def _bad_version(raw: bytes) -> StorageCorruptionError:
    if not raw:
        return StorageCorruptionError("stored item is empty")
    return StorageCorruptionError(f"unknown stored item format version {raw[0]:#04x}")
