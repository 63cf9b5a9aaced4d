"""AttributeValue well-formedness (recorded in phase 1, raised by check_item) and key checks."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.api import schemas
from dynastore.errors import ValidationException
from dynastore.validation import validate_request
from dynastore.validation.attribute_values import check_item, check_key, check_value, invalid_entry


def item_message(item: dict[str, Any]) -> str | None:
    """The message both paths give: through phase 1 (recorded) and standalone (walked)."""
    req = validate_request(schemas.PUT_ITEM, {"TableName": "abc", "Item": item})
    with pytest.raises(ValidationException) as via_request:
        check_item(req["Item"])
    with pytest.raises(ValidationException) as standalone:
        check_item(item)
    assert via_request.value.detail == standalone.value.detail
    return via_request.value.detail


@pytest.mark.parametrize(
    "value",
    [{}, {"M": {"a": {}}}, {"L": [{}]}, {"L": [{"a": {}}]}, {"X": "y"}, {"S": None}],
)
def test_empty_attribute_value(value: Any) -> None:
    assert item_message({"a": value}) == (
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
    )


def test_multiple_datatypes() -> None:
    assert item_message({"a": {"S": "a", "N": "1"}}) == (
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"  # noqa: E501
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"NULL": False}, "Null attribute value types must have the value of true"),
        ({"SS": []}, "An string set  may not be empty"),
        ({"NS": []}, "An number set  may not be empty"),
        ({"BS": []}, "Binary sets should not be empty"),
        ({"SS": ["a", "a"]}, "Input collection [a, a] contains duplicates."),
        ({"BS": ["Yg==", "Yg=="]}, "Input collection [Yg==, Yg==]of type BS contains duplicates."),
        ({"L": [{"NULL": False}]}, "Null attribute value types must have the value of true"),
        ({"M": {"x": {"SS": []}}}, "An string set  may not be empty"),
    ],
)
def test_invalid_values(value: Any, message: str) -> None:
    assert item_message({"a": value}) == "One or more parameter values were invalid: " + message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"S": "", "N": ""}, "The parameter cannot be converted to a numeric value"),
        ({"S": "a", "N": "b"}, "The parameter cannot be converted to a numeric value: b"),
        ({"NS": ["1", ""]}, "The parameter cannot be converted to a numeric value"),
        ({"NS": ["1", "b"]}, "The parameter cannot be converted to a numeric value: b"),
        ({"NS": ["1", "1.0"]}, "Input collection contains duplicates"),
        (
            {"N": "123456789012345678901234567890123456789"},
            "Attempting to store more than 38 significant digits in a Number",
        ),
        (
            {"N": "1e126"},
            "Number overflow. Attempting to store a number with magnitude larger than supported range",
        ),
        (
            {"N": "-1e-131"},
            "Number underflow. Attempting to store a number with magnitude smaller than supported range",
        ),
    ],
)
def test_invalid_numbers(value: Any, message: str) -> None:
    assert item_message({"a": value}) == message


def test_first_problem_in_item_order() -> None:
    assert item_message({"a": {"S": "ok"}, "b": {"NULL": False}, "c": {}}) == (
        "One or more parameter values were invalid: Null attribute value types must have the value of true"
    )


def test_nesting_limit() -> None:
    def nested(depth: int) -> dict[str, Any]:
        value: dict[str, Any] = {"S": "leaf"}
        for _ in range(depth):
            value = {"M": {"n": value}}
        return value

    check_item({"a": nested(32)})
    assert item_message({"a": nested(33)}) == (
        "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"  # noqa: E501
    )


def test_empty_strings_and_binaries_allowed_outside_keys() -> None:
    item = {
        "a": {"S": ""},
        "b": {"B": ""},
        "c": {"SS": [""]},
        "d": {"BS": [""]},
        "e": {"M": {"f": {"S": ""}}},
    }
    check_item(item)
    assert invalid_entry(validate_request(schemas.PUT_ITEM, {"Item": item, "TableName": "abc"})["Item"]) is None


def test_numbers_canonicalised_in_place() -> None:
    req = validate_request(
        schemas.PUT_ITEM,
        {
            "TableName": "abc",
            "Item": {
                "a": {"N": "1E+2"},
                "b": {"NS": ["0001.500", "-0"]},
                "c": {"L": [{"N": "1.0e1"}, {"M": {"d": {"N": "-00.10"}}}]},
            },
        },
    )
    check_item(req["Item"])
    assert req["Item"] == {
        "a": {"N": "100"},
        "b": {"NS": ["1.5", "0"]},
        "c": {"L": [{"N": "10"}, {"M": {"d": {"N": "-0.1"}}}]},
    }
    raw = {"a": {"N": "5.00"}}
    check_item(raw)
    assert raw == {"a": {"N": "5"}}


def test_check_value() -> None:
    check_value({"S": "x"})
    with pytest.raises(ValidationException) as info:
        check_value({"NULL": False})
    assert info.value.detail == (
        "One or more parameter values were invalid: Null attribute value types must have the value of true"
    )
    req = validate_request(schemas.PUT_ITEM, {"TableName": "abc", "Item": {}, "Expected": {"a": {"Value": {"N": "x"}}}})
    with pytest.raises(ValidationException) as info:
        check_value(req["Expected"]["a"]["Value"])
    assert info.value.detail == "The parameter cannot be converted to a numeric value: x"


def test_invalid_entry_names_the_attribute() -> None:
    req = validate_request(
        schemas.PUT_ITEM,
        {"TableName": "abc", "Item": {}, "ExpressionAttributeValues": {":a": {"S": "x"}, ":b": {}}},
    )
    assert invalid_entry(req["ExpressionAttributeValues"]) == (
        ":b",
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    )


# --- keys ---


def key_message(key: dict[str, Any], range_key: tuple[str, str] | None = None, *, full: bool = True) -> str | None:
    with pytest.raises(ValidationException) as info:
        check_key(key, ("a", "S"), range_key, is_full_item=full)
    return info.value.detail


def test_missing_key_in_item() -> None:
    for item in ({}, {"b": {"S": "a"}}):
        assert key_message(item) == "One or more parameter values were invalid: Missing the key a in the item"
    assert key_message({"a": {"S": "a"}}, ("b", "S")) == (
        "One or more parameter values were invalid: Missing the key b in the item"
    )


@pytest.mark.parametrize("kind", ["B", "N", "BOOL", "NULL", "SS", "NS", "BS", "M", "L"])
def test_key_type_mismatch(kind: str) -> None:
    assert key_message({"a": {kind: "x"}}) == (
        f"One or more parameter values were invalid: Type mismatch for key a expected: S actual: {kind}"
    )


def test_empty_key_values() -> None:
    assert key_message({"a": {"S": ""}}) == (
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "  # noqa: E501
        "empty string value. Key: a"
    )
    assert key_message({"a": {"S": "x"}, "b": {"B": ""}}, ("b", "B")) == (
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "  # noqa: E501
        "empty binary value. Key: b"
    )


def test_key_sizes() -> None:
    check_key({"a": {"S": "x" * 2048}}, ("a", "S"), None, is_full_item=True)
    assert key_message({"a": {"S": "x" * 2049}}) == (
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes"  # noqa: E501
    )
    assert key_message({"a": {"S": "é" * 1025}}) == (
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes"  # noqa: E501
    )
    check_key({"a": {"S": "x"}, "b": {"S": "y" * 1024}}, ("a", "S"), ("b", "S"), is_full_item=True)
    assert key_message({"a": {"S": "x"}, "b": {"S": "y" * 1025}}, ("b", "S")) == (
        "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit "  # noqa: E501
        "of 1024 bytes"
    )


def test_key_parameter_does_not_match_schema() -> None:
    mismatch = "The provided key element does not match the schema"
    assert key_message({}, full=False) == mismatch
    assert key_message({"a": {"S": "x"}, "b": {"S": "y"}}, full=False) == mismatch
    assert key_message({"a": {"N": "1"}}, full=False) == mismatch
    assert key_message({"a": {"S": "x"}, "c": {"S": "y"}}, ("b", "S"), full=False) == mismatch
    check_key({"a": {"S": "x"}, "b": {"N": "1"}}, ("a", "S"), ("b", "N"), is_full_item=False)
