"""TransactGetItems end to end: reads from one snapshot, projections, capacity, validation."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import error_of


def get(table: str, pk: str, **extra: Any) -> dict[str, Any]:
    return {"Get": {"TableName": table, "Key": {"pk": {"S": pk}}, **extra}}


class TestValidation:
    def test_empty_list(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.transact_get_items(TransactItems=[])) == (
            "ValidationException",
            "1 validation error detected: Value at 'TransactItems' failed to satisfy constraint: Member must "
            "have length greater than or equal to 1",
        )

    def test_more_than_100_gets(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(
            lambda: ddb.transact_get_items(TransactItems=[get(table_s, str(i)) for i in range(101)])
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'TransactItems' failed to satisfy constraint: Member must have "
            "length less than or equal to 100"
        )

    def test_unknown_table(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.transact_get_items(TransactItems=[get(table_s, "a"), get("no_such_table", "a")])
        ) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )

    def test_two_gets_of_one_item(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.transact_get_items(TransactItems=[get(table_s, "a"), get(table_s, "a")])) == (
            "ValidationException",
            "Transaction request cannot include multiple operations on one item",
        )

    def test_key_not_matching_the_schema(self, ddb: Any, table_s: str, table_sn: str) -> None:
        # The first Get whose Key does not fit its table's schema cancels the transaction.
        items = [get(table_s, "a"), get(table_sn, "a"), {"Get": {"TableName": table_s, "Key": {}}}]
        with pytest.raises(ClientError) as info:
            ddb.transact_get_items(TransactItems=items)
        response = info.value.response
        assert response["Error"] == {
            "Code": "TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[None, ValidationError, None]",
        }
        assert response["CancellationReasons"] == [
            {"Code": "None"},
            {"Code": "ValidationError", "Message": "The provided key element does not match the schema"},
            {"Code": "None"},
        ]

    def test_an_empty_key_value_fails_the_request(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.transact_get_items(TransactItems=[get(table_s, "")])) == (
            "ValidationException",
            "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
            "empty string value. Key: pk",
        )

    def test_unused_expression_attribute_name(self, ddb: Any, table_s: str) -> None:
        entry = get(table_s, "a", ProjectionExpression="pk", ExpressionAttributeNames={"#x": "x"})
        assert error_of(lambda: ddb.transact_get_items(TransactItems=[entry])) == (
            "ValidationException",
            "1 validation error detected: Value provided in ExpressionAttributeNames unused in expressions: keys: {#x}",
        )


class TestFunctionality:
    def test_items_in_request_order_with_projections(self, ddb: Any, table_s: str, table_sn: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "g1"}, "a": {"N": "1"}, "b": {"S": "x"}})
        ddb.put_item(TableName=table_sn, Item={"pk": {"S": "g2"}, "sk": {"N": "5"}, "c": {"BOOL": True}})
        response = ddb.transact_get_items(
            TransactItems=[
                get(table_s, "g1", ProjectionExpression="#a", ExpressionAttributeNames={"#a": "a"}),
                get(table_s, "missing"),
                {"Get": {"TableName": table_sn, "Key": {"pk": {"S": "g2"}, "sk": {"N": "5"}}}},
            ]
        )
        assert response["Responses"] == [
            {"Item": {"a": {"N": "1"}}},
            {},
            {"Item": {"pk": {"S": "g2"}, "sk": {"N": "5"}, "c": {"BOOL": True}}},
        ]
        assert "ConsumedCapacity" not in response

    def test_consumed_capacity_counts_two_units_per_item(self, ddb: Any, table_s: str, table_sn: str) -> None:
        items = [
            get(table_s, "g1"),
            get(table_s, "nothing"),
            {"Get": {"TableName": table_sn, "Key": {"pk": {"S": "x"}, "sk": {"N": "1"}}}},
        ]
        total = ddb.transact_get_items(TransactItems=items, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
        assert total == [{"TableName": table_s, "CapacityUnits": 4.0}, {"TableName": table_sn, "CapacityUnits": 2.0}]
        indexes = ddb.transact_get_items(TransactItems=items, ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
        assert indexes[0] == {"TableName": table_s, "CapacityUnits": 4.0, "Table": {"CapacityUnits": 4.0}}
