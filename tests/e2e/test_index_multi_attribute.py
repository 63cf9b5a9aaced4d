"""Multi-attribute GSI keys end to end: Query (every partition attribute, sort attributes left to right, the
clauses in any order), its refusals with DynamoDB's texts, pages whose LastEvaluatedKey holds every key
attribute, Scan, sparse entries, UpdateTable adding such an index to a table with items (backfill), PartiQL
SELECT on the index (a Query when every partition attribute has an equality, else a Scan), and stream records,
whose Keys stay the table's."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import error_of, make_streams_client, unique_name
from tests.e2e.stream_reader import all_shards, read_shard

INDEX_KEY = ("tournament", "area", "round", "bracket", "seq")
PAD = "x" * 3000  # ~3 KB per entry: a Query of one partition and a Scan of the index cost visibly different units


def key(*specs: str) -> list[dict[str, str]]:
    return [{"AttributeName": s.split(":")[0], "KeyType": s.split(":")[1]} for s in specs]


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


BY_ROUND = key("tournament:HASH", "area:HASH", "round:RANGE", "bracket:RANGE", "seq:RANGE")
DEFINITIONS = [
    {"AttributeName": name, "AttributeType": kind}
    for name, kind in (("game", "S"), ("tournament", "S"), ("area", "S"), ("round", "S"), ("bracket", "S"))
] + [{"AttributeName": "seq", "AttributeType": "N"}]
# match: (tournament, area, round, bracket, seq); m7 has no bracket, so it is in no index.
MATCHES = {
    "m1": ("W24", "NA", "R1", "UPPER", 1),
    "m2": ("W24", "NA", "R1", "UPPER", 2),
    "m3": ("W24", "NA", "R1", "LOWER", 3),
    "m4": ("W24", "NA", "R2", "UPPER", 4),
    "m5": ("W24", "EU", "R1", "UPPER", 5),
    "m6": ("S25", "NA", "R1", "UPPER", 6),
    "m7": ("W24", "NA", "R1", None, 7),
}


def item_of(match: str) -> dict[str, Any]:
    tournament, area, round_, bracket, seq = MATCHES[match]
    item = {"game": s(match), "tournament": s(tournament), "area": s(area), "round": s(round_), "seq": n(seq)}
    if bracket is not None:
        item["bracket"] = s(bracket)
    return item | {"filler": s(PAD)}


def wait_active(ddb: Any, table: str, index: str | None = None) -> None:
    for _ in range(2000):
        desc = ddb.describe_table(TableName=table)["Table"]
        statuses = [g["IndexStatus"] for g in desc.get("GlobalSecondaryIndexes", []) if g["IndexName"] == index]
        if desc["TableStatus"] == "ACTIVE" and all(status == "ACTIVE" for status in statuses):
            return
        time.sleep(0.01)
    raise AssertionError(f"{table} did not turn ACTIVE")


UNITS = {"ReadCapacityUnits": 100, "WriteCapacityUnits": 100}
BILLING_MODES = ["PAY_PER_REQUEST", "PROVISIONED"]  # both capacity modes


def billing(mode: str) -> dict[str, Any]:
    """A CreateTable's billing members in ``mode``."""
    return {"BillingMode": mode} | ({"ProvisionedThroughput": UNITS} if mode == "PROVISIONED" else {})


def by_round(mode: str, projection: str = "ALL") -> dict[str, Any]:
    index = {"IndexName": "by_round", "KeySchema": BY_ROUND, "Projection": {"ProjectionType": projection}}
    return index | ({"ProvisionedThroughput": UNITS} if mode == "PROVISIONED" else {})


@pytest.fixture(scope="module", params=BILLING_MODES)
def matches(ddb: Any, request: pytest.FixtureRequest) -> str:
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=key("game:HASH"),
        AttributeDefinitions=DEFINITIONS,
        GlobalSecondaryIndexes=[by_round(request.param)],
        **billing(request.param),
    )
    wait_active(ddb, name)
    for match in MATCHES:
        ddb.put_item(TableName=name, Item=item_of(match))
    return name


