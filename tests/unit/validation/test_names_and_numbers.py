"""Numbers checked on their text (no huge Decimal is built), attribute-name limits, key-value limits and the
legacy-parameter walks of validation/attribute_values.py."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore import messages
from dynastore.api import schemas
from dynastore.errors import ValidationException
from dynastore.model.values import NumberError, normalize_number
from dynastore.validation import validate_request
from dynastore.validation.attribute_values import (
    _number,
    check_attribute_updates,
    check_conditions,
    check_item,
    check_key_value,
    key_value_bytes,
    name_error,
    nesting_exceeded,
)


def number_error(text: str) -> str:
    with pytest.raises(NumberError) as info:
        normalize_number(text)
    return info.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1e100000000", messages.NUMBER_OVERFLOW),
        ("1e9999999999999999999", messages.NUMBER_OVERFLOW),
        ("1.0e100000000", messages.NUMBER_OVERFLOW),
        ("-1e+" + "9" * 100000, messages.NUMBER_OVERFLOW),
        ("1E126", messages.NUMBER_OVERFLOW),
        ("0.01e128", messages.NUMBER_OVERFLOW),
        ("-1e-100000000", messages.NUMBER_UNDERFLOW),
        ("1e-" + "9" * 100000, messages.NUMBER_UNDERFLOW),
        ("1E-131", messages.NUMBER_UNDERFLOW),
        ("100e-133", messages.NUMBER_UNDERFLOW),
        ("1" * 39, messages.NUMBER_PRECISION),
        ("1" * 39 + "e-10", messages.NUMBER_PRECISION),
        ("0.000" + "1" * 39, messages.NUMBER_PRECISION),
    ],
)
def test_out_of_range_numbers(text: str, message: str) -> None:
    assert number_error(text) == message


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("9.9999999999999999999999999999999999999E+125", "99999999999999999999999999999999999999" + "0" * 88),
        ("1E-130", "0." + "0" * 129 + "1"),
        ("-1e-130", "-0." + "0" * 129 + "1"),
        ("0e9999999999999999999", "0"),
        ("-0.000e-99999999999", "0"),
        ("1.5e+" + "0" * 6000 + "2", "150"),  # past int()'s digit limit, yet a small exponent
        ("1" * 38 + "0" * 50, "1" * 38 + "0" * 50),
        ("000123.4500", "123.45"),
        (".5", "0.5"),
        ("5.", "5"),
    ],
)
def test_numbers_in_range(text: str, canonical: str) -> None:
    assert normalize_number(text) == canonical


@pytest.mark.parametrize(
    "text",
    ["0", "-0", "00", "7", "-7", "007", "-007", "12345", "-12345", "1" * 38, "-" + "1" * 38, "1" * 39, "1" * 38 + "0",
     "10", "1.5", "1.50", "0.5", "-0.5", ".5", "1e3", "+1", "1 ", "", "-", "٣", "1²"],
)  # fmt: skip
def test_a_number_is_kept_as_sent_exactly_when_it_is_canonical(text: str) -> None:
    # Integers are told canonical by str methods before the regular expression: both must agree with what
    # normalize_number makes of the text (a canonical text is kept as the very string sent).
    try:
        canonical: str | None = normalize_number(text)
    except NumberError:
        canonical = None
    got, error = _number(text)
    assert got == canonical and (error is None) == (canonical is not None)
    if got is text:
        assert canonical == text
    if canonical == text and len(text.lstrip("-")) <= 38:
        assert got is text


def test_huge_exponents_are_decided_on_the_text() -> None:
    """Exponents far past what a Decimal context or int() accepts still get DynamoDB's range errors."""
    for text, message in (
        ("1e100000000", messages.NUMBER_OVERFLOW),
        ("-1e-100000000", messages.NUMBER_UNDERFLOW),
        ("9e" + "9" * 1000, messages.NUMBER_OVERFLOW),
        ("1e-" + "0" * 100000 + "500", messages.NUMBER_UNDERFLOW),
    ):
        assert number_error(text) == message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", messages.ATTRIBUTE_NAME_EMPTY),
        (None, messages.ATTRIBUTE_NAME_EMPTY),
        ("a" * 65536, messages.ATTRIBUTE_NAME_TOO_LARGE),
        ("é" * 32768, messages.ATTRIBUTE_NAME_TOO_LARGE),
        ("😀" * 16384, messages.ATTRIBUTE_NAME_TOO_LARGE),
        ("a", None),
        ("a" * 65535, None),
        ("é" * 32767 + "a", None),
        ("😀" * 16383 + "abc", None),
    ],
)
def test_name_limits(name: Any, message: str | None) -> None:
    assert name_error(name) == message


