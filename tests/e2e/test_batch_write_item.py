"""BatchWriteItem end to end: puts and deletes across tables, capacity, validation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of

VALIDATION = "ValidationException"


def put(pk: str, **extra: Any) -> dict[str, Any]:
    return {"PutRequest": {"Item": {"pk": {"S": pk}, **extra}}}


def delete(pk: str) -> dict[str, Any]:
    return {"DeleteRequest": {"Key": {"pk": {"S": pk}}}}


class TestValidation:
    def test_more_than_25_requests_across_tables(self, ddb: Any, table_s: str, table_b: str) -> None:
        request = {table_s: [put(f"a{i}") for i in range(20)], table_b: [put(f"b{i}") for i in range(6)]}
        assert error_of(lambda: ddb.batch_write_item(RequestItems=request)) == (
            VALIDATION,
            "1 validation error detected: Too many items requested for the BatchWriteItem call",
        )

    def test_constraints(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.batch_write_item(RequestItems={table_s: []})) == (
            VALIDATION,
            f"1 validation error detected: Value at 'RequestItems.{table_s}.member' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
        )
        assert error_of(lambda: ddb.batch_write_item(RequestItems={table_s: [{"DeleteRequest": {}}]})) == (
            VALIDATION,
            f"1 validation error detected: Value at 'RequestItems.{table_s}.member.1.member.DeleteRequest.Key' "
            "failed to satisfy constraint: Member must not be null",
        )

    @pytest.mark.parametrize(
        ("requests", "message"),
        [
            (
                [{}],
                "1 validation error detected: "
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported "
                "datatypes",
            ),
            (
                [{**put("a"), **delete("a")}],
                "1 validation error detected: "
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported "
                "datatypes",
            ),
            ([put("a"), delete("a")], "Provided list of item keys contains duplicates"),
            ([put("a", x={"S": "x" * (400 * 1024)})], "Item size has exceeded the maximum allowed size"),
            (
                [{"PutRequest": {"Item": {"x": {"S": "1"}}}}],
                "One or more parameter values were invalid: Missing the key pk in the item",
            ),
            ([{"DeleteRequest": {"Key": {"pk": {"N": "1"}}}}], "The provided key element does not match the schema"),
            (
                [put("a", n={"N": "1x"})],
                "1 validation error detected: The parameter cannot be converted to a numeric value: 1x",
            ),
        ],
    )
    def test_errors(self, ddb: Any, table_s: str, requests: list[Any], message: str) -> None:
        assert error_of(lambda: ddb.batch_write_item(RequestItems={table_s: requests})) == (VALIDATION, message)

    def test_nothing_written_when_one_table_is_missing(self, ddb: Any, table_s: str) -> None:
        request = {table_s: [put("never")], "no_such_table": [put("x")]}
        assert error_of(lambda: ddb.batch_write_item(RequestItems=request))[0] == "ResourceNotFoundException"
        assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "never"}})


class TestFunctionality:
    def test_puts_and_deletes_across_tables(self, ddb: Any) -> None:
        one, two = create_table(ddb, "S"), create_table(ddb, "S")
        ddb.put_item(TableName=one, Item={"pk": {"S": "gone"}})
        response = ddb.batch_write_item(
            RequestItems={one: [put("p1"), delete("gone"), delete("never-there")], two: [put("p2", n={"N": "1.50"})]}
        )
        assert response["UnprocessedItems"] == {}
        assert "Item" not in ddb.get_item(TableName=one, Key={"pk": {"S": "gone"}})
        assert ddb.get_item(TableName=two, Key={"pk": {"S": "p2"}})["Item"] == {"pk": {"S": "p2"}, "n": {"N": "1.5"}}

    def test_capacity_rounds_each_item_to_one_kilobyte(self, ddb: Any) -> None:
        one, two = create_table(ddb, "S"), create_table(ddb, "S")
        ddb.put_item(TableName=one, Item={"pk": {"S": "old"}, "d": {"S": "o" * 2500}})
        response = ddb.batch_write_item(
            RequestItems={
                one: [put("old"), put("new", d={"S": "n" * 1500})],  # max(2.5 KB old, tiny new) -> 3; 1.5 KB -> 2
                two: [delete("absent")],  # nothing there: the minimum
            },
            ReturnConsumedCapacity="INDEXES",
        )
        assert response["ConsumedCapacity"] == [
            {"TableName": one, "CapacityUnits": 5.0, "Table": {"CapacityUnits": 5.0}},
            {"TableName": two, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}},
        ]
        response = ddb.batch_write_item(RequestItems={two: [put("x")]}, ReturnConsumedCapacity="TOTAL")
        assert response["ConsumedCapacity"] == [{"TableName": two, "CapacityUnits": 1.0}]
