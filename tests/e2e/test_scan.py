"""Scan end to end through boto3: hash order, pages, parallel segments, filters, capacity, errors."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.model.item_size import item_size
from tests.e2e.conftest import create_table, error_of
from tests.e2e.test_query import put_all

VALIDATION = "ValidationException"


def scan_all(ddb: Any, **kwargs: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every item of a scan (or of one segment), page by page; returns (items, responses)."""
    items: list[dict[str, Any]] = []
    responses = []
    while True:
        response = ddb.scan(**kwargs)
        responses.append(response)
        items += response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return items, responses
        kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    """pk S only; 60 items k00..k59 with v = i % 4."""
    name = create_table(ddb, "S")
    put_all(ddb, name, [{"pk": {"S": f"k{i:02d}"}, "v": {"N": str(i % 4)}} for i in range(60)])
    return name


def keys(items: list[dict[str, Any]]) -> list[str]:
    return [item["pk"]["S"] for item in items]


class TestValidation:
    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (
                {"Segment": 1},
                "1 validation error detected: "
                "The TotalSegments parameter is required but was not present in the request when Segment parameter "
                "is present",
            ),
            (
                {"TotalSegments": 2},
                "1 validation error detected: "
                "The Segment parameter is required but was not present in the request when parameter TotalSegments "
                "is present",
            ),
            (
                {"Segment": 3, "TotalSegments": 3},
                "1 validation error detected: "
                "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: 3 is "
                "not less than TotalSegments: 3",
            ),
            (
                {"Select": "COUNT", "AttributesToGet": ["v"]},
                "1 validation error detected: Cannot specify the AttributesToGet when choosing to get only the Count",
            ),
            (
                {"Select": "SPECIFIC_ATTRIBUTES"},
                "1 validation error detected: "
                "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES",
            ),
            (
                {"AttributesToGet": ["v", "v"]},
                "1 validation error detected: "
                "One or more parameter values were invalid: Duplicate value in attribute name: v",
            ),
            (
                {"ScanFilter": {"v": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}]}}},
                "1 validation error detected: "
                "The attempted filter operation is not supported for the provided filter argument count",
            ),
            (
                {"ScanFilter": {"v": {"ComparisonOperator": "EQ", "AttributeValueList": [{}]}}},
                "1 validation error detected: "
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ),
            (
                {"FilterExpression": "v = :v"},
                "1 validation error detected: "
                "Invalid FilterExpression: An expression attribute value used in expression is not defined; "
                "attribute value: :v",
            ),
            (
                {"ExclusiveStartKey": {"pk": {"S": "k01"}, "x": {"S": "y"}}},
                "The provided starting key is invalid: The provided key element does not match the schema",
            ),
            (
                {"ExclusiveStartKey": {"pk": {"N": "1"}}},
                "The provided starting key is invalid: The provided key element does not match the schema",
            ),
            (
                {"ExclusiveStartKey": {"pk": {"S": ""}}},
                "The provided starting key is invalid: One or more parameter values are not valid. The AttributeValue "
                "for a key attribute cannot contain an empty string value. Key: pk",
            ),
            (
                {"ProjectionExpression": "pk[0]"},
                "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: pk",
            ),
            ({"IndexName": "idx"}, "The table does not have the specified index: idx"),
        ],
    )
    def test_errors(self, ddb: Any, table: str, extra: dict[str, Any], message: str) -> None:
        assert error_of(lambda: ddb.scan(TableName=table, **extra)) == (VALIDATION, message)

    def test_segment_constraints(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: ddb.scan(TableName=table, Segment=-1, TotalSegments=1000001)) == (
            VALIDATION,
            "1 validation error detected: Value at 'TotalSegments' failed to satisfy constraint: Member must "
            "have value less than or equal to 1000000",
        )

    def test_start_key_from_another_segment(self, ddb: Any, table: str) -> None:
        first = ddb.scan(TableName=table, Segment=0, TotalSegments=2, Limit=1)["LastEvaluatedKey"]
        assert error_of(lambda: ddb.scan(TableName=table, Segment=1, TotalSegments=2, ExclusiveStartKey=first)) == (
            VALIDATION,
            "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with "
            "correct Segment. TotalSegments: 2 Segment: 1",
        )

    def test_missing_table(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.scan(TableName="no_such_table")) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )


