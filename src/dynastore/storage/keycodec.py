"""Order-preserving, self-delimiting encodings of key attribute values (where they sit in a key: ``keyspace``).

Value encodings (``encode_value``); byte order of the encoding == DynamoDB's order of the values:

* ``S`` (UTF-8 bytes) and ``B`` (raw bytes, decoded from the wire's base64): every ``00`` byte becomes
  ``00 FF`` and the value ends with ``00 00``. Unsigned byte order is kept, and no encoding is a prefix of
  another, so ``enc(a) + x`` and ``enc(b) + y`` compare like ``a`` and ``b`` whenever ``a != b``.
* ``N``: one sign-class byte (``01`` negative, ``02`` zero, ``03`` positive); zero ends there. Otherwise
  one exponent byte ``E + 130`` where ``E`` is the position of the leading digit (DynamoDB's range
  -130..125 fits a byte exactly), then the significant digits two per byte (``10*a + b + 1``, 1..100; an odd
  count pads a 0, which cannot be confused with a real digit because trailing zeros are stripped), then a
  ``00`` terminator. For negative numbers the exponent and digit bytes are complemented (``255 - x``) and
  the terminator is ``FF``, so larger magnitudes sort first. Digit bytes never equal either terminator.

Numbers are handled with ``decimal.Decimal`` only (never float/int parsing); callers pass validated wire
values, and ``encode_value`` raises ``ValueError`` for anything DynamoDB itself would reject.
"""

from __future__ import annotations

import base64
from decimal import Decimal, InvalidOperation
from typing import Final

# Key layout helpers that used to live here; callers should import them from ``keyspace``.

__all__ = [
    "decode_value",
    "encode_bytes",
    "encode_number",
    "encode_string",
    "encode_value",
]

_MIN_EXP = -130
_MAX_EXP = 125
_MAX_DIGITS = 38

_NEG, _ZERO, _POS = 0x01, 0x02, 0x03
_ZERO_ENC = b"\x02"
_TERM: Final = b"\x00\x00"


# ---------------------------------------------------------------- S and B


def encode_bytes(raw: bytes) -> bytes:
    """Escape ``00`` as ``00 FF`` and terminate with ``00 00`` (used for B after base64 decoding)."""
    # Looked for as the byte value 0: CPython tests ``bytes in bytes`` by first failing to read the needle as an
    # integer, and that raised and dropped TypeError cost more than the rest of the encoding.
    if 0 in raw:
        raw = raw.replace(b"\x00", b"\x00\xff")
    return raw + _TERM


def encode_string(text: str) -> bytes:
    return encode_bytes(text.encode("utf-8"))


def _decode_bytes(data: bytes, offset: int) -> tuple[bytes, int]:
    # Inside an encoding every 00 is followed by FF, so the first 00 00 is the terminator.
    end = data.find(_TERM, offset)
    if end < 0:
        raise ValueError("unterminated string/binary key component")
    raw = data[offset:end]
    if 0 in raw:  # the byte value, as in encode_bytes
        raw = raw.replace(b"\x00\xff", b"\x00")
    return raw, end + 2


# ---------------------------------------------------------------- N


def encode_number(text: str) -> bytes:
    """Encode a DynamoDB number (any accepted spelling: ``"1E+2"``, ``"100"``, ``"-0.50"``)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"not a finite number: {text!r}")
    if not value:
        return _ZERO_ENC
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    n = len(digits)
    magnitude = n + exponent - 1
    while digits[n - 1] == 0:
        n -= 1
    if n > _MAX_DIGITS or not _MIN_EXP <= magnitude <= _MAX_EXP:
        raise ValueError(f"number out of DynamoDB range: {text!r}")
    out = bytearray(2 + (n + 1) // 2 + 1)
    exp_byte = magnitude - _MIN_EXP
    j = 2
    if sign:
        out[0] = _NEG
        out[1] = 255 - exp_byte
        for i in range(0, n - 1, 2):
            out[j] = 254 - (digits[i] * 10 + digits[i + 1])
            j += 1
        if n & 1:
            out[j] = 254 - digits[n - 1] * 10
            j += 1
        out[j] = 0xFF
    else:
        out[0] = _POS
        out[1] = exp_byte
        for i in range(0, n - 1, 2):
            out[j] = digits[i] * 10 + digits[i + 1] + 1
            j += 1
        if n & 1:
            out[j] = digits[n - 1] * 10 + 1
            j += 1
        # out[j] is already the 00 terminator
    return bytes(out)


def _decode_number(data: bytes, offset: int) -> tuple[str, int]:
    cls = data[offset]
    if cls == _ZERO:
        return "0", offset + 1
    if cls not in (_NEG, _POS):
        raise ValueError(f"bad number class byte {cls:#x} at {offset}")
    neg = cls == _NEG
    exp_byte = data[offset + 1]
    magnitude = (255 - exp_byte if neg else exp_byte) + _MIN_EXP
    term = 0xFF if neg else 0x00
    end = data.index(term, offset + 2)
    body = data[offset + 2 : end]
    pairs = [254 - b for b in body] if neg else [b - 1 for b in body]
    digits = "".join([f"{p:02d}" for p in pairs])
    if digits.endswith("0"):
        digits = digits[:-1]  # the pad of an odd digit count
    n = len(digits)
    if magnitude >= n - 1:
        text = digits + "0" * (magnitude - n + 1)
    elif magnitude >= 0:
        text = digits[: magnitude + 1] + "." + digits[magnitude + 1 :]
    else:
        text = "0." + "0" * (-magnitude - 1) + digits
    return ("-" + text if neg else text), end + 1


# ---------------------------------------------------------------- dispatch


# Number encodings are remembered: parsing a number costs microseconds, and the same numbers come back (a write
# encodes its index keys at admission and again in its transaction; workloads reuse keys). Cleared when full.
_NUMBERS: dict[str, bytes] = {}
_NUMBERS_MAX = 4096


def encode_value(type_name: str, payload: str) -> bytes:
    """Encode a key attribute's wire payload: S text, B base64 text, N number text."""
    if type_name == "S":
        return encode_bytes(payload.encode("utf-8"))
    if type_name == "N":
        encoded = _NUMBERS.get(payload)
        if encoded is None:
            encoded = encode_number(payload)
            if len(_NUMBERS) >= _NUMBERS_MAX:
                _NUMBERS.clear()
            _NUMBERS[payload] = encoded
        return encoded
    if type_name == "B":
        return encode_bytes(base64.b64decode(payload))
    raise ValueError(f"not a key attribute type: {type_name!r}")


def decode_value(type_name: str, data: bytes, offset: int) -> tuple[str, int]:
    """Decode one component at ``offset``: (wire payload text, offset after it).

    N comes back canonical (plain notation, no exponent, no trailing zeros: ``"100"``, ``"-1.5"``);
    B comes back as standard padded base64.
    """
    if type_name == "S":
        raw, end = _decode_bytes(data, offset)
        return raw.decode("utf-8"), end
    if type_name == "N":
        return _decode_number(data, offset)
    if type_name == "B":
        raw, end = _decode_bytes(data, offset)
        return base64.b64encode(raw).decode("ascii"), end
    raise ValueError(f"not a key attribute type: {type_name!r}")
