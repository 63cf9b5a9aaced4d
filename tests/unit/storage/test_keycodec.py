"""Key value encodings sort like DynamoDB values, round-trip, and compose."""

from __future__ import annotations

import base64
from decimal import Context, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynastore.storage import keycodec as kc

_WIDE = Context(prec=200, Emax=999, Emin=-999)


def canonical(text: str) -> str:
    value = Decimal(text)
    if not value:
        return "0"
    return format(value.normalize(_WIDE), "f")


@st.composite
def ddb_numbers(draw: st.DrawFn) -> str:
    """Any number DynamoDB accepts, in a random spelling (leading/trailing zeros, exponent form)."""
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from(["0", "-0", "0.000", "0E+5", "00"]))
    n = draw(st.integers(1, 38))
    digits = draw(st.text("0123456789", min_size=n, max_size=n))
    digits = draw(st.sampled_from("123456789")) + digits[1:]
    # magnitude = n + exp - 1 must lie in [-130, 125]
    exp = draw(st.integers(-130 - n + 1, 125 - n + 1))
    sign = draw(st.sampled_from(["", "-", "+"]))
    if draw(st.booleans()):
        text = f"{sign}{digits}E{exp}"
    else:
        text = f"{sign}{format(Decimal(digits).scaleb(exp, _WIDE), 'f')}"
    if draw(st.booleans()) and "E" not in text:
        text = text + ("0" * draw(st.integers(1, 3)) if "." in text else ".00")
    return text


def enc(type_name: str, value: str | bytes) -> bytes:
    if type_name == "B":
        assert isinstance(value, bytes)
        return kc.encode_value("B", base64.b64encode(value).decode())
    assert isinstance(value, str)
    return kc.encode_value(type_name, value)


def ddb_key(type_name: str, value: str | bytes) -> Decimal | bytes:
    if type_name == "N":
        assert isinstance(value, str)
        return Decimal(value)
    if type_name == "S":
        assert isinstance(value, str)
        return value.encode("utf-8")
    assert isinstance(value, bytes)
    return value


strings = st.text(st.characters(codec="utf-8"), max_size=12) | st.text("\x00\x01a\xff\U0001f600", max_size=8)
binaries = st.binary(max_size=12) | st.lists(st.sampled_from([b"\x00", b"\xff", b"\x01"]), max_size=8).map(b"".join)
VALUES: dict[str, st.SearchStrategy[str | bytes]] = {"S": strings, "B": binaries, "N": ddb_numbers()}


# ---------------------------------------------------------------- order


@pytest.mark.parametrize("type_name", ["S", "B", "N"])
@settings(max_examples=300)
@given(data=st.data())
def test_encoding_order_is_ddb_order(type_name: str, data: st.DataObject) -> None:
    values = data.draw(st.lists(VALUES[type_name], min_size=2, max_size=20))
    by_ddb = sorted(values, key=lambda v: (ddb_key(type_name, v), enc(type_name, v)))
    by_enc = sorted(values, key=lambda v: enc(type_name, v))
    assert [ddb_key(type_name, v) for v in by_enc] == [ddb_key(type_name, v) for v in by_ddb]
    for a in values:  # equal values encode equally, different values differently
        for b in values:
            assert (enc(type_name, a) == enc(type_name, b)) == (ddb_key(type_name, a) == ddb_key(type_name, b))


@pytest.mark.parametrize("hash_type", ["S", "B", "N"])
@pytest.mark.parametrize("range_type", ["S", "B", "N"])
@settings(max_examples=100)
@given(data=st.data())
def test_composite_keys_compare_componentwise(hash_type: str, range_type: str, data: st.DataObject) -> None:
    pairs = data.draw(st.lists(st.tuples(VALUES[hash_type], VALUES[range_type]), min_size=2, max_size=15))

    def ddb_cmp(x: tuple[str | bytes, str | bytes], y: tuple[str | bytes, str | bytes]) -> int:
        kx = (ddb_key(hash_type, x[0]), ddb_key(range_type, x[1]))
        ky = (ddb_key(hash_type, y[0]), ddb_key(range_type, y[1]))
        return (kx > ky) - (kx < ky)

    def composite(p: tuple[str | bytes, str | bytes]) -> bytes:
        return enc(hash_type, p[0]) + enc(range_type, p[1])

    by_enc = sorted(pairs, key=composite)
    for a, b in zip(by_enc, by_enc[1:], strict=False):
        assert ddb_cmp(a, b) <= 0
        assert (composite(a) == composite(b)) == (ddb_cmp(a, b) == 0)