VALUES = {":t": s("W24"), ":r": s("NA"), ":ro": s("R1"), ":b": s("UPPER"), ":lo": n(2), ":hi": n(9), ":p": s("UP")}
NAMES = {"#round": "round"}  # ROUND is no reserved word, but a name keeps the conditions readable alike


def query(ddb: Any, table: str, condition: str, **extra: Any) -> Any:
    values = {ref: value for ref, value in VALUES.items() if _uses(condition + str(extra), ref)}
    names = {ref: name for ref, name in NAMES.items() if ref in condition}
    return ddb.query(
        TableName=table,
        IndexName="by_round",
        KeyConditionExpression=condition,
        ExpressionAttributeValues=values,
        **({"ExpressionAttributeNames": names} if names else {}),
        **extra,
    )


def _uses(text: str, ref: str) -> bool:
    """Whether ``text`` names the value ``ref`` (``:r`` is not ``:ro``)."""
    at = text.find(ref)
    while at >= 0:
        end = at + len(ref)
        if end == len(text) or not (text[end].isalnum() or text[end] == "_"):
            return True
        at = text.find(ref, end)
    return False


def matches_of(page: Any) -> list[str]:
    return [item["game"]["S"] for item in page["Items"]]


PARTITION = "tournament = :t AND area = :r"


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (PARTITION, ["m3", "m1", "m2", "m4"]),  # by round, then bracket, then seq; m7 lacks bracket
        (PARTITION + " AND #round = :ro", ["m3", "m1", "m2"]),
        (PARTITION + " AND #round = :ro AND bracket = :b", ["m1", "m2"]),
        (PARTITION + " AND #round = :ro AND begins_with(bracket, :p)", ["m1", "m2"]),
        (PARTITION + " AND #round = :ro AND bracket = :b AND seq BETWEEN :lo AND :hi", ["m2"]),
        (PARTITION + " AND #round > :ro", ["m4"]),
        (PARTITION + " AND :ro < #round", ["m4"]),
        ("bracket = :b AND area = :r AND #round = :ro AND tournament = :t", ["m1", "m2"]),  # any order
    ],
)
def test_query_conditions(ddb: Any, matches: str, condition: str, expected: list[str]) -> None:
    assert matches_of(query(ddb, matches, condition)) == expected
    assert matches_of(query(ddb, matches, condition, ScanIndexForward=False)) == expected[::-1]


def test_a_query_is_charged_to_the_index(ddb: Any, matches: str) -> None:
    page = query(ddb, matches, PARTITION + " AND #round = :ro", ReturnConsumedCapacity="INDEXES")
    assert page["ConsumedCapacity"] == {
        "TableName": matches,
        "CapacityUnits": 1.5,  # three ~3 KB entries: 3 units, halved (eventually consistent)
        "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"by_round": {"CapacityUnits": 1.5}},
    }


def test_query_pages_carry_every_key_attribute(ddb: Any, matches: str) -> None:
    page = query(ddb, matches, PARTITION, Limit=1)
    assert page["LastEvaluatedKey"] == {
        "tournament": s("W24"),
        "area": s("NA"),
        "round": s("R1"),
        "bracket": s("LOWER"),
        "seq": n(3),
        "game": s("m3"),
    }
    seen = matches_of(page)
    while "LastEvaluatedKey" in page:
        page = query(ddb, matches, PARTITION, Limit=1, ExclusiveStartKey=page["LastEvaluatedKey"])
        seen += matches_of(page)
    assert seen == ["m3", "m1", "m2", "m4"]


