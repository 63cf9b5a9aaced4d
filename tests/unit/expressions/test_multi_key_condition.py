"""Key conditions on multi-attribute index keys: = on every partition attribute; sort attributes from the left
without gaps, = on all but the last one conditioned."""

import pytest

from dynastore.expressions import ExpressionContext
from dynastore.expressions.key_condition import KeyCondition, build_multi_key_condition
from dynastore.expressions.tokens import ExpressionError

HASH = (("t", "S"), ("r", "S"))
RANGE = (("rd", "N"), ("m", "S"), ("x", "S"))
VALUES = {":t": {"S": "T1"}, ":r": {"S": "EU"}, ":d": {"N": "1"}, ":e": {"N": "5"}, ":m": {"S": "a"}}


def key(text: str) -> KeyCondition:
    condition = ExpressionContext(None, VALUES).condition("KeyConditionExpression", text)
    return build_multi_key_condition(condition, HASH, RANGE)


def error(text: str) -> str:
    with pytest.raises(ExpressionError) as info:
        key(text)
    return info.value.detail


def test_partition_attributes_only() -> None:
    got = key("r = :r AND t = :t")
    assert got == KeyCondition({"S": "T1"}, None, (), ({"S": "EU"},))
    assert got.hash_values == ({"S": "T1"}, {"S": "EU"})


def test_sort_attributes_left_to_right() -> None:
    assert key("t = :t AND r = :r AND rd BETWEEN :d AND :e") == KeyCondition(
        {"S": "T1"}, "BETWEEN", ({"N": "1"}, {"N": "5"}), ({"S": "EU"},), ()
    )
    assert key("t = :t AND r = :r AND rd = :d AND begins_with(m, :m)") == KeyCondition(
        {"S": "T1"}, "begins_with", ({"S": "a"},), ({"S": "EU"},), ({"N": "1"},)
    )


def test_every_partition_attribute_needs_equality() -> None:
    # ours, in the form of DynamoDB's RANGE text (DynamoDB's own for this case is not public)
    assert error("t = :t AND rd = :d") == ("HASH key attributes r must have equality conditions specified in the query")
    assert error("t = :t AND r > :r") == ("HASH key attributes r must have equality conditions specified in the query")


def test_no_gap_and_range_only_on_the_last() -> None:
    assert error("t = :t AND r = :r AND m = :m") == (
        "RANGE key attributes rd must have equality conditions specified in the query because a condition is "
        "present on key attribute m"
    )
    assert error("t = :t AND r = :r AND rd > :d AND m = :m") == (
        "RANGE key attributes rd must have equality conditions specified in the query because a condition is "
        "present on key attribute m"
    )


def test_types_and_foreign_attributes() -> None:
    assert (
        error("t = :t AND r = :d")
        == "One or more parameter values were invalid: Condition parameter type does not match schema type"
    )
    assert error("t = :t AND r = :r AND zz = :m") == "Query key condition not supported"


def test_one_partition_attribute_keeps_dynamodb_s_single_key_texts() -> None:
    condition = ExpressionContext(None, VALUES).condition("KeyConditionExpression", "rd = :d")
    with pytest.raises(ExpressionError) as info:
        build_multi_key_condition(condition, (("t", "S"),), RANGE)
    assert info.value.detail == "Query condition missed key schema element: t"
    condition = ExpressionContext(None, VALUES).condition("KeyConditionExpression", "t > :t")
    with pytest.raises(ExpressionError) as info:
        build_multi_key_condition(condition, (("t", "S"),), RANGE)
    assert info.value.detail == "Query key condition not supported"
