"""Expression nesting through boto3: as deep as DynamoDB's 300 operators allow, and never a server error
beyond that."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import error_of


def _nots(count: int) -> str:
    return "NOT (" * count + "a = :one" + ")" * count


class TestNesting:
    def test_299_nested_nots_evaluate(self, ddb: Any, table_s: str) -> None:
        key = {"pk": {"S": "deep"}}
        ddb.put_item(TableName=table_s, Item={**key, "a": {"N": "1"}})
        values = {":one": {"N": "1"}}
        # 299 NOTs and one comparison: 300 operators, nested 598 levels deep. An odd count of NOTs is false.
        code, _ = error_of(
            lambda: ddb.delete_item(
                TableName=table_s, Key=key, ConditionExpression=_nots(299), ExpressionAttributeValues=values
            )
        )
        assert code == "ConditionalCheckFailedException"
        found = ddb.scan(TableName=table_s, FilterExpression=_nots(298), ExpressionAttributeValues=values)
        assert {"pk": {"S": "deep"}, "a": {"N": "1"}} in found["Items"]

    def test_deeply_nested_update_functions(self, ddb: Any, table_s: str) -> None:
        key = {"pk": {"S": "deep-update"}}
        ddb.update_item(
            TableName=table_s,
            Key=key,
            UpdateExpression="SET a = " + "if_not_exists(a, " * 200 + ":v" + ")" * 200,
            ExpressionAttributeValues={":v": {"S": "x"}},
        )
        assert ddb.get_item(TableName=table_s, Key=key)["Item"]["a"] == {"S": "x"}

    def test_beyond_300_operators(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(
            lambda: ddb.scan(
                TableName=table_s, FilterExpression=_nots(300), ExpressionAttributeValues={":one": {"N": "1"}}
            )
        )
        assert (code, message) == (
            "ValidationException",
            "1 validation error detected: "
            "Invalid FilterExpression: The expression contains too many operators; operator count: 301",
        )

    def test_redundant_parentheses_up_to_the_size_limit(self, ddb: Any, table_s: str) -> None:
        text = "(" * 2040 + "a = :one" + ")" * 2040
        code, message = error_of(
            lambda: ddb.scan(TableName=table_s, FilterExpression=text, ExpressionAttributeValues={":one": {"N": "1"}})
        )
        assert (code, message) == (
            "ValidationException",
            "1 validation error detected: Invalid FilterExpression: The expression has redundant parentheses;",
        )
