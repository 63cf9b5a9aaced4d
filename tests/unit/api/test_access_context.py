"""Condition-key values read from requests: attribute names of expressions, key values, a Query's partition key."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.api.access_context import expression_names, key_text, partition_equality


@pytest.mark.parametrize(
    ("expression", "names", "expected"),
    [
        ("a, b.c, #d[1].e", {"#d": "dee"}, {"a", "b", "dee"}),
        (
            "SET #n = if_not_exists(cnt, :z) + :one REMOVE old.x[2] ADD tags :t DELETE s :v",
            {"#n": "n"},
            {"n", "cnt", "old", "tags", "s"},
        ),
        (
            "attribute_exists(pk) AND NOT begins_with(#s, :p) OR size(body) BETWEEN :a AND :b",
            {"#s": "sk"},
            {"pk", "sk", "body"},
        ),
        ("x IN (:a, :b) and y <> z", {}, {"x", "y", "z"}),
        ("#missing = :v", {}, set()),
    ],
)
def test_expression_names(expression: str, names: dict[str, str], expected: set[str]) -> None:
    out: set[str] = set()
    expression_names(expression, names, out)
    assert out == expected


def test_key_text() -> None:
    assert [key_text({"S": "a"}), key_text({"N": "1.5"}), key_text({"B": "AQI="})] == ["a", "1.5", "AQI="]
    assert key_text({"BOOL": True}) is None
    assert key_text("a") is None


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        ({"KeyConditionExpression": "pk = :p AND sk > :s", "ExpressionAttributeValues": {":p": {"S": "u1"}}}, "u1"),
        (
            {
                "KeyConditionExpression": ":p = #k",
                "ExpressionAttributeNames": {"#k": "pk"},
                "ExpressionAttributeValues": {":p": {"N": "7"}},
            },
            "7",
        ),
        (
            {
                "KeyConditionExpression": "sk = :s AND pk = :p",
                "ExpressionAttributeValues": {":s": {"S": "x"}, ":p": {"S": "u2"}},
            },
            "u2",
        ),
        ({"KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "u3"}]}}}, "u3"),
        ({"KeyConditionExpression": "other = :p", "ExpressionAttributeValues": {":p": {"S": "u"}}}, None),
        ({}, None),
    ],
)
def test_partition_equality(req: dict[str, Any], expected: str | None) -> None:
    assert partition_equality(req, "pk") == expected
