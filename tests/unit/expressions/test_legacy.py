from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import apply_update, evaluate, legacy, project
from dynastore.expressions.key_condition import KeyCondition

ITEM: dict[str, Any] = {"a": {"S": "abc"}, "n": {"N": "5"}, "ss": {"SS": ["x"]}}


def message(fn: Any, *args: Any) -> str:
    with pytest.raises(ValidationException) as info:
        fn(*args)
    assert info.value.detail is not None
    return info.value.detail


def test_expected_conditions_evaluate() -> None:
    cond = legacy.expected_condition({"a": {"Value": {"S": "abc"}}, "zz": {"Exists": False}}, None)
    assert cond is not None and evaluate(cond, ITEM)
    cond = legacy.expected_condition(
        {
            "n": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "9"}]},
            "a": {"ComparisonOperator": "BEGINS_WITH", "Value": {"S": "ab"}},
        },
        "OR",
    )
    assert cond is not None and evaluate(cond, ITEM)
    cond = legacy.expected_condition({"zz": {"ComparisonOperator": "NE", "AttributeValueList": [{"S": "q"}]}})
    assert cond is not None and evaluate(cond, ITEM)
    cond = legacy.expected_condition({"a": {"ComparisonOperator": "NULL"}})
    assert cond is not None and not evaluate(cond, ITEM)
    assert legacy.expected_condition({}) is None


def test_expected_validation_texts() -> None:
    assert message(legacy.expected_condition, {"a": {"ComparisonOperator": "EQ", "Exists": True}}) == (
        "1 validation error detected: One or more parameter values were invalid: "
        "Exists and ComparisonOperator cannot be used together for Attribute: a"
    )
    assert message(legacy.expected_condition, {"a": {"ComparisonOperator": "EQ"}}) == (
        "One or more parameter values were invalid: Invalid number of argument(s) for the EQ ComparisonOperator"
    )
    assert message(legacy.expected_condition, {"a": {}}) == (
        "1 validation error detected: "
        "One or more parameter values were invalid: Value must be provided when Exists is null for Attribute: a"
    )
    assert message(legacy.expected_condition, {"a": {"Exists": False, "Value": {"S": "a"}}}) == (
        "1 validation error detected: "
        "One or more parameter values were invalid: Value cannot be used when Exists is false for Attribute: a"
    )


def test_filters() -> None:
    cond = legacy.scan_filter({"n": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}, {"N": "5"}]}})
    assert cond is not None and evaluate(cond, ITEM)
    cond = legacy.query_filter({"ss": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "y"}]}})
    assert cond is not None and evaluate(cond, ITEM)
    assert message(legacy.scan_filter, {"n": {"ComparisonOperator": "GT"}}) == (
        "The attempted filter operation is not supported for the provided filter argument count"
    )
    assert message(legacy.scan_filter, {"n": {"ComparisonOperator": "LT", "AttributeValueList": [{"SS": ["a"]}]}}) == (
        "One or more parameter values were invalid: ComparisonOperator LT is not valid for SS AttributeValue type"
    )


def test_attribute_updates() -> None:
    update = legacy.attribute_updates(
        {
            "a": {"Action": "PUT", "Value": {"S": "z"}},
            "n": {"Action": "ADD", "Value": {"N": "2"}},
            "ss": {"Action": "DELETE", "Value": {"SS": ["x"]}},
            "q": {"Action": "DELETE"},
        }
    )
    new, paths = apply_update(update, ITEM)
    assert new == {"a": {"S": "z"}, "n": {"N": "7"}}
    assert paths == (("a",), ("n",), ("ss",), ("q",))
    mismatch = legacy.attribute_updates({"n": {"Action": "ADD", "Value": {"SS": ["a"]}}})
    assert message(apply_update, mismatch, ITEM) == "Type mismatch for attribute to update"
    assert message(legacy.attribute_updates, {"a": {"Action": "PUT"}}) == (
        "One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified"
    )
    assert message(legacy.attribute_updates, {"a": {"Action": "DELETE", "Value": {"S": "a"}}}) == (
        "One or more parameter values were invalid: DELETE action with value is not supported for the type S"
    )


def test_attributes_to_get_and_key_conditions() -> None:
    assert project(ITEM, legacy.attributes_to_get(["a", "zz"])) == {"a": {"S": "abc"}}
    kc = legacy.key_conditions(
        {
            "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "h"}]},
            "sk": {"ComparisonOperator": "GE", "AttributeValueList": [{"N": "1"}]},
        },
        ("pk", "S"),
        ("sk", "N"),
    )
    assert kc == KeyCondition({"S": "h"}, ">=", ({"N": "1"},))
    assert message(legacy.key_conditions, {"pk": {"ComparisonOperator": "NULL"}}, ("pk", "S"), None) == (
        "Attempted conditional constraint is not an indexable operation"
    )
    assert (
        message(
            legacy.key_conditions,
            {"c": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "h"}]}},
            ("pk", "S"),
            None,
        )
        == "Query condition missed key schema element pk"
    )
