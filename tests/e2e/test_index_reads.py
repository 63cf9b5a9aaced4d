"""Query and Scan on secondary indexes end to end: GSI and LSI pages and their keys, projections and LSI table
fetches with their capacity (the seeds' 0.5 / 2.5 example), GSI-only refusals, multi-attribute keys, and the
capacity model's admission of index and table reads (a throttled page; a parallel scan over 4 partitions)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import error_of, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture


def key(*specs: str) -> list[dict[str, str]]:
    return [{"AttributeName": s.split(":")[0], "KeyType": s.split(":")[1]} for s in specs]


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def eventually(check: Callable[[], Any]) -> Any:
    """GSIs are eventually consistent: retry ``check`` (an assertion) until the propagation has caught up."""
    for _ in range(500):
        try:
            return check()
        except AssertionError:
            time.sleep(0.01)
    return check()


@pytest.fixture(scope="module")
def shop(ddb: Any) -> str:
    """Orders: table key (customer, order); LSI ``by_date`` (customer, date, KEYS_ONLY); GSI ``by_status``
    (status, total, INCLUDE note); GSI ``by_place`` (country, city | year, month: multi-attribute, ALL)."""
    name = unique_name()
    attrs = {"customer": "S", "order": "N", "date": "S", "status": "S", "total": "N"}
    attrs |= {"country": "S", "city": "S", "year": "N", "month": "N"}
    ddb.create_table(
        TableName=name,
        KeySchema=key("customer:HASH", "order:RANGE"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in attrs.items()],
        BillingMode="PAY_PER_REQUEST",
        LocalSecondaryIndexes=[
            {
                "IndexName": "by_date",
                "KeySchema": key("customer:HASH", "date:RANGE"),
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_status",
                "KeySchema": key("status:HASH", "total:RANGE"),
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]},
            },
            {
                "IndexName": "by_place",
                "KeySchema": key("country:HASH", "city:HASH", "year:RANGE", "month:RANGE"),
                "Projection": {"ProjectionType": "ALL"},
            },
        ],
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    places = [("FR", "Paris", 2024, 1), ("FR", "Paris", 2024, 3), ("FR", "Paris", 2025, 1), ("FR", "Lyon", 2024, 1)]
    for order in range(12):
        item = {
            "customer": s(f"c{order % 2}"),
            "order": n(order),
            "date": s(f"2024-01-{order + 10}"),
            "total": n(order % 4),
            "note": s(f"note {order}"),
            "secret": s("x" * 100),
        }
        if order < 10:
            item["status"] = s("open" if order % 2 else "paid")  # orders 10 and 11: not in by_status (sparse)
        if order < len(places):
            country, city, year, month = places[order]
            item |= {"country": s(country), "city": s(city), "year": n(year), "month": n(month)}
        ddb.put_item(TableName=name, Item=item)
    return name


def query(ddb: Any, table: str, index: str, condition: str, values: dict[str, Any], **extra: Any) -> Any:
    return ddb.query(
        TableName=table, IndexName=index, KeyConditionExpression=condition, ExpressionAttributeValues=values, **extra
    )


# ---------------------------------------------------------------------------------------------- GSIs


def test_gsi_query_in_index_order_with_projected_attributes(ddb: Any, shop: str) -> None:
    def check() -> Any:
        got = query(ddb, shop, "by_status", "#s = :s", {":s": s("open")}, ExpressionAttributeNames={"#s": "status"})
        assert got["Count"] == 5
        return got

    got = eventually(check)
    assert [(i["total"]["N"], i["order"]["N"]) for i in got["Items"]] == [
        ("1", "1"),
        ("1", "5"),
        ("1", "9"),
        ("3", "3"),
        ("3", "7"),
    ]  # duplicate index keys are all there, in table-key order
    assert got["Items"][0] == {
        "customer": s("c1"),
        "order": n(1),
        "status": s("open"),
        "total": n(1),
        "note": s("note 1"),
    }


def test_gsi_pages_resume_from_keys_holding_index_and_table_key(ddb: Any, shop: str) -> None:
    names = {"#s": "status"}
    eventually(
        lambda: _assert_count(
            query(ddb, shop, "by_status", "#s = :s", {":s": s("paid")}, ExpressionAttributeNames=names), 5
        )
    )
    seen: list[str] = []
    start: dict[str, Any] | None = None
    pages = 0
    while True:
        extra: dict[str, Any] = {"Limit": 2, "ExpressionAttributeNames": names}
        if start is not None:
            extra["ExclusiveStartKey"] = start
        got = query(ddb, shop, "by_status", "#s = :s", {":s": s("paid")}, **extra)
        pages += 1
        seen += [i["order"]["N"] for i in got["Items"]]
        start = got.get("LastEvaluatedKey")
        if pages == 1:
            assert start == {"status": s("paid"), "total": n(0), "customer": s("c0"), "order": n(4)}
        if start is None:
            break
    assert seen == ["0", "4", "8", "2", "6"] and pages == 3


def _assert_count(got: Any, count: int) -> Any:
    assert got["Count"] == count
    return got


def test_gsi_refusals(ddb: Any, shop: str) -> None:
    values = {":s": s("open")}
    names = {"#s": "status"}
    assert error_of(
        lambda: query(ddb, shop, "by_status", "#s = :s", values, ExpressionAttributeNames=names, ConsistentRead=True)
    ) == ("ValidationException", "Consistent reads are not supported on global secondary indexes")
    assert error_of(lambda: ddb.scan(TableName=shop, IndexName="by_status", Select="ALL_ATTRIBUTES")) == (
        "ValidationException",
        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global "
        "secondary index by_status because its projection type is not ALL",
    )
    assert error_of(
        lambda: query(
            ddb,
            shop,
            "by_status",
            "#s = :s",
            values,
            ExpressionAttributeNames=names,
            ProjectionExpression="note, secret",
        )
    ) == (
        "ValidationException",
        "One or more parameter values were invalid: Global secondary index by_status does not project [secret]",
    )
    assert error_of(
        lambda: query(
            ddb,
            shop,
            "by_status",
            "#s = :s AND #t > :t",
            {**values, ":t": n(1)},
            ExpressionAttributeNames={**names, "#t": "total"},
            FilterExpression="#t > :t",
        )
    ) == (
        "ValidationException",
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: total",
    )
    assert error_of(lambda: ddb.scan(TableName=shop, IndexName="nope")) == (
        "ValidationException",
        "The table does not have the specified index: nope",
    )


def test_gsi_capacity_is_the_index_s(ddb: Any, shop: str) -> None:
    got = query(
        ddb,
        shop,
        "by_status",
        "#s = :s",
        {":s": s("open")},
        ExpressionAttributeNames={"#s": "status"},
        ReturnConsumedCapacity="INDEXES",
        Select="ALL_PROJECTED_ATTRIBUTES",
    )
    assert got["ConsumedCapacity"] == {
        "TableName": shop,
        "CapacityUnits": 0.5,
        "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"by_status": {"CapacityUnits": 0.5}},
    }


def test_multi_attribute_gsi_query(ddb: Any, shop: str) -> None:
    values = {":c": s("FR"), ":t": s("Paris")}
    got = eventually(lambda: _assert_count(query(ddb, shop, "by_place", "country = :c AND city = :t", values), 3))
    assert [(i["year"]["N"], i["month"]["N"]) for i in got["Items"]] == [("2024", "1"), ("2024", "3"), ("2025", "1")]
    got = query(
        ddb,
        shop,
        "by_place",
        "country = :c AND city = :t AND #y = :y AND #m > :m",
        {**values, ":y": n(2024), ":m": n(1)},
        ExpressionAttributeNames={"#y": "year", "#m": "month"},
    )
    assert [i["order"]["N"] for i in got["Items"]] == ["1"]
    assert error_of(lambda: query(ddb, shop, "by_place", "country = :c", {":c": s("FR")})) == (
        "ValidationException",
        "HASH key attributes city must have equality conditions specified in the query",
    )
    assert error_of(
        lambda: query(
            ddb,
            shop,
            "by_place",
            "country = :c AND city = :t AND #m = :m",
            {**values, ":m": n(1)},
            ExpressionAttributeNames={"#m": "month"},
        )
    ) == (
        "ValidationException",
        "RANGE key attributes year must have equality conditions specified in the query because a condition is "
        "present on key attribute month",
    )


# ---------------------------------------------------------------------------------------------- LSIs


def test_lsi_fetches_unprojected_attributes_at_the_seeds_cost(ddb: Any) -> None:
    """The seeds: four ~200-byte items. ALL_PROJECTED_ATTRIBUTES reads the KEYS_ONLY index only (0.5 units);
    ALL_ATTRIBUTES also fetches each item from the table (0.5 each): 2.5 in all."""
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=key("id:HASH", "n:RANGE"),
        AttributeDefinitions=[
            {"AttributeName": "id", "AttributeType": "S"},
            {"AttributeName": "n", "AttributeType": "N"},
            {"AttributeName": "size", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
        LocalSecondaryIndexes=[
            {
                "IndexName": "id-size-index",
                "KeySchema": key("id:HASH", "size:RANGE"),
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    for i in range(4):
        ddb.put_item(TableName=name, Item={"id": s("one"), "n": n(i), "size": n(10 - i), "body": s("b" * 180)})
    values = {":v1": s("one")}
    projected = query(
        ddb,
        name,
        "id-size-index",
        "id = :v1",
        values,
        ReturnConsumedCapacity="INDEXES",
        Select="ALL_PROJECTED_ATTRIBUTES",
    )
    assert projected["ConsumedCapacity"] == {
        "TableName": name,
        "CapacityUnits": 0.5,
        "Table": {"CapacityUnits": 0.0},
        "LocalSecondaryIndexes": {"id-size-index": {"CapacityUnits": 0.5}},
    }
    assert projected["Items"][0] == {"id": s("one"), "n": n(3), "size": n(7)}  # index order: size 7 first
    full = query(
        ddb, name, "id-size-index", "id = :v1", values, ReturnConsumedCapacity="INDEXES", Select="ALL_ATTRIBUTES"
    )
    assert full["ConsumedCapacity"] == {
        "TableName": name,
        "CapacityUnits": 2.5,
        "Table": {"CapacityUnits": 2.0},
        "LocalSecondaryIndexes": {"id-size-index": {"CapacityUnits": 0.5}},
    }
    assert full["Items"][0]["body"] == s("b" * 180)
    some = query(
        ddb,
        name,
        "id-size-index",
        "id = :v1",
        values,
        ProjectionExpression="body, n",
        ConsistentRead=True,
        ReturnConsumedCapacity="TOTAL",
        Limit=1,
    )
    assert some["Items"] == [{"body": s("b" * 180), "n": n(3)}]
    assert some["ConsumedCapacity"] == {"TableName": name, "CapacityUnits": 2.0}  # strongly consistent: 1 + 1
    assert some["LastEvaluatedKey"] == {"id": s("one"), "size": n(7), "n": n(3)}


def test_lsi_query_is_immediately_consistent_and_filters_unprojected_attributes(ddb: Any, shop: str) -> None:
    got = query(
        ddb,
        shop,
        "by_date",
        "customer = :c AND #d >= :d",
        {":c": s("c0"), ":d": s("2024-01-16"), ":x": s("note 8")},
        ExpressionAttributeNames={"#d": "date"},
        FilterExpression="note <> :x",
        ConsistentRead=True,
    )
    assert [i["order"]["N"] for i in got["Items"]] == ["6", "10"]  # dates -16, -18 (filtered out), -20
    assert got["ScannedCount"] == 3


# ---------------------------------------------------------------------------------------------- Scan


def test_parallel_scan_of_an_index_covers_it_once(ddb: Any, shop: str) -> None:
    def whole() -> list[Any]:
        got = ddb.scan(TableName=shop, IndexName="by_status")
        assert got["Count"] == 10
        return got["Items"]  # type: ignore[no-any-return]

    everything = eventually(whole)
    parts: list[Any] = []
    for segment in range(3):
        start: dict[str, Any] | None = None
        while True:
            extra: dict[str, Any] = {"Limit": 2}
            if start is not None:
                extra["ExclusiveStartKey"] = start
            got = ddb.scan(TableName=shop, IndexName="by_status", Segment=segment, TotalSegments=3, **extra)
            parts += got["Items"]
            start = got.get("LastEvaluatedKey")
            if start is None:
                break
    assert sorted(parts, key=lambda i: int(i["order"]["N"])) == sorted(everything, key=lambda i: int(i["order"]["N"]))
    assert error_of(
        lambda: ddb.scan(TableName=shop, IndexName="by_status", ExclusiveStartKey={"customer": s("c0"), "order": n(1)})
    ) == (
        "ValidationException",
        "The provided starting key is invalid: The provided key element does not match the schema",
    )


# ---------------------------------------------------------------------------------------------- admission


# Manual clock; partitions of 60 RCU / 20 WCU so a few requests reach their limits.
server = server_fixture("--manual-clock", "--partition-max-rcu", "60", "--partition-max-wcu", "20")


def admission_table(server: ServerProcess, read: int, write: int) -> str:
    name = f"adm_{uuid.uuid4().hex[:10]}"
    server.ddb.create_table(
        TableName=name,
        KeySchema=key("pk:HASH", "sk:RANGE"),
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
    )
    return name


def put_until_admitted(server: ServerProcess, table: str, item: dict[str, Any]) -> None:
    """Put, letting the clock run a second whenever the write is throttled (loading is not under test)."""
    for _ in range(100):
        try:
            server.ddb.put_item(TableName=table, Item=item)
            return
        except server.ddb.exceptions.ProvisionedThroughputExceededException:
            server.advance(1)
    raise AssertionError("put never admitted")


def test_a_query_page_is_settled_and_the_next_one_throttled(server: ServerProcess) -> None:
    name = admission_table(server, 2, 20)  # one partition of 2 RCU
    for i in range(10):
        put_until_admitted(server, name, {"pk": s("hot"), "sk": n(i), "blob": s("z" * 4000)})
    server.advance(300)  # whatever the loading left: a full second's capacity and full burst credit
    pages = 0
    codes: list[str] = []
    for _ in range(40):
        try:
            server.ddb.query(
                TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": s("hot")}
            )
            pages += 1
        except server.ddb.exceptions.ProvisionedThroughputExceededException:
            codes.append("throttled")
            break
    assert codes == ["throttled"] and pages > 0  # each page costs 5 units; burst and the rate run out
    view = server.admin(f"/dynastore/partitions/{name}")
    part = view["partitions"][0]
    assert part["consumed"]["read"] == 5 * pages  # settled after reading: 40 KB eventually consistent = 5 units
    assert part["throttled"]["read"] == 1
    server.advance(60)
    assert (
        server.ddb.query(TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": s("hot")})[
            "Count"
        ]
        == 10
    )


def test_parallel_scan_with_4_segments_reads_from_4_partitions(server: ServerProcess) -> None:
    name = admission_table(server, 180, 20)  # ceil(180/60 + 20/20) = 4 partitions
    view = server.admin(f"/dynastore/partitions/{name}")
    assert view["partition_count"] == 4
    for i in range(40):
        put_until_admitted(server, name, {"pk": s(f"k{i}"), "sk": n(0)})
    total = 0
    for segment in range(4):
        total += server.ddb.scan(TableName=name, Segment=segment, TotalSegments=4)["Count"]
    assert total == 40
    view = server.admin(f"/dynastore/partitions/{name}")
    assert [p["consumed"]["read"] > 0 for p in view["partitions"]] == [True] * 4
