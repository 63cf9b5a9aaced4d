"""A GSI read sees the writes acknowledged before it (end to end over boto3): a Query or Scan on a GSI right after
a write by the same client finds it, every time; with ``--gsi-propagation-delay`` the simulated lag still shows;
items with equal index keys come back in the table's primary-key order."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import make_client
from tests.e2e.server_process import ServerProcess, server_fixture

server = server_fixture()


@pytest.fixture(scope="module")
def ddb(server: ServerProcess) -> Any:
    return server.ddb


def gsi_table(ddb: Any) -> str:
    name = f"vis_{uuid.uuid4().hex[:10]}"
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "g", "AttributeType": "S"},
            {"AttributeName": "gs", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "gs", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "by_g_only",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
    )
    return name


def misses(ddb: Any, name: str, pairs: int) -> int:
    """Put an item and at once Query the GSI for it, ``pairs`` times; how many Queries did not find it."""
    missed = 0
    for i in range(pairs):
        group = f"g{i}"
        ddb.put_item(TableName=name, Item={"pk": {"S": f"p{i}"}, "sk": {"N": "1"}, "g": {"S": group}, "gs": {"N": "1"}})
        found = ddb.query(
            TableName=name,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": group}},
        )["Count"]
        missed += found == 0
    return missed


def test_put_then_query_the_gsi_never_misses(ddb: Any) -> None:
    name = gsi_table(ddb)
    assert misses(ddb, name, 200) == 0


def test_put_then_query_the_gsi_never_misses_on_disk(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)  # LMDB and group commit: a read that applied the backlog is held
    try:  # until that commit is durable, like a write's response
        ddb = make_client(server.url)
        assert misses(ddb, gsi_table(ddb), 100) == 0
    finally:
        server.stop()


def test_an_update_and_a_delete_are_seen_by_the_next_gsi_read(ddb: Any) -> None:
    name = gsi_table(ddb)
    key = {"pk": {"S": "k"}, "sk": {"N": "1"}}
    for round_ in range(50):
        ddb.put_item(TableName=name, Item={**key, "g": {"S": "old"}, "gs": {"N": str(round_)}})
        ddb.update_item(
            TableName=name,
            Key=key,
            UpdateExpression="SET g = :new",
            ExpressionAttributeValues={":new": {"S": f"new{round_}"}},
        )
        moved = ddb.query(
            TableName=name,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": f"new{round_}"}},
        )
        assert [item["gs"]["N"] for item in moved["Items"]] == [str(round_)]
        assert ddb.scan(TableName=name, IndexName="by_g_only", Select="COUNT")["Count"] == 1
        ddb.delete_item(TableName=name, Key=key)
        assert ddb.scan(TableName=name, IndexName="by_g", Select="COUNT")["Count"] == 0


def test_equal_index_keys_come_back_in_table_key_order(ddb: Any) -> None:
    name = gsi_table(ddb)
    keys = [("b", 2), ("a", 9), ("c", 1), ("a", 3), ("b", 1)]
    for pk, sk in keys:
        ddb.put_item(TableName=name, Item={"pk": {"S": pk}, "sk": {"N": str(sk)}, "g": {"S": "same"}, "gs": {"N": "7"}})
    expected = [{"pk": pk, "sk": str(sk)} for pk, sk in sorted(keys)]
    for index in ("by_g", "by_g_only"):  # equal sort keys, and no sort key at all
        for forward in (True, False):
            items = ddb.query(
                TableName=name,
                IndexName=index,
                KeyConditionExpression="g = :g",
                ExpressionAttributeValues={":g": {"S": "same"}},
                ScanIndexForward=forward,
            )["Items"]
            got = [{"pk": item["pk"]["S"], "sk": item["sk"]["N"]} for item in items]
            assert got == (expected if forward else expected[::-1])


def test_a_simulated_propagation_delay_still_shows_the_lag() -> None:
    server = ServerProcess("--gsi-propagation-delay", "3600")
    try:
        ddb = make_client(server.url)
        name = gsi_table(ddb)
        assert misses(ddb, name, 20) == 20  # eventual consistency, for those who test it
        assert ddb.scan(TableName=name, IndexName="by_g", Select="COUNT")["Count"] == 0
    finally:
        server.stop()
