import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, KeyCondition

VALUES = {":h": {"S": "h"}, ":n": {"N": "1"}, ":m": {"N": "9"}, ":s": {"S": "p"}}


def key(text: str, range_key: tuple[str, str] | None = ("sk", "N")) -> KeyCondition:
    return ExpressionContext(None, VALUES).key_condition(text, hash_key=("pk", "S"), range_key=range_key)


def error(text: str, range_key: tuple[str, str] | None = ("sk", "N")) -> str:
    with pytest.raises(ValidationException) as info:
        key(text, range_key)
    assert info.value.detail is not None
    return info.value.detail


def test_valid_key_conditions() -> None:
    assert key("pk = :h") == KeyCondition({"S": "h"}, None, ())
    assert key("pk = :h AND sk BETWEEN :n AND :m") == KeyCondition({"S": "h"}, "BETWEEN", ({"N": "1"}, {"N": "9"}))
    assert key(":n < sk AND :h = pk") == KeyCondition({"S": "h"}, ">", ({"N": "1"},))
    assert key("pk = :h AND begins_with(sk, :s)", ("sk", "S")) == KeyCondition({"S": "h"}, "begins_with", ({"S": "p"},))


def test_invalid_operators() -> None:
    assert error("pk = :h OR sk = :n") == "Invalid operator used in KeyConditionExpression: OR"
    assert error("pk = :h AND NOT sk = :n") == "Invalid operator used in KeyConditionExpression: NOT"
    assert error("pk IN (:h)") == "Invalid operator used in KeyConditionExpression: IN"
    assert error("pk <> :h") == "Invalid operator used in KeyConditionExpression: <>"
    assert error("attribute_exists(pk)") == "Invalid operator used in KeyConditionExpression: attribute_exists"


def test_condition_shape_errors() -> None:
    assert error(":n BETWEEN sk AND pk") == (
        "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand"
    )
    assert error("pk > size(sk)") == "KeyConditionExpressions cannot contain nested operations"
    assert (
        error("pk = sk")
        == "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"
    )
    assert error("pk.x = :h") == "KeyConditionExpressions cannot have conditions on nested attributes"
    assert error(":h = :h") == "Invalid condition in KeyConditionExpression: No key attribute specified"
    assert error("sk > :n AND sk < :m AND pk = :h") == "KeyConditionExpressions must only contain one condition per key"


def test_schema_errors() -> None:
    assert error("sk = :n") == "Query condition missed key schema element: pk"
    assert error("pk = :h AND extra = :n") == "Query condition missed key schema element: sk"
    assert error("pk = :h AND extra = :n", None) == "Query key condition not supported"
    assert error("pk > :h") == "Query key condition not supported"
    assert (
        error("pk = :n")
        == "One or more parameter values were invalid: Condition parameter type does not match schema type"
    )
