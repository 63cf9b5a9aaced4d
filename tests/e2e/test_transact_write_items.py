"""TransactWriteItems end to end: atomicity, cancellation reasons, tokens, conflicts, capacity, validation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import create_table, error_of, make_client, unique_name
from tests.e2e.server_process import ServerProcess

CANCELED = "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]"


def put(table: str, pk: str, **extra: Any) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": {"pk": {"S": pk}, **extra.pop("attrs", {})}, **extra}}


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


def get(ddb: Any, table: str, pk: str) -> Any:
    return ddb.get_item(TableName=table, Key=key(pk), ConsistentRead=True).get("Item")


def canceled(ddb: Any, items: list[dict[str, Any]], **extra: Any) -> tuple[str, list[dict[str, Any]]]:
    with pytest.raises(ddb.exceptions.TransactionCanceledException) as e:
        ddb.transact_write_items(TransactItems=items, **extra)
    return e.value.response["Error"]["Message"], e.value.response["CancellationReasons"]


def key_canceled(call: Any) -> list[dict[str, Any]]:
    """Run ``call``, which must be cancelled, and return its CancellationReasons (checking the summary text)."""
    with pytest.raises(ClientError) as info:
        call()
    response = info.value.response
    assert response["Error"]["Code"] == "TransactionCanceledException"
    codes = ", ".join(reason["Code"] for reason in response["CancellationReasons"])
    assert response["Error"]["Message"] == (
        f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]"
    )
    reasons: list[dict[str, Any]] = response["CancellationReasons"]
    return reasons


class TestValidation:
    def test_empty_list(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.transact_write_items(TransactItems=[])) == (
            "ValidationException",
            "1 validation error detected: Value at 'TransactItems' failed to satisfy constraint: Member must "
            "have length greater than or equal to 1",
        )

    def test_more_than_100_actions(self, ddb: Any, table_s: str) -> None:
        code, message = error_of(
            lambda: ddb.transact_write_items(TransactItems=[put(table_s, str(i)) for i in range(101)])
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'TransactItems' failed to satisfy constraint: Member must have "
            "length less than or equal to 100"
        )

    def test_two_actions_on_one_item(self, ddb: Any, table_s: str) -> None:
        items = [put(table_s, "dup"), {"Delete": {"TableName": table_s, "Key": key("dup")}}]
        assert error_of(lambda: ddb.transact_write_items(TransactItems=items)) == (
            "ValidationException",
            "Transaction request cannot include multiple operations on one item",
        )
        assert get(ddb, table_s, "dup") is None

    def test_two_operations_in_one_entry(self, ddb: Any, table_s: str) -> None:
        entry = {**put(table_s, "x"), "Delete": {"TableName": table_s, "Key": key("x")}}
        assert error_of(lambda: ddb.transact_write_items(TransactItems=[entry])) == (
            "ValidationException",
            "1 validation error detected: TransactItems can only contain one of Check, Put, Update or Delete",
        )

    def test_no_operation_in_an_entry(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.transact_write_items(TransactItems=[{}])) == (
            "ValidationException",
            "1 validation error detected: "
            "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request",
        )

    def test_item_too_large(self, ddb: Any, table_s: str) -> None:
        items = [put(table_s, "ok"), put(table_s, "big", attrs={"b": {"S": "x" * 410_000}})]
        assert error_of(lambda: ddb.transact_write_items(TransactItems=items)) == (
            "ValidationException",
            "Item size has exceeded the maximum allowed size",
        )

    def test_payload_over_4mb(self, ddb: Any, table_s: str) -> None:
        items = [put(table_s, f"p{i}", attrs={"b": {"S": "x" * 390_000}}) for i in range(11)]
        code, message = error_of(lambda: ddb.transact_write_items(TransactItems=items))
        assert code == "ValidationException"
        assert message.startswith(
            "1 validation error detected: Transaction payload size cannot exceed 4MB. Payload Size: "
        )
        assert get(ddb, table_s, "p0") is None

    def test_missing_key_attributes(self, ddb: Any, table_sn: str) -> None:
        # A key that does not fit the schema cancels the transaction, the first such member with ValidationError.
        assert key_canceled(
            lambda: ddb.transact_write_items(
                TransactItems=[{"Put": {"TableName": table_sn, "Item": {"pk": {"S": "a"}}}}]
            )
        ) == [
            {
                "Code": "ValidationError",
                "Message": "One or more parameter values were invalid: Missing the key sk in the item",
            }
        ]
        assert key_canceled(
            lambda: ddb.transact_write_items(TransactItems=[{"Delete": {"TableName": table_sn, "Key": key("a")}}])
        ) == [{"Code": "ValidationError", "Message": "The provided key element does not match the schema"}]

    def test_keys_not_fitting_the_schema_cancel_before_duplicates(self, ddb: Any, table_s: str) -> None:
        mismatch = {"Code": "ValidationError", "Message": "The provided key element does not match the schema"}
        items = [
            put(table_s, "k1"),
            {"Delete": {"TableName": table_s, "Key": key("dup")}},
            {"Delete": {"TableName": table_s, "Key": key("dup")}},
            {"Update": {"TableName": table_s, "Key": {"pk": {"N": "1"}}, "UpdateExpression": "REMOVE a"}},
            {"ConditionCheck": {"TableName": table_s, "Key": {}, "ConditionExpression": "attribute_exists(pk)"}},
        ]
        assert key_canceled(lambda: ddb.transact_write_items(TransactItems=items)) == [
            {"Code": "None"},
            {"Code": "None"},
            {"Code": "None"},
            mismatch,
            {"Code": "None"},
        ]
        assert get(ddb, table_s, "k1") is None
        type_mismatch = "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: L"
        assert key_canceled(
            lambda: ddb.transact_write_items(TransactItems=[{"Put": {"TableName": table_s, "Item": {"pk": {"L": []}}}}])
        ) == [{"Code": "ValidationError", "Message": type_mismatch}]

    def test_an_empty_key_value_fails_the_request(self, ddb: Any, table_s: str) -> None:
        items = [
            {"Delete": {"TableName": table_s, "Key": {"pk": {"N": "1"}}}},
            {"Delete": {"TableName": table_s, "Key": key("")}},
        ]
        assert error_of(lambda: ddb.transact_write_items(TransactItems=items)) == (
            "ValidationException",
            "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
            "empty string value. Key: pk",
        )

    def test_unknown_table(self, ddb: Any, table_s: str) -> None:
        items = [put(table_s, "a"), put("no_such_table", "a")]
        assert error_of(lambda: ddb.transact_write_items(TransactItems=items)) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )
        assert get(ddb, table_s, "a") is None

    def test_missing_expressions(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.transact_write_items(
                TransactItems=[{"ConditionCheck": {"TableName": table_s, "Key": key("a")}}]
            )
        ) == (
            "ValidationException",
            "1 validation error detected: Value at 'TransactItems.1.member.ConditionCheck.ConditionExpression' "
            "failed to satisfy constraint: Member must not be null",
        )
        assert error_of(
            lambda: ddb.transact_write_items(TransactItems=[{"Update": {"TableName": table_s, "Key": key("a")}}])
        ) == (
            "ValidationException",
            "1 validation error detected: Value at 'TransactItems.1.member.Update.UpdateExpression' "
            "failed to satisfy constraint: Member must not be null",
        )

    def test_updating_a_key_attribute(self, ddb: Any, table_s: str) -> None:
        update = {
            "Update": {
                "TableName": table_s,
                "Key": key("a"),
                "UpdateExpression": "SET pk = :v",
                "ExpressionAttributeValues": {":v": {"S": "b"}},
            }
        }
        assert error_of(lambda: ddb.transact_write_items(TransactItems=[update])) == (
            "ValidationException",
            "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
        )

    def test_client_request_token_too_long(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.transact_write_items(TransactItems=[put(table_s, "a")], ClientRequestToken="x" * 37)
        ) == (
            "ValidationException",
            "1 validation error detected: Value at 'ClientRequestToken' failed to satisfy constraint: Member must "
            "have length less than or equal to 36",
        )


class TestFunctionality:
    def test_all_four_actions_across_tables(self, ddb: Any, table_s: str, table_sn: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "old"}, "n": {"N": "1"}})
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "check"}, "ok": {"BOOL": True}})
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "gone"}})
        response = ddb.transact_write_items(
            TransactItems=[
                {"ConditionCheck": {"TableName": table_s, "Key": key("check"), "ConditionExpression": "ok = :t",
                                    "ExpressionAttributeValues": {":t": {"BOOL": True}}}},
                {"Put": {"TableName": table_sn, "Item": {"pk": {"S": "new"}, "sk": {"N": "1"}}}},
                {"Update": {"TableName": table_s, "Key": key("old"), "UpdateExpression": "ADD n :one",
                            "ExpressionAttributeValues": {":one": {"N": "1"}}}},
                {"Delete": {"TableName": table_s, "Key": key("gone"), "ConditionExpression": "attribute_exists(pk)"}},
            ]
        )  # fmt: skip
        assert "ConsumedCapacity" not in response
        assert get(ddb, table_s, "old") == {"pk": {"S": "old"}, "n": {"N": "2"}}
        assert get(ddb, table_s, "gone") is None
        item = ddb.get_item(TableName=table_sn, Key={"pk": {"S": "new"}, "sk": {"N": "1"}})["Item"]
        assert item == {"pk": {"S": "new"}, "sk": {"N": "1"}}

    def test_a_failed_condition_cancels_everything(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "acct"}, "bal": {"N": "5"}})
        items = [
            put(table_s, "log1"),
            {"Update": {"TableName": table_s, "Key": key("acct"), "UpdateExpression": "SET bal = bal - :a",
                        "ConditionExpression": "bal >= :a", "ExpressionAttributeValues": {":a": {"N": "10"}},
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        ]  # fmt: skip
        message, reasons = canceled(ddb, items)
        assert message == CANCELED.format("None, ConditionalCheckFailed")
        assert reasons == [
            {"Code": "None"},
            {
                "Code": "ConditionalCheckFailed",
                "Message": "The conditional request failed",
                "Item": {"pk": {"S": "acct"}, "bal": {"N": "5"}},
            },
        ]
        assert get(ddb, table_s, "log1") is None
        assert get(ddb, table_s, "acct") == {"pk": {"S": "acct"}, "bal": {"N": "5"}}

    def test_a_condition_on_a_missing_item(self, ddb: Any, table_s: str) -> None:
        check = {
            "TableName": table_s,
            "Key": key("nobody"),
            "ConditionExpression": "attribute_exists(pk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        items = [{"ConditionCheck": check}, put(table_s, "after")]
        message, reasons = canceled(ddb, items)
        assert message == CANCELED.format("ConditionalCheckFailed, None")
        assert reasons == [
            {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
            {"Code": "None"},
        ]
        assert get(ddb, table_s, "after") is None

    def test_an_update_growing_too_large_is_a_validation_error(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "huge"}, "b": {"S": "x" * 400_000}})
        items = [
            put(table_s, "side"),
            {"Update": {"TableName": table_s, "Key": key("huge"), "UpdateExpression": "SET c = :c",
                        "ExpressionAttributeValues": {":c": {"S": "y" * 10_000}}}},
        ]  # fmt: skip
        message, reasons = canceled(ddb, items)
        assert message == CANCELED.format("None, ValidationError")
        assert reasons[1] == {
            "Code": "ValidationError",
            "Message": "Item size to update has exceeded the maximum allowed size",
        }
        assert get(ddb, table_s, "side") is None

    def test_consumed_capacity_counts_two_units_per_item(self, ddb: Any, table_s: str, table_sn: str) -> None:
        items = [
            put(table_s, "c1"),
            put(table_s, "c2"),
            {"Put": {"TableName": table_sn, "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}}}},
        ]
        total = ddb.transact_write_items(TransactItems=items, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
        assert total == [{"TableName": table_s, "CapacityUnits": 4.0}, {"TableName": table_sn, "CapacityUnits": 2.0}]
        indexes = ddb.transact_write_items(TransactItems=items, ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
        assert indexes == [
            {"TableName": table_s, "CapacityUnits": 4.0, "Table": {"CapacityUnits": 4.0}},
            {"TableName": table_sn, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 2.0}},
        ]

    def test_index_capacity(self, ddb: Any) -> None:
        table = unique_name()
        ddb.create_table(
            TableName=table,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "byg",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        items = [put(table, "i1", attrs={"g": {"S": "x"}}), put(table, "i2")]
        consumed = ddb.transact_write_items(TransactItems=items, ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
        assert consumed == [
            {
                "TableName": table,
                "CapacityUnits": 6.0,
                "Table": {"CapacityUnits": 4.0},
                "GlobalSecondaryIndexes": {"byg": {"CapacityUnits": 2.0}},
            }
        ]

    def test_client_request_token_is_idempotent(self, ddb: Any, table_s: str) -> None:
        items = [
            {"Update": {"TableName": table_s, "Key": key("counter"), "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        ]  # fmt: skip
        first = ddb.transact_write_items(
            TransactItems=items, ClientRequestToken="tok-1", ReturnConsumedCapacity="TOTAL"
        )
        assert first["ConsumedCapacity"] == [{"TableName": table_s, "CapacityUnits": 2.0}]
        again = ddb.transact_write_items(
            TransactItems=items, ClientRequestToken="tok-1", ReturnConsumedCapacity="TOTAL"
        )
        assert again["ConsumedCapacity"] == [{"TableName": table_s, "CapacityUnits": 2.0}]  # reading, not writing
        assert get(ddb, table_s, "counter") == {"pk": {"S": "counter"}, "n": {"N": "1"}}
        other = [{**items[0]["Update"], "ExpressionAttributeValues": {":one": {"N": "2"}}}]
        assert error_of(
            lambda: ddb.transact_write_items(TransactItems=[{"Update": other[0]}], ClientRequestToken="tok-1")
        ) == (
            "IdempotentParameterMismatchException",
            "Specified idempotent token was used with different request parameters within the idempotency window",
        )
        ddb.transact_write_items(TransactItems=items, ClientRequestToken="tok-2")
        assert get(ddb, table_s, "counter") == {"pk": {"S": "counter"}, "n": {"N": "2"}}


@pytest.fixture(scope="module")
def held() -> Iterator[Any]:
    """A server whose transactions keep their items locked until it stops (the conflict test aid)."""
    server = ServerProcess("--transaction-lock-hold", "inf")
    try:
        yield make_client(server.url)
    finally:
        server.stop()


class TestConflicts:
    def test_single_item_writes_meet_a_transaction_in_progress(self, held: Any) -> None:
        table = create_table(held, "S")
        held.transact_write_items(TransactItems=[put(table, "locked"), put(table, "also")])
        conflict = ("TransactionConflictException", "Transaction is ongoing for the item")
        assert error_of(lambda: held.put_item(TableName=table, Item={"pk": {"S": "locked"}})) == conflict
        assert error_of(
            lambda: held.update_item(
                TableName=table, Key=key("locked"), UpdateExpression="SET a = :a",
                ExpressionAttributeValues={":a": {"S": "x"}},
            )
        ) == conflict  # fmt: skip
        assert error_of(lambda: held.delete_item(TableName=table, Key=key("also"))) == conflict
        held.put_item(TableName=table, Item={"pk": {"S": "free"}})  # other items are not affected
        assert get(held, table, "locked") == {"pk": {"S": "locked"}}  # reads see the committed value

    def test_transactions_meet_each_other(self, held: Any) -> None:
        table = create_table(held, "S")
        held.transact_write_items(TransactItems=[put(table, "a")])
        message, reasons = canceled(held, [put(table, "b"), put(table, "a")])
        assert message == CANCELED.format("None, TransactionConflict")
        assert reasons == [
            {"Code": "None"},
            {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
        ]
        assert get(held, table, "b") is None
        with pytest.raises(held.exceptions.TransactionCanceledException) as e:
            held.transact_get_items(TransactItems=[{"Get": {"TableName": table, "Key": key("a")}}])
        assert e.value.response["Error"]["Message"] == CANCELED.format("TransactionConflict")

    def test_batch_write_returns_held_items_unprocessed(self, held: Any) -> None:
        table = create_table(held, "S")
        held.transact_write_items(TransactItems=[put(table, "a")])
        response = held.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": {"pk": {"S": "a"}, "v": {"S": "1"}}}},
                                  {"PutRequest": {"Item": {"pk": {"S": "b"}}}}]}
        )  # fmt: skip
        assert response["UnprocessedItems"] == {table: [{"PutRequest": {"Item": {"pk": {"S": "a"}, "v": {"S": "1"}}}}]}
        assert get(held, table, "b") == {"pk": {"S": "b"}}
        assert get(held, table, "a") == {"pk": {"S": "a"}}

    def test_a_batch_wholly_held_runs_nothing_and_reports_only_the_held_items(self, held: Any) -> None:
        table, other = create_table(held, "S"), create_table(held, "S")
        held.transact_write_items(TransactItems=[put(table, "a")])
        request = {"PutRequest": {"Item": {"pk": {"S": "a"}, "v": {"S": "2"}}}}
        response = held.batch_write_item(RequestItems={table: [request]}, ReturnConsumedCapacity="TOTAL")
        assert {k: v for k, v in response.items() if k != "ResponseMetadata"} == {
            "UnprocessedItems": {table: [request]}
        }
        # A batch that partly runs reports the capacity of the tables whose requests ran.
        response = held.batch_write_item(
            RequestItems={table: [request], other: [{"PutRequest": {"Item": {"pk": {"S": "x"}}}}]},
            ReturnConsumedCapacity="TOTAL",
        )
        assert response["UnprocessedItems"] == {table: [request]}
        assert response["ConsumedCapacity"] == [{"TableName": other, "CapacityUnits": 1.0}]

    def test_a_held_item_is_validated_with_the_rest_of_the_batch(self, held: Any) -> None:
        table = create_table(held, "S")
        held.transact_write_items(TransactItems=[put(table, "a")])
        too_large = {"pk": {"S": "a"}, "v": {"S": "x" * 410_000}}
        assert error_of(lambda: held.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": too_large}}]})) == (
            "ValidationException",
            "Item size has exceeded the maximum allowed size",
        )

    def test_a_retry_while_the_first_is_in_progress(self, held: Any) -> None:
        table = create_table(held, "S")
        held.transact_write_items(TransactItems=[put(table, "t")], ClientRequestToken="in-flight")
        assert error_of(
            lambda: held.transact_write_items(TransactItems=[put(table, "t")], ClientRequestToken="in-flight")
        ) == ("TransactionInProgressException", "The transaction with the given request token is already in progress.")
