"""Stored items: a version byte, the item size, then the wire JSON, spliceable without decoding."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynastore.model.item_size import item_size
from dynastore.storage.itemcodec import FORMAT_JSON_V1, decode_item, encode_item, item_json, sized_json, stored_size
from dynastore.storage.kv import StorageCorruptionError

ITEM: dict[str, Any] = {
    "pk": {"S": "user#1"},
    "n": {"N": "-1.5"},
    "b": {"B": "AAE="},
    "m": {"M": {"l": {"L": [{"NULL": True}, {"BOOL": False}, {"SS": ["a", "b"]}]}}},
    "u": {"S": "\u00e9\U0001f600\x00"},
}


def encode(item: dict[str, Any]) -> bytes:
    return encode_item(item, item_size(item))


def test_roundtrip() -> None:
    raw = encode(ITEM)
    assert raw[0] == FORMAT_JSON_V1 == 0x01
    assert decode_item(raw) == ITEM


def test_size_is_read_without_decoding() -> None:
    assert stored_size(encode(ITEM)) == item_size(ITEM)
    assert stored_size(encode_item({"a": {"S": "x"}}, 409_600)) == 409_600


@pytest.mark.parametrize("size", [0, 1, 255, 256, 65_536, 409_600, (1 << 32) - 1])
def test_every_byte_of_the_size_is_read(size: int) -> None:
    raw = encode_item({"a": {"S": "x"}}, size)
    assert stored_size(raw) == size and sized_json(raw)[0] == size


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "stored item is empty"),
        (b"\x01\x00\x00", "stored item is truncated: 3 bytes, shorter than its header"),
        (b"\x02\x00\x00\x00\x01{}", "unknown stored item format version 0x02"),
    ],
)
def test_a_size_is_not_read_from_a_damaged_header(raw: bytes, message: str) -> None:
    with pytest.raises(StorageCorruptionError, match=message):
        stored_size(raw)
    with pytest.raises(StorageCorruptionError, match=message):
        sized_json(raw)


def test_item_json_is_a_zero_copy_view() -> None:
    raw = encode(ITEM)
    view = item_json(raw)
    assert isinstance(view, memoryview)
    assert view.obj is raw  # no copy
    assert orjson.loads(view) == ITEM
    body = b'{"Item":' + item_json(raw) + b"}"
    assert orjson.loads(body) == {"Item": ITEM}
    assert orjson.loads(b"".join([b"[", item_json(raw), b"]"])) == [ITEM]


@pytest.mark.parametrize("raw", [b"", b"\x00{}", b"\x02{}", b"{}"])
def test_unknown_version(raw: bytes) -> None:
    with pytest.raises(StorageCorruptionError):
        decode_item(raw)
    with pytest.raises(StorageCorruptionError):
        item_json(raw)


@pytest.mark.parametrize("raw", [b"\x01\x00\x00\x00\x01{", b"\x01\x00\x00\x00\x01[1]", b"\x01"])
def test_corrupt_payload(raw: bytes) -> None:
    with pytest.raises(StorageCorruptionError):
        decode_item(raw)


scalars = st.one_of(
    st.builds(lambda s: {"S": s}, st.text()),
    st.builds(lambda n: {"N": str(n)}, st.integers()),
    st.builds(lambda b: {"BOOL": b}, st.booleans()),
)
attrs = st.recursive(
    scalars,
    lambda inner: (
        st.builds(lambda m: {"M": m}, st.dictionaries(st.text(max_size=5), inner, max_size=3))
        | st.builds(lambda xs: {"L": xs}, st.lists(inner, max_size=3))
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(min_size=1, max_size=8), attrs, max_size=6))
def test_roundtrip_property(item: dict[str, Any]) -> None:
    assert decode_item(encode(item)) == item
    assert orjson.loads(item_json(encode(item))) == item
    assert stored_size(encode(item)) == item_size(item)
