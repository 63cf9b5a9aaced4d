"""AttributeValues as they travel on the wire, and DynamoDB's number rules.

Items stay in their wire shape (``{"name": {"S": "x"}}``) from request to storage and back, so nothing is
converted twice. Numbers are strings everywhere; arithmetic uses ``DDB_DECIMAL`` only (38 digits), never float.
"""

from __future__ import annotations

import base64
import binascii
import re
from decimal import Context, Decimal
from typing import Any, Final

from dynastore import limits, messages
from dynastore.errors import ValidationException

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]

# Arithmetic is exact (a precision far beyond any DynamoDB number); DynamoDB's range and 38-digit rules are
# checked on the result, so nothing is silently rounded.
DDB_DECIMAL = Context(prec=1000, Emax=999999, Emin=-999999)

_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# An exponent of more digits than this is out of range whatever the mantissa (a mantissa's length is bounded by
# the request size, 16 MB, far below 10**9), so it is never converted to an int.
_MAX_EXPONENT_DIGITS = 9
# Without an exponent, a number this short is range-checked on its Decimal (no text scan needed).
_SHORT_NUMBER = 200


class NumberError(ValueError):
    """A number DynamoDB would reject; ``message`` is the client-visible text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def parse_number(text: str) -> Decimal:
    """Parse and range-check a number string; raises NumberError with DynamoDB's text."""
    if not text:
        raise NumberError(messages.NUMBER_NOT_NUMERIC)
    if _NUMBER_RE.fullmatch(text) is None:
        raise NumberError(messages.NUMBER_NOT_NUMERIC_VALUE.format(value=text))
    if len(text) <= _SHORT_NUMBER and "e" not in text and "E" not in text:
        return _check_range(Decimal(text))  # a short plain number: far inside what DDB_DECIMAL handles
    if not _check_text_range(text):
        return Decimal(0)
    return _check_range(Decimal(text))


def _check_text_range(text: str) -> bool:
    """Range and precision checks on the text alone (False for a zero), so that no huge Decimal is ever built.

    ``text`` matches ``_NUMBER_RE``. DynamoDB's order: overflow, underflow, then precision.
    """
    mantissa, _, exponent_text = text.lower().partition("e")
    mantissa = mantissa.lstrip("+-")
    whole, _, fraction = mantissa.partition(".")
    whole = whole.lstrip("0")
    if whole:
        leading = len(whole) - 1  # power of ten of the leading digit
        digits = (whole + fraction).rstrip("0")
    else:
        significant = fraction.lstrip("0")
        if not significant:
            return False  # zero, whatever its exponent
        leading = len(significant) - len(fraction) - 1
        digits = significant.rstrip("0")
    exponent_digits = exponent_text.lstrip("+-").lstrip("0")
    if len(exponent_digits) > _MAX_EXPONENT_DIGITS:
        raise NumberError(messages.NUMBER_UNDERFLOW if exponent_text.startswith("-") else messages.NUMBER_OVERFLOW)
    exponent = int(exponent_digits) if exponent_digits else 0  # leading zeros dropped: int() bounds its input
    _check_magnitude(leading + (-exponent if exponent_text.startswith("-") else exponent), len(digits))
    return True


def _check_range(value: Decimal) -> Decimal:
    if not value:
        return Decimal(0)
    sign, digits, exponent = value.normalize(DDB_DECIMAL).as_tuple()
    assert isinstance(exponent, int)
    _check_magnitude(len(digits) + exponent - 1, len(digits))  # the leading digit's position
    return value


# Read for every number a request holds: kept here, as compiled code reads another module's names on every use.
_NUMBER_MAX_EXPONENT: Final = limits.NUMBER_MAX_EXPONENT
_NUMBER_MIN_EXPONENT: Final = limits.NUMBER_MIN_EXPONENT
_NUMBER_MAX_DIGITS: Final = limits.NUMBER_MAX_DIGITS