class TestFunctionality:
    def test_hash_order_is_the_segments_in_turn(self, ddb: Any, table: str) -> None:
        items, _ = scan_all(ddb, TableName=table)
        assert sorted(keys(items)) == [f"k{i:02d}" for i in range(60)]
        assert keys(items) != sorted(keys(items))  # hash order, not key order
        by_segment: list[str] = []
        for segment in range(5):
            segment_items, _ = scan_all(ddb, TableName=table, Segment=segment, TotalSegments=5)
            by_segment += keys(segment_items)
        assert by_segment == keys(items)

    def test_limit_and_filter(self, ddb: Any, table: str) -> None:
        response = ddb.scan(
            TableName=table, Limit=10, FilterExpression="v = :v", ExpressionAttributeValues={":v": {"N": "1"}}
        )
        assert response["ScannedCount"] == 10 and response["Count"] == len(response["Items"]) < 10
        assert response["LastEvaluatedKey"] == {"pk": response["LastEvaluatedKey"]["pk"]}
        items, responses = scan_all(
            ddb, TableName=table, Limit=7, FilterExpression="v = :v", ExpressionAttributeValues={":v": {"N": "1"}}
        )
        assert sorted(keys(items)) == [f"k{i:02d}" for i in range(1, 60, 4)]
        assert sum(r["ScannedCount"] for r in responses) == 60

    def test_legacy_scan_filter(self, ddb: Any, table: str) -> None:
        response = ddb.scan(
            TableName=table,
            ScanFilter={
                "v": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "2"}, {"N": "3"}]},
                "pk": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "k0"}]},
            },
            ConditionalOperator="AND",
            Select="COUNT",
        )
        assert (response["Count"], response["ScannedCount"]) == (4, 60)  # k02, k03, k06, k07

    def test_projection(self, ddb: Any, table: str) -> None:
        response = ddb.scan(TableName=table, ProjectionExpression="#v", ExpressionAttributeNames={"#v": "v"})
        assert all(list(item) == ["v"] for item in response["Items"])

    def test_megabyte_pages_and_capacity(self, ddb: Any) -> None:
        """The seeds' example: a 1 MB page of 4 KB items costs 128 units (256 strongly consistent)."""
        name = create_table(ddb, "S")
        put_all(ddb, name, [{"pk": {"S": f"k{i:03d}"}, "d": {"S": "x" * 4089}} for i in range(300)])
        assert item_size({"pk": {"S": "k000"}, "d": {"S": "x" * 4089}}) == 4096
        for consistent, units in ((False, 128.0), (True, 256.0)):
            response = ddb.scan(TableName=name, ReturnConsumedCapacity="INDEXES", ConsistentRead=consistent)
            assert response["Count"] == 256
            assert response["ConsumedCapacity"] == {
                "TableName": name,
                "CapacityUnits": units,
                "Table": {"CapacityUnits": units},
            }
        items, responses = scan_all(ddb, TableName=name)
        assert len(items) == 300 and len({item["pk"]["S"] for item in items}) == 300
        assert [r["Count"] for r in responses] == [256, 44]

    def test_a_filter_does_not_lower_the_capacity(self, ddb: Any) -> None:
        """Capacity is charged on the data read before the filter: the items ScannedCount counts."""
        name = create_table(ddb, "S")
        items = [{"pk": {"S": f"k{i:03d}"}, "d": {"S": "x" * 3000}, "v": {"N": str(10 + i)}} for i in range(20)]
        put_all(ddb, name, items)
        units = -(-sum(item_size(item) for item in items) // 4096) / 2  # 4 KB blocks, eventually consistent
        for extra in ({}, {"FilterExpression": "v < :z", "ExpressionAttributeValues": {":z": {"N": "0"}}}):
            response = ddb.scan(TableName=name, ReturnConsumedCapacity="TOTAL", **extra)
            assert (response["Count"], response["ScannedCount"]) == (0 if extra else 20, 20)
            assert response["ConsumedCapacity"] == {"TableName": name, "CapacityUnits": units}
        limited = ddb.scan(
            TableName=name,
            Limit=5,
            FilterExpression="v < :z",
            ExpressionAttributeValues={":z": {"N": "0"}},
            ReturnConsumedCapacity="TOTAL",
        )
        read = sorted(items, key=lambda item: item["pk"]["S"])  # any five: every item has the same size
        assert (limited["Count"], limited["ScannedCount"]) == (0, 5)
        assert limited["ConsumedCapacity"]["CapacityUnits"] == -(-sum(item_size(i) for i in read[:5]) // 4096) / 2

    def test_parallel_scan_covers_table_exactly_while_writing(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        put_all(ddb, name, [{"pk": {"S": f"old{i:04d}"}, "d": {"S": "y" * 2000}} for i in range(1200)])
        total = 4
        state: list[dict[str, Any]] = [{"TableName": name, "Segment": s, "TotalSegments": total} for s in range(total)]
        seen: list[str] = []
        done = [False] * total
        written = 0
        while not all(done):
            for segment in range(total):
                if done[segment]:
                    continue
                response = ddb.scan(Limit=150, **state[segment])
                seen += keys(response["Items"])
                if "LastEvaluatedKey" in response:
                    state[segment]["ExclusiveStartKey"] = response["LastEvaluatedKey"]
                else:
                    done[segment] = True
                # writes between pages: new items, and rewrites and deletes of items no page has reached yet
                ddb.put_item(TableName=name, Item={"pk": {"S": f"new{written:04d}"}})
                ddb.put_item(TableName=name, Item={"pk": {"S": f"old{written:04d}"}, "d": {"S": "z"}})
                written += 1
        old = [key for key in seen if key.startswith("old")]
        assert len(old) == len(set(old)) == 1200
        assert len(seen) == len(set(seen))