def test_names_checked_at_every_depth_and_through_phase_one() -> None:
    for item in (
        {"pk": {"S": "k"}, "": {"S": "v"}},
        {"pk": {"S": "k"}, "m": {"M": {"a": {"L": [{"M": {"": {"N": "1"}}}]}}}},
    ):
        req = validate_request(schemas.PUT_ITEM, {"TableName": "abc", "Item": item})
        for source in (req["Item"], item):
            with pytest.raises(ValidationException) as info:
                check_item(source)
            assert info.value.detail == messages.ATTRIBUTE_NAME_EMPTY


def test_key_value_sizes() -> None:
    assert key_value_bytes("S", "é" * 3) == 6
    assert key_value_bytes("B", "AAEC") == 3
    assert key_value_bytes("B", "AQ==") == 1
    check_key_value("pk", "S", "x" * 2048, is_range=False)
    check_key_value("sk", "S", "x" * 1024, is_range=True)
    for payload, is_range, message in (
        ("x" * 2049, False, messages.KEY_HASH_TOO_LONG),
        ("x" * 1025, True, messages.KEY_RANGE_TOO_LONG),
        ("", False, messages.KEY_EMPTY_STRING.format(name="k")),
    ):
        with pytest.raises(ValidationException) as info:
            check_key_value("k", "S", payload, is_range=is_range)
        assert info.value.detail == message


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        ({"a": {"Value": {"N": "x"}}}, messages.NUMBER_NOT_NUMERIC_VALUE.format(value="x")),
        ({"a": {"AttributeValueList": [{"S": "ok"}, {"L": [{"N": "1e999"}]}]}}, messages.NUMBER_OVERFLOW),
        ({"a": {"AttributeValueList": [None]}}, messages.AV_EMPTY),
        ({"": {"ComparisonOperator": "NULL"}}, messages.ATTRIBUTE_NAME_EMPTY),
    ],
)
def test_legacy_conditions(conditions: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationException) as info:
        check_conditions(conditions)
    assert info.value.detail == message


def test_legacy_conditions_canonicalise_numbers() -> None:
    conditions = {"a": {"Value": {"N": "1E+2"}, "AttributeValueList": [{"NS": ["01", "2.50"]}]}}
    check_conditions(conditions)
    assert conditions == {"a": {"Value": {"N": "100"}, "AttributeValueList": [{"NS": ["1", "2.5"]}]}}


def test_attribute_updates() -> None:
    check_attribute_updates({"a": {"Action": "DELETE"}, "b": {"Value": {"S": "x"}}})
    for updates, message in (
        ({"a": {"Value": {"L": [{"N": "abc"}]}}}, messages.NUMBER_NOT_NUMERIC_VALUE.format(value="abc")),
        ({"a" * 65536: {"Value": {"S": "x"}}}, messages.ATTRIBUTE_NAME_TOO_LARGE),
        ({"a": {"Value": {}}}, messages.AV_EMPTY),
    ):
        with pytest.raises(ValidationException) as info:
            check_attribute_updates(updates)
        assert info.value.detail == message


def test_nesting_exceeded() -> None:
    def nested(depth: int) -> dict[str, Any]:
        value: dict[str, Any] = {"N": "1"}
        for level in range(depth):
            value = {"L": [{"S": "x"}, value]} if level % 2 else {"M": {"a": {"S": "x"}, "b": value}}
        return value

    assert not nesting_exceeded(nested(32))
    assert nesting_exceeded(nested(33))
    assert not nesting_exceeded({"S": "x"})
    assert not nesting_exceeded({"L": []})


def test_a_long_valid_name_does_not_hide_its_value_problem() -> None:
    for item, message in (
        ({"a": {"M": {"x" * 20000: {"N": "bad"}}}}, messages.NUMBER_NOT_NUMERIC_VALUE.format(value="bad")),
        ({"x" * 20000: {"N": "bad"}}, messages.NUMBER_NOT_NUMERIC_VALUE.format(value="bad")),
        ({"a": {"M": {"é" * 40000: {"S": "ok"}}}}, messages.ATTRIBUTE_NAME_TOO_LARGE),
    ):
        req = validate_request(schemas.PUT_ITEM, {"TableName": "abc", "Item": item})
        with pytest.raises(ValidationException) as info:
            check_item(req["Item"])
        assert info.value.detail == message
