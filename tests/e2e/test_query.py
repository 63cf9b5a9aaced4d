"""Query end to end through boto3: key conditions, filters, Select, pagination, start keys, capacity, errors."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import pytest

from dynastore.model.item_size import item_size
from tests.e2e.conftest import create_table, error_of, retrying_throttled

VALIDATION = "ValidationException"


def put_all(ddb: Any, table: str, items: list[dict[str, Any]]) -> None:
    """Every item written, throttled requests and unprocessed items sent again (as under --capacity enforce)."""
    for start in range(0, len(items), 25):
        pending: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]}
        while pending:
            pending = retrying_throttled(partial(ddb.batch_write_item, RequestItems=pending))["UnprocessedItems"]


def query_all(ddb: Any, **kwargs: Any) -> tuple[list[dict[str, Any]], int]:
    """Every item of a query, page by page; returns (items, pages)."""
    items: list[dict[str, Any]] = []
    pages = 0
    while True:
        response = ddb.query(**kwargs)
        pages += 1
        items += response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return items, pages
        kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    """pk S + sk N; partition "a" holds sk 0..19 with v = sk % 3 and s = "item<sk>"."""
    name = create_table(ddb, "S", "N")
    items = [
        {"pk": {"S": pk}, "sk": {"N": str(sk)}, "v": {"N": str(sk % 3)}, "s": {"S": f"item{sk}"}}
        for pk in ("a", "b")
        for sk in range(20)
    ]
    put_all(ddb, name, items)
    return name


def q(ddb: Any, table: str, condition: str = "pk = :p", **kwargs: Any) -> Any:
    values = {":p": {"S": "a"}, **kwargs.pop("values", {})}
    return ddb.query(TableName=table, KeyConditionExpression=condition, ExpressionAttributeValues=values, **kwargs)


def sks(response: Any) -> list[int]:
    return [int(item["sk"]["N"]) for item in response["Items"]]


class TestValidation:
    def test_key_condition_required(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: ddb.query(TableName=table)) == (
            VALIDATION,
            "1 validation error detected: "
            "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
        )

    def test_mixed_expression_and_legacy(self, ddb: Any, table: str) -> None:
        call = lambda: q(ddb, table, QueryFilter={"v": {"ComparisonOperator": "NULL"}})  # noqa: E731
        assert error_of(call) == (
            VALIDATION,
            "1 validation error detected: "
            "Can not use both expression and non-expression parameters in the same request: "
            "Non-expression parameters: {QueryFilter} Expression parameters: {KeyConditionExpression}",
        )

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (
                {"Select": "COUNT", "ProjectionExpression": "v"},
                "1 validation error detected: Cannot specify the ProjectionExpression when choosing to get only "
                "the Count",
            ),
            (
                {"Select": "SPECIFIC_ATTRIBUTES"},
                "1 validation error detected: Must specify the AttributesToGet or ProjectionExpression when "
                "choosing to get SPECIFIC_ATTRIBUTES",
            ),
            (
                {"Select": "ALL_ATTRIBUTES", "ProjectionExpression": "v"},
                "1 validation error detected: Cannot specify the ProjectionExpression when choosing to get "
                "ALL_ATTRIBUTES",
            ),
            (
                {"Select": "ALL_PROJECTED_ATTRIBUTES"},
                "1 validation error detected: ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an "
                "IndexName",
            ),
        ],
    )
    def test_select_rules(self, ddb: Any, table: str, extra: dict[str, Any], message: str) -> None:
        assert error_of(lambda: q(ddb, table, **extra)) == (VALIDATION, message)

    @pytest.mark.parametrize(
        ("condition", "values", "message"),
        [
            ("pk = :p OR sk = :n", {":n": {"N": "1"}}, "Invalid operator used in KeyConditionExpression: OR"),
            ("sk = :n AND v = :p", {":n": {"N": "1"}}, "Query condition missed key schema element: pk"),
            ("pk < :p", {}, "Query key condition not supported"),
            (
                "pk = :p AND sk = :n",
                {":n": {"S": "1"}},
                "One or more parameter values were invalid: Condition parameter type does not match schema type",
            ),
            ("pk = :p AND v = :n", {":n": {"N": "1"}}, "Query condition missed key schema element: sk"),
            (
                "pk = :p AND begins_with(sk, :n)",
                {":n": {"N": "1"}},
                "1 validation error detected: "
                "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or "
                "function: begins_with, operand type: N",
            ),
            (
                "pk = :p AND sk = :p",
                {},
                "One or more parameter values were invalid: Condition parameter type does not match schema type",
            ),
        ],
    )
    def test_key_condition_errors(self, ddb: Any, table: str, condition: str, values: Any, message: str) -> None:
        assert error_of(lambda: q(ddb, table, condition, values=values)) == (VALIDATION, message)

    def test_type_mismatch_after_a_remembered_condition(self, ddb: Any, table: str) -> None:
        q(ddb, table, "pk = :p AND sk > :n", values={":n": {"N": "3"}})
        assert error_of(lambda: q(ddb, table, "pk = :p AND sk > :n", values={":n": {"S": "3"}})) == (
            VALIDATION,
            "One or more parameter values were invalid: Condition parameter type does not match schema type",
        )
        assert error_of(lambda: q(ddb, table, "pk = :p AND sk > :n", values={":n": {"N": "3"}, ":x": {"N": "1"}}))[
            1
        ] == (
            "1 validation error detected: Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}"
        )

    def test_legacy_key_conditions(self, ddb: Any, table: str) -> None:
        def legacy(conditions: dict[str, Any]) -> tuple[str, str]:
            return error_of(lambda: ddb.query(TableName=table, KeyConditions=conditions))

        eq = {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}
        assert legacy({"pk": eq, "sk": {"ComparisonOperator": "NE", "AttributeValueList": [{"N": "1"}]}}) == (
            VALIDATION,
            "1 validation error detected: Attempted conditional constraint is not an indexable operation",
        )
        assert legacy({"sk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}}) == (
            VALIDATION,
            "1 validation error detected: Query condition missed key schema element pk",
        )

    @pytest.mark.parametrize(
        ("start", "condition", "message"),
        [
            ({"pk": {"S": "a"}}, "pk = :p", "The provided starting key is invalid"),
            ({"pk": {"S": "a"}, "x": {"N": "1"}}, "pk = :p", "The provided starting key is invalid"),
            ({"pk": {"S": "a"}, "sk": {"S": "1"}}, "pk = :p", "The provided key element does not match the schema"),
            (
                {"pk": {"S": "b"}, "sk": {"N": "1"}},
                "pk = :p",
                "The provided starting key is outside query boundaries based on provided conditions",
            ),
            (
                {"pk": {"S": "a"}, "sk": {"N": "1"}},
                "pk = :p AND sk > :n",
                "The provided starting key does not match the range key predicate",
            ),
            (
                {"pk": {"S": "b"}, "sk": {"N": "9"}},
                "pk = :p AND sk > :n",
                "The query can return at most one row and cannot be restarted",
            ),
            (
                {"pk": {"S": "a"}, "sk": {"N": "1", "S": "x"}},
                "pk = :p",
                "1 validation error detected: "
                "The provided starting key is invalid: Supplied AttributeValue has more than one datatypes set, "
                "must contain exactly one of the supported datatypes",
            ),
            (
                {"pk": {"S": "a"}, "sk": {"N": "x1"}},
                "pk = :p",
                "1 validation error detected: The parameter cannot be converted to a numeric value: x1",
            ),
        ],
    )
    def test_exclusive_start_key(self, ddb: Any, table: str, start: Any, condition: str, message: str) -> None:
        values = {":n": {"N": "5"}} if ":n" in condition else {}
        call = lambda: q(ddb, table, condition, values=values, ExclusiveStartKey=start)  # noqa: E731
        assert error_of(call) == (VALIDATION, message)

    def test_filters_may_not_name_key_attributes(self, ddb: Any, table: str) -> None:
        call = lambda: q(ddb, table, FilterExpression="sk > :n", values={":n": {"N": "1"}})  # noqa: E731
        assert error_of(call) == (
            VALIDATION,
            "Filter Expression can only contain non-primary key attributes: Primary key attribute: sk",
        )
        eq = {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}
        legacy = {"pk": {"ComparisonOperator": "NOT_NULL"}}
        assert error_of(lambda: ddb.query(TableName=table, KeyConditions={"pk": eq}, QueryFilter=legacy)) == (
            VALIDATION,
            "QueryFilter can only contain non-primary key attributes: Primary key attribute: pk",
        )

    def test_nested_path_into_key(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: q(ddb, table, ProjectionExpression="sk.x")) == (
            VALIDATION,
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: sk",
        )

    def test_unknown_index_and_table(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: q(ddb, table, IndexName="nope")) == (
            VALIDATION,
            "The table does not have the specified index: nope",
        )
        assert error_of(lambda: q(ddb, "no_such_table"))[0] == "ResourceNotFoundException"

    def test_expression_maps(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: q(ddb, table, ExpressionAttributeNames={})) == (
            VALIDATION,
            "1 validation error detected: ExpressionAttributeNames must not be empty",
        )
        assert error_of(lambda: q(ddb, table, values={":x": {"N": "1", "S": "a"}})) == (
            VALIDATION,
            "1 validation error detected: "
            "ExpressionAttributeValues contains invalid value: Supplied AttributeValue has more than one datatypes "
            "set, must contain exactly one of the supported datatypes for key :x",
        )

    def test_limit_constraint(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: q(ddb, table, Limit=0)) == (
            VALIDATION,
            "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value "
            "greater than or equal to 1",
        )


class TestFunctionality:
    @pytest.mark.parametrize(
        ("condition", "values", "expected"),
        [
            ("pk = :p", {}, list(range(20))),
            ("pk = :p AND sk = :a", {":a": {"N": "4"}}, [4]),
            ("pk = :p AND sk < :a", {":a": {"N": "3"}}, [0, 1, 2]),
            ("pk = :p AND sk <= :a", {":a": {"N": "3"}}, [0, 1, 2, 3]),
            ("pk = :p AND sk > :a", {":a": {"N": "16"}}, [17, 18, 19]),
            ("pk = :p AND :a <= sk", {":a": {"N": "17"}}, [17, 18, 19]),
            ("pk = :p AND sk BETWEEN :a AND :b", {":a": {"N": "5"}, ":b": {"N": "7"}}, [5, 6, 7]),
            ("#k = :p AND (#s >= :a)", {":a": {"N": "18.5"}}, [19]),
        ],
    )
    def test_key_conditions(self, ddb: Any, table: str, condition: str, values: Any, expected: list[int]) -> None:
        names = {"#k": "pk", "#s": "sk"} if "#" in condition else None
        extra = {"ExpressionAttributeNames": names} if names else {}
        response = q(ddb, table, condition, values=values, **extra)
        assert sks(response) == expected
        assert response["Count"] == response["ScannedCount"] == len(expected)
        assert "LastEvaluatedKey" not in response

    def test_begins_with_on_string_sort_key(self, ddb: Any, table_ss: str) -> None:
        put_all(ddb, table_ss, [{"pk": {"S": "p"}, "sk": {"S": s}} for s in ("a", "ab", "abc", "b", "a\x00")])
        response = ddb.query(
            TableName=table_ss,
            KeyConditionExpression="pk = :p AND begins_with(sk, :s)",
            ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "a"}},
        )
        assert [item["sk"]["S"] for item in response["Items"]] == ["a", "a\x00", "ab", "abc"]

    def test_reverse_order_and_start_key(self, ddb: Any, table: str) -> None:
        response = q(ddb, table, ScanIndexForward=False, Limit=3)
        assert sks(response) == [19, 18, 17]
        assert response["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "17"}}
        response = q(ddb, table, ScanIndexForward=False, Limit=3, ExclusiveStartKey=response["LastEvaluatedKey"])
        assert sks(response) == [16, 15, 14]

    def test_limit_with_filter(self, ddb: Any, table: str) -> None:
        response = q(ddb, table, FilterExpression="v = :v", values={":v": {"N": "0"}}, Limit=5)
        assert sks(response) == [0, 3]
        assert (response["Count"], response["ScannedCount"]) == (2, 5)
        assert response["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "4"}}
        items, _ = query_all(
            ddb,
            TableName=table,
            KeyConditionExpression="pk = :p",
            FilterExpression="v = :v",
            ExpressionAttributeValues={":p": {"S": "a"}, ":v": {"N": "0"}},
            Limit=5,
        )
        assert [int(item["sk"]["N"]) for item in items] == list(range(0, 20, 3))

    def test_limit_reached_at_the_end_still_gives_a_key(self, ddb: Any, table: str) -> None:
        response = q(ddb, table, Limit=20)
        assert response["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "19"}}
        assert q(ddb, table, ExclusiveStartKey=response["LastEvaluatedKey"])["Items"] == []

    def test_select_and_projection(self, ddb: Any, table: str) -> None:
        response = q(ddb, table, Select="COUNT", FilterExpression="v = :v", values={":v": {"N": "1"}})
        assert "Items" not in response and (response["Count"], response["ScannedCount"]) == (7, 20)
        response = q(ddb, table, Select="SPECIFIC_ATTRIBUTES", ProjectionExpression="s, sk", Limit=1)
        assert response["Items"] == [{"s": {"S": "item0"}, "sk": {"N": "0"}}]
        response = q(ddb, table, Select="ALL_ATTRIBUTES", Limit=1)
        assert response["Items"][0]["s"] == {"S": "item0"}

    def test_legacy_parameters(self, ddb: Any, table: str) -> None:
        response = ddb.query(
            TableName=table,
            KeyConditions={
                "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
                "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "2"}, {"N": "9"}]},
            },
            QueryFilter={
                "v": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "2"}]},
                "s": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "item8"}]},
            },
            ConditionalOperator="OR",
            AttributesToGet=["sk"],
        )
        assert response["Items"] == [{"sk": {"N": "2"}}, {"sk": {"N": "5"}}, {"sk": {"N": "8"}}]
        assert (response["Count"], response["ScannedCount"]) == (3, 8)

    def test_consumed_capacity_sums_then_rounds(self, ddb: Any, table: str) -> None:
        response = q(ddb, table, ReturnConsumedCapacity="TOTAL", Limit=20)
        total = sum(item_size(item) for item in response["Items"])
        assert response["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": math.ceil(total / 4096) / 2}
        response = q(ddb, table, ReturnConsumedCapacity="INDEXES", ConsistentRead=True, Select="COUNT")
        assert response["ConsumedCapacity"] == {
            "TableName": table,
            "CapacityUnits": 1.0,
            "Table": {"CapacityUnits": 1.0},
        }
        empty = q(ddb, table, values={":p": {"S": "none"}}, ReturnConsumedCapacity="TOTAL")
        assert empty["ConsumedCapacity"]["CapacityUnits"] == 0.5 and empty["Count"] == 0

    def test_pagination_through_several_megabytes(self, ddb: Any) -> None:
        name = create_table(ddb, "S", "N")
        blob = "x" * 9000
        put_all(ddb, name, [{"pk": {"S": "big"}, "sk": {"N": str(i)}, "d": {"S": blob}} for i in range(400)])
        size = item_size({"pk": {"S": "big"}, "sk": {"N": "100"}, "d": {"S": blob}})
        for forward in (True, False):
            pages: list[int] = []
            kwargs: dict[str, Any] = {
                "TableName": name,
                "KeyConditionExpression": "pk = :p",
                "ExpressionAttributeValues": {":p": {"S": "big"}},
                "ScanIndexForward": forward,
                "ReturnConsumedCapacity": "TOTAL",
            }
            seen: list[int] = []
            while True:
                response = ddb.query(**kwargs)
                pages.append(response["Count"])
                seen += [int(item["sk"]["N"]) for item in response["Items"]]
                read = sum(item_size(item) for item in response["Items"])
                assert response["ConsumedCapacity"]["CapacityUnits"] == math.ceil(read / 4096) / 2
                if "LastEvaluatedKey" not in response:
                    break
                assert read >= 1024 * 1024 > read - item_size(response["Items"][-1])
                kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]
            assert seen == (list(range(400)) if forward else list(range(399, -1, -1)))
            assert pages[0] == math.ceil(1024 * 1024 / size) and len(pages) == 4
