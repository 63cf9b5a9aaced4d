"""Item sizes, hand-computed from DynamoDB's rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynastore.model.item_size import MAX_ITEM_BYTES, attribute_size, item_size, number_size, value_size
from dynastore.model.values import normalize_number


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("0", 1),
        ("1", 2),  # exponent byte + one digit pair
        ("12", 2),  # "12" is one pair
        ("1.2", 3),  # "01" "20": the pairs straddle the decimal point
        ("123", 3),  # "01" "23"
        ("-1", 3),  # negative numbers add a terminator byte
        ("100", 2),  # trailing zeros are not significant
        ("0.001", 2),
        ("1" * 38 + "0" * 88, 20),  # 38 digits, leading exponent 125 (odd)
        ("1" + "0" * 125, 2),
        ("11" + "0" * 124, 2),
        ("11111" + "0" * 121, 4),
        ("111111" + "0" * 120, 4),
        ("1111111" + "0" * 119, 5),
    ],
)
def test_number_size(text: str, size: int) -> None:
    assert number_size(text) == size


def test_scalars() -> None:
    assert value_size({"S": "abc"}) == 3
    assert value_size({"S": "é"}) == 2  # UTF-8 bytes
    assert value_size({"S": ""}) == 0
    assert value_size({"B": "YWJj"}) == 3
    assert value_size({"B": "Yg=="}) == 1
    assert value_size({"BOOL": False}) == 1
    assert value_size({"NULL": True}) == 1


def test_sets() -> None:
    assert value_size({"SS": ["a", "bc"]}) == 3
    assert value_size({"NS": ["1", "-1"]}) == 5
    assert value_size({"BS": ["Yg==", "YWJj"]}) == 4


def test_documents() -> None:
    assert value_size({"L": []}) == 3
    assert value_size({"M": {}}) == 3
    assert value_size({"L": [{"S": "ab"}, {"BOOL": True}]}) == 3 + (1 + 2) + (1 + 1)
    assert value_size({"M": {"ab": {"S": "c"}, "d": {"NULL": True}}}) == 3 + (1 + 2 + 1) + (1 + 1 + 1)
    nested: dict[str, Any] = {"M": {"x": {"L": [{"M": {}}]}}}
    assert value_size(nested) == 3 + (1 + 1 + (3 + (1 + 3)))


def test_item_and_attribute() -> None:
    assert attribute_size("name", {"S": "value"}) == 9
    assert attribute_size("é", {"N": "12"}) == 4
    item: dict[str, dict[str, Any]] = {"a": {"S": "abc"}, "bb": {"N": "1.2"}, "ccc": {"BOOL": True}}
    assert item_size(item) == (1 + 3) + (2 + 3) + (3 + 1)
    assert item_size({}) == 0


def test_limit_boundary() -> None:
    assert MAX_ITEM_BYTES == 409600
    fits = {"a": {"S": "k" * 10}, "b": {"S": "x" * (409600 - 10 - 2)}}
    assert item_size(fits) == MAX_ITEM_BYTES
    over = {"a": {"S": "k" * 10}, "bb": {"S": "x" * (409600 - 10 - 2)}}
    assert item_size(over) == MAX_ITEM_BYTES + 1


@given(
    st.text("0123456789", min_size=1, max_size=38),
    st.integers(min_value=-90, max_value=80),
    st.booleans(),
)
def test_plain_and_exponent_notation_agree(digits: str, exponent: int, negative: bool) -> None:
    text = ("-" if negative else "") + digits + "e" + str(exponent)
    assert number_size(normalize_number(text)) == number_size(text)
