"""DynamoDB's item size rules (the 400 KB item limit, capacity units, page sizes).

An attribute counts its name's UTF-8 bytes plus its value:

- S: UTF-8 bytes; B: raw (decoded) bytes; BOOL and NULL: 1.
- N: DynamoDB stores numbers as base-100 digit pairs aligned on the decimal point, plus an exponent byte:
  ``1 + ceil(d / 2)``, one more byte when ``d`` is even and the leading digit's exponent is even (the
  pairs then straddle), one more for a negative number (terminator); zero is 1. ``d`` counts
  significant digits (leading and trailing zeros dropped).
- SS/NS/BS: the sum of their elements.
- L: 3 + per element (1 + element size); M: 3 + per entry (1 + name bytes + value size).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from dynastore.limits import MAX_ITEM_BYTES

__all__ = ["MAX_ITEM_BYTES", "attribute_size", "item_size", "number_size", "value_size"]


def _text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _binary_bytes(text: str) -> int:
    return len(text) // 4 * 3 - (2 if text.endswith("==") else 1 if text.endswith("=") else 0)


def number_size(text: str) -> int:
    """Stored size of one N value."""
    negative = text[:1] == "-"
    body = text[1:] if negative or text[:1] == "+" else text
    if "e" in body or "E" in body:
        return _number_size_exponent(text)
    whole, _, fraction = body.partition(".")
    whole = whole.lstrip("0")
    if whole:
        leading = len(whole) - 1  # exponent of the leading significant digit
        digits = (whole + fraction).rstrip("0")
    else:
        significant = fraction.lstrip("0")
        if not significant:
            return 1
        leading = len(significant) - len(fraction) - 1
        digits = significant.rstrip("0")
    return _size(len(digits), leading, negative)


def _number_size_exponent(text: str) -> int:
    """number_size for texts in exponent notation (canonical stored numbers never are)."""
    _sign, digit_tuple, exponent = Decimal(text).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    if not digits:
        return 1
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return _size(len(stripped), exponent + len(stripped) - 1, text.lstrip().startswith("-"))


def _size(count: int, leading: int, negative: bool) -> int:
    size = 1 + (count + 1) // 2
    if count % 2 == 0 and leading % 2 == 0:
        size += 1
    if negative:
        size += 1
    return size


def value_size(value: dict[str, Any]) -> int:
    """Stored size of one AttributeValue (without its name)."""
    for kind, payload in value.items():
        if kind == "S":
            return _text_bytes(payload)
        if kind == "N":
            return number_size(payload)
        if kind == "B":
            return _binary_bytes(payload)
        if kind == "BOOL" or kind == "NULL":
            return 1
        if kind == "SS":
            return sum(_text_bytes(x) for x in payload)
        if kind == "NS":
            return sum(number_size(x) for x in payload)
        if kind == "BS":
            return sum(_binary_bytes(x) for x in payload)
        if kind == "L":
            return 3 + sum(1 + value_size(x) for x in payload)
        if kind == "M":
            return 3 + sum(1 + _text_bytes(name) + value_size(x) for name, x in payload.items())
    return 0


def attribute_size(name: str, value: dict[str, Any]) -> int:
    """Stored size of one top-level attribute: name bytes plus value size."""
    return _text_bytes(name) + value_size(value)


def item_size(item: dict[str, dict[str, Any]]) -> int:
    """Stored size of an item; DynamoDB rejects items over ``MAX_ITEM_BYTES`` (409,600)."""
    return sum(_text_bytes(name) + value_size(value) for name, value in item.items())
