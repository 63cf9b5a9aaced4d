"""model/values.py: DynamoDB's number rules and the equality and order of AttributeValues."""

from __future__ import annotations

import base64
from decimal import Decimal

import pytest

from dynastore.errors import ValidationException
from dynastore.model.values import (
    AttributeValue,
    Item,
    NumberError,
    add_numbers,
    compare_scalars,
    decode_binary,
    items_equal,
    normalize_number,
    parse_number,
    subtract_numbers,
    values_equal,
)

OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"
UNDERFLOW = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
PRECISION = "Attempting to store more than 38 significant digits in a Number"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1E+2", "100"),
        ("1.50", "1.5"),
        ("-0", "0"),
        ("0.000", "0"),
        ("+7", "7"),
        (".5", "0.5"),
        ("-1e-3", "-0.001"),
        ("9" * 38, "9" * 38),
        ("1" + "0" * 38 + "e-10", "1" + "0" * 28),
    ],
)
def test_numbers_take_their_canonical_text(text: str, canonical: str) -> None:
    assert normalize_number(text) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1e126", OVERFLOW),
        ("-1e126", OVERFLOW),
        ("1e-131", UNDERFLOW),
        ("1" * 39, PRECISION),
        ("1e999999999999", OVERFLOW),
        ("1e-999999999999", UNDERFLOW),
    ],
)
def test_numbers_past_dynamodb_range_or_precision_are_refused(text: str, message: str) -> None:
    with pytest.raises(NumberError) as e:
        parse_number(text)
    assert e.value.message == message


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "0x10", "NaN", "Infinity", " 1"])
def test_non_numbers_are_refused(text: str) -> None:
    with pytest.raises(NumberError) as e:
        parse_number(text)
    assert e.value.message.startswith("The parameter cannot be converted to a numeric value")


def test_the_largest_and_smallest_magnitudes_are_accepted() -> None:
    assert parse_number("9.9999999999999999999999999999999999999e125") == Decimal(
        "9.9999999999999999999999999999999999999e125"
    )
    assert parse_number("1e-130") == Decimal("1e-130")


def test_arithmetic_is_exact_then_checked_against_dynamodb_rules() -> None:
    assert add_numbers("0.1", "0.2") == "0.3"
    assert subtract_numbers("1", "1.000") == "0"
    assert add_numbers("1" + "0" * 37, "1") == "1" + "0" * 36 + "1"
    with pytest.raises(ValidationException) as e:
        add_numbers("9" * 38, "0.1")  # 39 significant digits
    assert e.value.message == PRECISION
    with pytest.raises(ValidationException) as e:
        add_numbers("9.9999999999999999999999999999999999999e125", "1e125")
    assert e.value.message == OVERFLOW


def test_binary_values_decode_with_or_without_padding() -> None:
    raw = b"\x00\xffdynastore"
    text = base64.b64encode(raw).decode()
    assert decode_binary(text) == raw
    assert decode_binary(text.rstrip("=")) == raw


@pytest.mark.parametrize(
    ("type_name", "left", "right", "order"),
    [
        ("N", "10", "9", 1),
        ("N", "-1", "1", -1),
        ("N", "1.0", "1", 0),
        ("S", "a", "b", -1),
        ("S", "\u00e9", "z", 1),  # by UTF-8 bytes: U+00E9 sorts after ASCII
        ("B", base64.b64encode(b"\x01").decode(), base64.b64encode(b"\xff").decode(), -1),
        ("B", base64.b64encode(b"ab").decode(), base64.b64encode(b"a").decode(), 1),
    ],
)
def test_scalars_compare_as_dynamodb_orders_them(type_name: str, left: str, right: str, order: int) -> None:
    assert compare_scalars(type_name, left, right) == order


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ({"N": "1.0"}, {"N": "1"}, True),
        ({"N": "1"}, {"S": "1"}, False),
        ({"NS": ["1", "2.0"]}, {"NS": ["2", "1"]}, True),
        ({"SS": ["a", "b"]}, {"SS": ["b", "a"]}, True),
        ({"SS": ["a"]}, {"SS": ["a", "b"]}, False),
        ({"BS": ["AQ==", "Ag=="]}, {"BS": ["Ag==", "AQ=="]}, True),
        ({"L": [{"N": "1"}, {"S": "x"}]}, {"L": [{"N": "1.00"}, {"S": "x"}]}, True),
        ({"L": [{"N": "1"}]}, {"L": [{"N": "1"}, {"N": "1"}]}, False),
        ({"M": {"a": {"N": "1"}}}, {"M": {"a": {"N": "1.0"}}}, True),
        ({"M": {"a": {"N": "1"}}}, {"M": {"b": {"N": "1"}}}, False),
        ({"BOOL": True}, {"BOOL": True}, True),
        ({"NULL": True}, {"NULL": True}, True),
        ({"B": "AQ=="}, {"B": "AQ"}, True),
    ],
)
def test_values_are_equal_as_dynamodb_compares_them(left: AttributeValue, right: AttributeValue, equal: bool) -> None:
    assert values_equal(left, right) is equal


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ({"a": {"S": "x"}, "n": {"N": "1"}}, {"n": {"N": "1"}, "a": {"S": "x"}}, True),  # attribute order
        ({"a": {"S": "x"}, "n": {"N": "1"}}, {"a": {"S": "x"}, "n": {"N": "1.0"}}, True),
        ({"s": {"SS": ["a", "b"]}, "b": {"B": "AQ=="}}, {"s": {"SS": ["b", "a"]}, "b": {"B": "AQ"}}, True),
        ({"m": {"M": {"l": {"L": [{"N": "2"}]}}}}, {"m": {"M": {"l": {"L": [{"N": "2.00"}]}}}}, True),
        ({"a": {"S": "x"}, "n": {"N": "1"}}, {"a": {"S": "y"}, "n": {"N": "1"}}, False),
        ({"a": {"S": "x"}, "n": {"N": "1"}}, {"a": {"S": "x"}, "n": {"N": "2"}}, False),
        ({"a": {"S": "1"}}, {"a": {"N": "1"}}, False),
        ({"a": {"S": "x"}}, {"a": {"S": "x"}, "b": {"S": "x"}}, False),
        ({"a": {"S": "x"}}, {"b": {"S": "x"}}, False),
        ({}, {}, True),
    ],
)
def test_items_are_equal_as_their_values_are(left: Item, right: Item, equal: bool) -> None:
    assert items_equal(left, right) is equal
    assert items_equal(right, left) is equal
    assert values_equal({"M": left}, {"M": right}) is equal  # the same answer as comparing them as M values