RANGE_TEXT = "RANGE key attributes {} must have equality conditions specified in the query because a condition is "
RANGE_TEXT += "present on key attribute {}"


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("tournament = :t", "HASH key attributes area must have equality conditions specified in the query"),
        (
            "tournament = :t AND area > :r",
            "HASH key attributes area must have equality conditions specified in the query",
        ),
        (PARTITION + " AND bracket = :b", RANGE_TEXT.format("round", "bracket")),
        (PARTITION + " AND #round = :ro AND seq = :lo", RANGE_TEXT.format("bracket", "seq")),
        (PARTITION + " AND #round > :ro AND bracket = :b", RANGE_TEXT.format("round", "bracket")),
        (PARTITION + " AND begins_with(#round, :p) AND bracket = :b", RANGE_TEXT.format("round", "bracket")),
        (
            PARTITION + " AND #round = :ro AND #round = :ro",
            "KeyConditionExpressions must only contain one condition per key",
        ),
        (PARTITION + " AND filler = :b", "Query key condition not supported"),
        (
            "tournament = :lo AND area = :r",
            "One or more parameter values were invalid: Condition parameter type does not match schema type",
        ),
    ],
)
def test_query_refusals(ddb: Any, matches: str, condition: str, message: str) -> None:
    assert error_of(lambda: query(ddb, matches, condition)) == ("ValidationException", message)


def test_query_refusals_outside_the_key_condition(ddb: Any, matches: str) -> None:
    assert error_of(lambda: query(ddb, matches, PARTITION, FilterExpression="seq > :lo")) == (
        "ValidationException",
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: seq",
    )
    legacy = {
        name: {"AttributeValueList": [VALUES[ref]], "ComparisonOperator": "EQ"}
        for name, ref in (("tournament", ":t"), ("area", ":r"))
    }
    assert error_of(lambda: ddb.query(TableName=matches, IndexName="by_round", KeyConditions=legacy)) == (
        "ValidationException",
        "Query key condition not supported",
    )
    assert error_of(lambda: query(ddb, matches, PARTITION, ProjectionExpression="bracket.side")) == (
        "ValidationException",
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: IndexKey: bracket",
    )
    start = {"tournament": s("W24"), "area": s("NA"), "round": s("R1"), "bracket": s("LOWER"), "game": s("m3")}
    assert error_of(lambda: query(ddb, matches, PARTITION, ExclusiveStartKey=start)) == (  # no seq: a size short
        "ValidationException",
        "Exclusive Start Key must have same size as table's key schema",
    )
    elsewhere = start | {"area": s("EU"), "seq": n(3)}
    assert error_of(lambda: query(ddb, matches, PARTITION, ExclusiveStartKey=elsewhere)) == (
        "ValidationException",
        "The provided starting key is outside query boundaries based on provided conditions",
    )
    below = start | {"seq": n(3), "round": s("R0")}
    assert error_of(lambda: query(ddb, matches, PARTITION + " AND #round = :ro", ExclusiveStartKey=below)) == (
        "ValidationException",
        "The provided starting key does not match the range key predicate",
    )


def scan_all(ddb: Any, table: str, **extra: Any) -> tuple[list[str], list[dict[str, Any]]]:
    found: list[str] = []
    last_keys: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": table, "IndexName": "by_round", **extra}
    while True:
        page = ddb.scan(**request)
        found += matches_of(page)
        if "LastEvaluatedKey" not in page:
            return found, last_keys
        last_keys.append(page["LastEvaluatedKey"])
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_scan_reads_every_entry_once_in_pages(ddb: Any, matches: str) -> None:
    found, last_keys = scan_all(ddb, matches, Limit=2)
    assert sorted(found) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert all(set(last) == {*INDEX_KEY, "game"} for last in last_keys)
    segments = [scan_all(ddb, matches, Segment=i, TotalSegments=3, Limit=1)[0] for i in range(3)]
    assert sorted(game for segment in segments for game in segment) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    start = {"tournament": s("W24"), "area": s("NA"), "round": s("R1"), "bracket": s("LOWER"), "game": s("m3")}
    assert error_of(lambda: ddb.scan(TableName=matches, IndexName="by_round", ExclusiveStartKey=start)) == (
        "ValidationException",
        "The provided starting key is invalid: The provided key element does not match the schema",
    )