# ---------------------------------------------------------------- round trips


@settings(max_examples=500)
@given(ddb_numbers(), st.binary(max_size=3))
def test_number_roundtrip(text: str, tail: bytes) -> None:
    data = b"prefix" + kc.encode_value("N", text) + tail
    out, end = kc.decode_value("N", data, 6)
    assert out == canonical(text)
    assert data[end:] == tail


@given(strings, st.binary(max_size=3))
def test_string_roundtrip(text: str, tail: bytes) -> None:
    data = b"\x00" + kc.encode_value("S", text) + tail
    assert kc.decode_value("S", data, 1) == (text, len(data) - len(tail))


@given(binaries, st.binary(max_size=3))
def test_binary_roundtrip(raw: bytes, tail: bytes) -> None:
    b64 = base64.b64encode(raw).decode()
    data = kc.encode_value("B", b64) + tail
    assert kc.decode_value("B", data, 0) == (b64, len(data) - len(tail))


@given(st.lists(st.sampled_from(["S", "N", "B"]), min_size=1, max_size=4), st.data())
def test_components_decode_in_sequence(types: list[str], data: st.DataObject) -> None:
    wire: list[str] = []
    for t in types:
        v = data.draw(VALUES[t])
        wire.append(base64.b64encode(v).decode() if isinstance(v, bytes) else canonical(v) if t == "N" else v)
    blob = b"".join(kc.encode_value(t, w) for t, w in zip(types, wire, strict=True))
    offset = 0
    for t, w in zip(types, wire, strict=True):
        out, offset = kc.decode_value(t, blob, offset)
        assert out == w
    assert offset == len(blob)


@pytest.mark.parametrize(
    ("text", "canon"),
    [
        ("0", "0"),
        ("-0.0", "0"),
        ("1E+2", "100"),
        ("1.50", "1.5"),
        ("-1.5", "-1.5"),
        ("0.001", "0.001"),
        ("1E-130", "0." + "0" * 129 + "1"),
        ("9.9999999999999999999999999999999999999E+125", "99999999999999999999999999999999999999" + "0" * 88),
        ("-12345678901234567890123456789012345678", "-12345678901234567890123456789012345678"),
    ],
)
def test_number_examples(text: str, canon: str) -> None:
    assert kc.decode_value("N", kc.encode_value("N", text), 0)[0] == canon


def test_number_encoding_is_compact() -> None:
    assert kc.encode_value("N", "0") == b"\x02"
    assert len(kc.encode_value("N", "123")) == 5  # class, exponent, 2 digit bytes, terminator
    assert len(kc.encode_value("N", "1" * 38)) == 22


@pytest.mark.parametrize("bad", ["1E+126", "1E-131", "1" * 39, "NaN", "Infinity", "abc", ""])
def test_number_out_of_range(bad: str) -> None:
    with pytest.raises(ValueError):
        kc.encode_value("N", bad)


def test_unknown_type() -> None:
    with pytest.raises(ValueError):
        kc.encode_value("SS", "x")


def test_strings_sort_by_utf8_bytes_not_utf16_units() -> None:
    values = ["\U0001f600", "\uffff", "a"]  # in UTF-16, U+1F600 (a surrogate pair) sorts before U+FFFF
    assert sorted(values, key=lambda v: kc.encode_value("S", v)) == ["a", "\uffff", "\U0001f600"]