def _check_magnitude(magnitude: int, digit_count: int) -> None:
    """DynamoDB's range for a number whose leading digit is at 10**magnitude: overflow, underflow, precision."""
    if magnitude > _NUMBER_MAX_EXPONENT:
        raise NumberError(messages.NUMBER_OVERFLOW)
    if magnitude < _NUMBER_MIN_EXPONENT:
        raise NumberError(messages.NUMBER_UNDERFLOW)
    if digit_count > _NUMBER_MAX_DIGITS:
        raise NumberError(messages.NUMBER_PRECISION)


def format_number(value: Decimal) -> str:
    """DynamoDB's canonical text: plain notation, no exponent, no trailing zeros, no negative zero."""
    if not value:
        return "0"
    text = format(value.normalize(DDB_DECIMAL), "f")
    return text


def normalize_number(text: str) -> str:
    """Validate a wire number and return its canonical text (1E+2 -> 100, 1.50 -> 1.5)."""
    return format_number(parse_number(text))


def add_numbers(left: str, right: str) -> str:
    return _arith(Decimal(left), Decimal(right), subtract=False)


def subtract_numbers(left: str, right: str) -> str:
    return _arith(Decimal(left), Decimal(right), subtract=True)


def _arith(left: Decimal, right: Decimal, *, subtract: bool) -> str:
    # Exact arithmetic first, then DynamoDB's range and precision rules decide.
    result = DDB_DECIMAL.subtract(left, right) if subtract else DDB_DECIMAL.add(left, right)
    try:
        return format_number(_check_range(result))
    except NumberError as e:
        raise ValidationException(e.message, bare=True) from None


def decode_binary(text: str) -> bytes:
    """Binary values travel base64-encoded; storage and comparison use the raw bytes."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return base64.b64decode(text + "=" * (-len(text) % 4))


def compare_scalars(type_name: str, left: Any, right: Any) -> int:
    """Three-way compare of two scalars of one type: N numerically, S and B by unsigned bytes."""
    if type_name == "N":
        a: Any = Decimal(left)
        b: Any = Decimal(right)
    elif type_name == "B":
        a, b = decode_binary(left), decode_binary(right)
    else:
        # Code point order equals UTF-8 byte order, so str comparison is DynamoDB's order.
        a, b = left, right
    return int(a > b) - int(a < b)


def items_equal(left: Item, right: Item) -> bool:
    """DynamoDB equality of two items (``values_equal`` of them as M values), cheaply: attribute values equal as
    wire values are equal values, and two strings (what an overwrite usually changes) that differ as text differ
    as values; only the other attributes that differ as text are compared by value, and only when no string
    settled it first."""
    if len(left) != len(right):
        return False
    by_value: list[tuple[AttributeValue, AttributeValue]] = []
    for name, value in left.items():
        other = right.get(name)
        if other is None:
            return False  # the same number of names, not the same names
        if value != other:
            if "S" in value and "S" in other:
                return False
            by_value.append((value, other))
    return all(values_equal(value, other) for value, other in by_value)


def values_equal(left: AttributeValue, right: AttributeValue) -> bool:
    """DynamoDB equality: same type and same value (numbers by value, sets regardless of order)."""
    ((lt, lv),) = left.items()
    ((rt, rv),) = right.items()
    if lt != rt:
        return False
    if lt == "N":
        return bool(Decimal(lv) == Decimal(rv))
    if lt == "B":
        return decode_binary(lv) == decode_binary(rv)
    if lt == "NS":
        return {Decimal(x) for x in lv} == {Decimal(x) for x in rv}
    if lt == "BS":
        return {decode_binary(x) for x in lv} == {decode_binary(x) for x in rv}
    if lt == "SS":
        return set(lv) == set(rv)
    if lt == "L":
        return len(lv) == len(rv) and all(values_equal(a, b) for a, b in zip(lv, rv, strict=True))
    if lt == "M":
        return lv.keys() == rv.keys() and all(values_equal(lv[k], rv[k]) for k in lv)
    return bool(lv == rv)
