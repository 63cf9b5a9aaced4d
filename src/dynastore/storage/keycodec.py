"""Order-preserving, self-delimiting key encodings, and the layout of every key in the store.

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

Key layout (all integers big-endian):

* items:     ``b"I" | table_id:4 | phash(hash_enc):4 | hash_enc | range_enc``
* indexes:   ``b"X" | index_id:4 | phash(idx_hash_enc):4 | idx_hash_enc | idx_range_enc``
  ``| hash_enc | range_enc``
* catalog:   ``b"C" | name (UTF-8)``
* GSI backlog: ``b"Q" | sequence:8`` (index updates waiting to be applied, in commit order; engine/gsi_backlog.py)
* item collections: ``b"L" | table_id:4 | hash_enc`` (size of one partition key's items and LSI entries)

``phash`` spreads a table's partition keys over the 2^32 hash space, giving DynamoDB-like Scan order; a
Scan segment, and a partition for throttling, is a contiguous range of that space.

Numbers are handled with ``decimal.Decimal`` only (never float/int parsing); callers pass validated wire
values, and ``encode_value`` raises ``ValueError`` for anything DynamoDB itself would reject.
"""

from __future__ import annotations

import base64
import hashlib
from decimal import Decimal, InvalidOperation

__all__ = [
    "MAX_SEGMENTS",
    "backlog_key",
    "backlog_prefix",
    "collection_key",
    "collection_prefix",
    "decode_value",
    "encode_bytes",
    "encode_number",
    "encode_string",
    "encode_value",
    "hash_key_prefix",
    "index_hash_key_prefix",
    "index_key",
    "index_prefix",
    "index_segment_bounds",
    "item_key",
    "meta_key",
    "meta_prefix",
    "partition_hash",
    "prefix_end",
    "segment_bounds",
    "table_prefix",
]

MAX_SEGMENTS = 1_000_000
_HASH_SPACE = 1 << 32
_MIN_EXP = -130
_MAX_EXP = 125
_MAX_DIGITS = 38

_NEG, _ZERO, _POS = 0x01, 0x02, 0x03
_ZERO_ENC = b"\x02"
_TERM = b"\x00\x00"
_phash = hashlib.blake2b

ITEM_TAG = b"I"
INDEX_TAG = b"X"
META_TAG = b"C"
BACKLOG_TAG = b"Q"
COLLECTION_TAG = b"L"


# ---------------------------------------------------------------- S and B


def encode_bytes(raw: bytes) -> bytes:
    """Escape ``00`` as ``00 FF`` and terminate with ``00 00`` (used for B after base64 decoding)."""
    if b"\x00" in raw:
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
    if b"\x00" in raw:
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


# ---------------------------------------------------------------- layout


# Partition hashes are remembered like number encodings: a request hashes its partition key more than once
# (admission, the item key, a Query's start key) and workloads come back to the same keys. Cleared when full.
_HASHES: dict[bytes, bytes] = {}
_HASHES_MAX = 4096


def partition_hash(encoded_hash_key: bytes) -> bytes:
    """4 well-spread bytes (BLAKE2b) of an encoded partition key: its place in the table's hash space."""
    digest = _HASHES.get(encoded_hash_key)
    if digest is None:
        digest = _phash(encoded_hash_key, digest_size=4).digest()
        if len(_HASHES) >= _HASHES_MAX:
            _HASHES.clear()
        _HASHES[encoded_hash_key] = digest
    return digest


def table_prefix(table_id: int) -> bytes:
    return ITEM_TAG + table_id.to_bytes(4, "big")


def item_key(table_id: int, hash_enc: bytes, range_enc: bytes | None) -> bytes:
    head = ITEM_TAG + table_id.to_bytes(4, "big") + partition_hash(hash_enc) + hash_enc
    return head + range_enc if range_enc else head


def hash_key_prefix(table_id: int, hash_enc: bytes) -> bytes:
    """Prefix of every item with this partition key (a Query's range, in sort-key order)."""
    return ITEM_TAG + table_id.to_bytes(4, "big") + partition_hash(hash_enc) + hash_enc


def index_prefix(index_id: int) -> bytes:
    return INDEX_TAG + index_id.to_bytes(4, "big")


def index_key(
    index_id: int,
    idx_hash_enc: bytes,
    idx_range_enc: bytes | None,
    hash_enc: bytes,
    range_enc: bytes | None,
) -> bytes:
    """An index entry: index key first (Query order), then the table key (unique, stable order)."""
    return b"".join(
        (
            INDEX_TAG,
            index_id.to_bytes(4, "big"),
            partition_hash(idx_hash_enc),
            idx_hash_enc,
            idx_range_enc or b"",
            hash_enc,
            range_enc or b"",
        )
    )


def index_hash_key_prefix(index_id: int, idx_hash_enc: bytes) -> bytes:
    return INDEX_TAG + index_id.to_bytes(4, "big") + partition_hash(idx_hash_enc) + idx_hash_enc


def backlog_prefix() -> bytes:
    return BACKLOG_TAG


def backlog_key(seq: int) -> bytes:
    """A GSI backlog record: sequence numbers are big-endian, so records iterate in the order they were written."""
    return BACKLOG_TAG + seq.to_bytes(8, "big")


def collection_prefix(table_id: int) -> bytes:
    return COLLECTION_TAG + table_id.to_bytes(4, "big")


def collection_key(table_id: int, hash_enc: bytes) -> bytes:
    """The size record of one item collection (tables with LSIs): all items and LSI entries of a partition key."""
    return COLLECTION_TAG + table_id.to_bytes(4, "big") + hash_enc


def meta_prefix() -> bytes:
    return META_TAG


def meta_key(name: str) -> bytes:
    """A catalog record key (table metadata and other named records)."""
    return META_TAG + name.encode("utf-8")


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix`` (exclusive upper bound)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        raise ValueError("no key follows a prefix made only of FF bytes")
    return stripped[:-1] + bytes((stripped[-1] + 1,))


def _segment_bounds(prefix: bytes, segment: int, total_segments: int) -> tuple[bytes, bytes]:
    if not 1 <= total_segments <= MAX_SEGMENTS:
        raise ValueError(f"total_segments must be in 1..{MAX_SEGMENTS}")
    if not 0 <= segment < total_segments:
        raise ValueError("segment must be in 0..total_segments-1")
    start = (segment * _HASH_SPACE) // total_segments
    end = ((segment + 1) * _HASH_SPACE) // total_segments
    lo = prefix + start.to_bytes(4, "big")
    hi = prefix + end.to_bytes(4, "big") if end < _HASH_SPACE else prefix_end(prefix)
    return lo, hi


def segment_bounds(table_id: int, segment: int, total_segments: int) -> tuple[bytes, bytes]:
    """``[lo, hi)`` of Scan segment ``segment``: the hash space cut into contiguous, disjoint ranges."""
    return _segment_bounds(table_prefix(table_id), segment, total_segments)


def index_segment_bounds(index_id: int, segment: int, total_segments: int) -> tuple[bytes, bytes]:
    return _segment_bounds(index_prefix(index_id), segment, total_segments)