def eventually(check: Callable[[], Any]) -> Any:
    for _ in range(500):
        try:
            return check()
        except AssertionError:
            time.sleep(0.01)
    return check()


def test_an_item_is_in_the_index_only_with_every_key_attribute(ddb: Any, matches: str) -> None:
    condition = PARTITION + " AND #round = :ro AND bracket = :b"
    ddb.update_item(TableName=matches, Key={"game": s("m2")}, UpdateExpression="REMOVE bracket")
    assert matches_of(query(ddb, matches, condition)) == ["m1"]
    ddb.update_item(
        TableName=matches,
        Key={"game": s("m2")},
        UpdateExpression="SET bracket = :b",
        ExpressionAttributeValues={":b": s("UPPER")},
    )
    assert matches_of(query(ddb, matches, condition)) == ["m1", "m2"]
    code, text = error_of(lambda: ddb.put_item(TableName=matches, Item=item_of("m1") | {"seq": s("one")}))
    assert (code, text) == (
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key seq Expected: N Actual: S "
        "IndexName: by_round",
    )


@pytest.mark.parametrize("mode", BILLING_MODES)
def test_update_table_adds_a_multi_attribute_index_and_backfills_it(ddb: Any, mode: str) -> None:
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=key("game:HASH"),
        AttributeDefinitions=[{"AttributeName": "game", "AttributeType": "S"}],
        **billing(mode),
    )
    wait_active(ddb, name)
    for match in MATCHES:
        ddb.put_item(TableName=name, Item=item_of(match))
    ddb.update_table(
        TableName=name,
        AttributeDefinitions=DEFINITIONS,
        GlobalSecondaryIndexUpdates=[{"Create": by_round(mode, "KEYS_ONLY")}],
    )
    wait_active(ddb, name, "by_round")
    described = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert (described["KeySchema"], described["ItemCount"]) == (BY_ROUND, 6)
    page = query(ddb, name, PARTITION + " AND #round = :ro")
    assert page["Items"] == [{a: v for a, v in item_of(m).items() if a != "filler"} for m in ("m3", "m1", "m2")]


def statement(ddb: Any, text: str, *params: dict[str, Any]) -> Any:
    parameters = {"Parameters": list(params)} if params else {}
    return ddb.execute_statement(Statement=text, ReturnConsumedCapacity="TOTAL", **parameters)


def test_partiql_select_queries_with_every_partition_attribute(ddb: Any, matches: str) -> None:
    index = f'"{matches}"."by_round"'
    query_units = query(ddb, matches, PARTITION + " AND #round = :ro", ReturnConsumedCapacity="TOTAL")
    got = statement(
        ddb, f"SELECT * FROM {index} WHERE tournament = ? AND area = ? AND round = ?", s("W24"), s("NA"), s("R1")
    )
    assert matches_of(got) == ["m3", "m1", "m2"]
    assert got["ConsumedCapacity"]["CapacityUnits"] == query_units["ConsumedCapacity"]["CapacityUnits"] == 1.5
    got = statement(
        ddb,
        f"SELECT game FROM {index} WHERE area = 'NA' AND tournament = 'W24' AND round = 'R1' AND bracket = 'UPPER'"
        " AND seq >= 2",
    )
    assert got["Items"] == [{"game": s("m2")}]
    assert got["ConsumedCapacity"]["CapacityUnits"] == 0.5
    got = statement(
        ddb, f"SELECT game FROM {index} WHERE tournament = 'W24' AND area IN ['EU', 'NA'] ORDER BY area DESC"
    )
    assert matches_of(got) == ["m3", "m1", "m2", "m4", "m5"]


