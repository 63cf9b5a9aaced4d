"""BatchGetItem end to end: per-table projection and consistency, capacity, 16 MB limit, validation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of
from tests.e2e.test_query import put_all

VALIDATION = "ValidationException"


@pytest.fixture(scope="module")
def tables(ddb: Any) -> tuple[str, str]:
    one, two = create_table(ddb, "S"), create_table(ddb, "S", "N")
    put_all(ddb, one, [{"pk": {"S": f"k{i}"}, "a": {"S": "x" * 1500}, "b": {"N": str(i)}} for i in range(10)])
    put_all(ddb, two, [{"pk": {"S": "p"}, "sk": {"N": str(i)}, "c": {"S": "y" * 6500}} for i in range(3)])
    return one, two


def key(i: int) -> dict[str, Any]:
    return {"pk": {"S": f"k{i}"}}


class TestValidation:
    def test_too_many_keys(self, ddb: Any, tables: tuple[str, str]) -> None:
        one, two = tables
        request = {one: {"Keys": [key(i) for i in range(60)]}, two: {"Keys": [key(i) for i in range(41)]}}
        assert error_of(lambda: ddb.batch_get_item(RequestItems=request)) == (
            VALIDATION,
            "1 validation error detected: Too many items requested for the BatchGetItem call",
        )

    def test_keys_constraints(self, ddb: Any, tables: tuple[str, str]) -> None:
        one, _ = tables
        assert error_of(lambda: ddb.batch_get_item(RequestItems={one: {"Keys": []}})) == (
            VALIDATION,
            f"1 validation error detected: Value at 'RequestItems.{one}.member.Keys' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1",
        )
        assert error_of(lambda: ddb.batch_get_item(RequestItems={})) == (
            VALIDATION,
            "1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: Member must "
            "have length greater than or equal to 1",
        )

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            (
                {"Keys": [key(1), {"pk": {"S": "k1"}}]},
                ("1 validation error detected: Provided list of item keys contains duplicates"),
            ),
            ({"Keys": [{"pk": {"N": "1"}}]}, "The provided key element does not match the schema"),
            ({"Keys": [{"pk": {"S": "a"}, "x": {"S": "b"}}]}, "The provided key element does not match the schema"),
            (
                {"Keys": [key(1)], "ProjectionExpression": "a", "AttributesToGet": ["a"]},
                "1 validation error detected: "
                "Can not use both expression and non-expression parameters in the same request: Non-expression "
                "parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
            ),
            (
                {"Keys": [key(1)], "ProjectionExpression": "a", "ExpressionAttributeNames": {"#a": "a"}},
                "1 validation error detected: "
                "Value provided in ExpressionAttributeNames unused in expressions: keys: {#a}",
            ),
            (
                {"Keys": [key(1)], "ExpressionAttributeNames": {"#a": "a"}},
                "1 validation error detected: ExpressionAttributeNames can only be specified when using expressions",
            ),
            (
                {"Keys": [key(1)], "AttributesToGet": ["a", "a"]},
                "1 validation error detected: "
                "One or more parameter values were invalid: Duplicate value in attribute name: a",
            ),
            (
                {"Keys": [{"pk": {"S": "a", "N": "1"}}]},
                "1 validation error detected: "
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported "
                "datatypes",
            ),
        ],
    )
    def test_errors(self, ddb: Any, tables: tuple[str, str], spec: dict[str, Any], message: str) -> None:
        assert error_of(lambda: ddb.batch_get_item(RequestItems={tables[0]: spec})) == (VALIDATION, message)

    def test_missing_table(self, ddb: Any, tables: tuple[str, str]) -> None:
        request = {tables[0]: {"Keys": [key(1)]}, "no_such_table": {"Keys": [key(1)]}}
        assert error_of(lambda: ddb.batch_get_item(RequestItems=request)) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )


class TestFunctionality:
    def test_two_tables_with_their_own_parameters(self, ddb: Any, tables: tuple[str, str]) -> None:
        one, two = tables
        response = ddb.batch_get_item(
            RequestItems={
                one: {
                    "Keys": [key(1), key(2), key(99)],
                    "ProjectionExpression": "#b",
                    "ExpressionAttributeNames": {"#b": "b"},
                },
                two: {
                    "Keys": [{"pk": {"S": "p"}, "sk": {"N": "2"}}],
                    "AttributesToGet": ["sk"],
                    "ConsistentRead": True,
                },
            }
        )
        assert sorted(item["b"]["N"] for item in response["Responses"][one]) == ["1", "2"]
        assert response["Responses"][two] == [{"sk": {"N": "2"}}]
        assert response["UnprocessedKeys"] == {}

    def test_capacity_rounds_every_item(self, ddb: Any, tables: tuple[str, str]) -> None:
        one, two = tables
        response = ddb.batch_get_item(
            RequestItems={
                one: {"Keys": [key(1), key(99)]},  # ~1.5 KB item -> 4 KB; a missing key -> the minimum
                two: {"Keys": [{"pk": {"S": "p"}, "sk": {"N": "0"}}], "ConsistentRead": True},  # ~6.5 KB -> 8 KB
            },
            ReturnConsumedCapacity="INDEXES",
        )
        assert response["ConsumedCapacity"] == [
            {"TableName": one, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}},
            {"TableName": two, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 2.0}},
        ]

    def test_sixteen_megabytes_then_unprocessed_keys(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        blob = "z" * (390 * 1024)
        for start in range(0, 50, 10):
            put_all(ddb, name, [{"pk": {"S": f"big{i}"}, "d": {"S": blob}} for i in range(start, start + 10)])
        request: dict[str, Any] = {
            name: {"Keys": [{"pk": {"S": f"big{i}"}} for i in range(50)], "ProjectionExpression": "pk"}
        }
        response = ddb.batch_get_item(RequestItems=request)
        first = len(response["Responses"][name])
        assert 0 < first < 50 and first * 390 * 1024 <= 16 * 1024 * 1024 < (first + 1) * 390 * 1024
        unprocessed = response["UnprocessedKeys"][name]
        assert unprocessed["ProjectionExpression"] == "pk" and len(unprocessed["Keys"]) == 50 - first
        got = [item["pk"]["S"] for item in response["Responses"][name]]
        while response["UnprocessedKeys"]:
            response = ddb.batch_get_item(RequestItems=response["UnprocessedKeys"])
            got += [item["pk"]["S"] for item in response["Responses"][name]]
        assert sorted(got) == sorted(f"big{i}" for i in range(50))