def test_partiql_select_scans_without_every_partition_attribute(ddb: Any, matches: str) -> None:
    index = f'"{matches}"."by_round"'
    got = statement(ddb, f"SELECT game FROM {index} WHERE tournament = 'W24' AND round = 'R1'")
    assert sorted(matches_of(got)) == ["m1", "m2", "m3", "m5"]
    assert got["ConsumedCapacity"]["CapacityUnits"] == 2.5  # the six entries of the index, ~18 KB: 5 units, halved
    code, text = error_of(lambda: statement(ddb, f"SELECT game FROM {index} WHERE tournament = 'W24' ORDER BY seq"))
    assert (code, text) == (
        "ValidationException",
        "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause.",
    )


def test_stream_records_keep_the_table_key(ddb: Any, endpoint: str, signed_as: dict[str, str] | None) -> None:
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=key("game:HASH"),
        AttributeDefinitions=DEFINITIONS,
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        GlobalSecondaryIndexes=[
            {"IndexName": "by_round", "KeySchema": BY_ROUND, "Projection": {"ProjectionType": "ALL"}}
        ],
    )
    wait_active(ddb, name)
    ddb.put_item(TableName=name, Item=item_of("m1"))
    streams = make_streams_client(endpoint, signed_as)
    arn = ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]

    def keys_written() -> list[Any]:
        records = [r for shard in all_shards(streams, arn) for r in read_shard(streams, arn, shard["ShardId"], None)]
        assert records
        return [r["dynamodb"]["Keys"] for r in records]

    assert eventually(keys_written) == [{"game": s("m1")}]


@pytest.mark.parametrize(
    ("table_key", "lsi_key", "message"),
    [
        (
            ("game:HASH", "seq:RANGE", "bracket:RANGE"),
            None,
            "1 validation error detected: Value at 'KeySchema' failed to satisfy constraint: Member must have "
            "length less than or equal to 2",
        ),
        (("game:HASH", "area:HASH"), None, "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"),
        (
            ("game:HASH", "seq:RANGE"),
            ("game:HASH", "area:HASH"),
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
        ),
    ],
)
def test_tables_and_lsis_keep_one_attribute_of_each_kind(
    ddb: Any, table_key: tuple[str, ...], lsi_key: tuple[str, ...] | None, message: str
) -> None:
    lsis = {}
    if lsi_key is not None:
        lsis = {
            "LocalSecondaryIndexes": [
                {"IndexName": "lsi", "KeySchema": key(*lsi_key), "Projection": {"ProjectionType": "ALL"}}
            ]
        }
    names = {spec.split(":")[0] for spec in (*table_key, *(lsi_key or ()))}
    code, text = error_of(
        lambda: ddb.create_table(
            TableName=unique_name(),
            KeySchema=key(*table_key),
            AttributeDefinitions=[d for d in DEFINITIONS if d["AttributeName"] in names],
            BillingMode="PAY_PER_REQUEST",
            **lsis,
        )
    )
    assert (code, text) == ("ValidationException", message)


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            ("tournament:HASH", "area:HASH", "round:HASH", "bracket:HASH", "seq:HASH"),
            "One or more parameter values were invalid: The KeySchema exceeds the maximum allowed number of HASH key "
            "attributes",
        ),
        (
            ("tournament:HASH", "round:RANGE", "area:HASH"),
            "One or more parameter values were invalid: All HASH key attributes must precede RANGE key attributes in "
            "the KeySchema",
        ),
        (("round:RANGE", "tournament:HASH"), "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
    ],
)
def test_update_table_checks_the_key_schema_of_a_new_index(ddb: Any, specs: tuple[str, ...], message: str) -> None:
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=key("game:HASH"),
        AttributeDefinitions=[{"AttributeName": "game", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    wait_active(ddb, name)
    names = {spec.split(":")[0] for spec in specs}
    index = {"IndexName": "bad", "KeySchema": key(*specs), "Projection": {"ProjectionType": "ALL"}}
    code, text = error_of(
        lambda: ddb.update_table(
            TableName=name,
            AttributeDefinitions=[d for d in DEFINITIONS if d["AttributeName"] in names],
            GlobalSecondaryIndexUpdates=[{"Create": index}],
        )
    )
    assert (code, text) == ("ValidationException", message)
