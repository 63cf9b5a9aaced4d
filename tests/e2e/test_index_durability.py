"""kill -9 in the middle of GSI propagation and in the middle of a backfill: nothing is lost afterwards."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.e2e.conftest import make_client
from tests.e2e.server_process import ServerProcess

TABLE = "durable_indexes"


def _wait_gsi(ddb: Any, index: str, g: str, count: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for _ in range(300):
        items = ddb.query(
            TableName=TABLE,
            IndexName=index,
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": g}},
        )["Items"]
        if len(items) == count:
            return items
        time.sleep(0.02)
    return items


def _create(ddb: Any, gsis: bool) -> None:
    extra: dict[str, Any] = {}
    if gsis:
        extra["GlobalSecondaryIndexes"] = [
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ]
    ddb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}]
        + ([{"AttributeName": "g", "AttributeType": "S"}] if gsis else []),
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )
    ddb.get_waiter("table_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})


def test_kill_during_propagation_loses_no_index_update(tmp_path: Path) -> None:
    # Propagation held back for an hour: every acknowledged write's GSI update is only in the backlog.
    server = ServerProcess("--gsi-propagation-delay", "3600", data_dir=tmp_path)
    ddb = make_client(server.url)
    _create(ddb, gsis=True)
    for i in range(30):
        ddb.put_item(TableName=TABLE, Item={"pk": {"S": f"p{i}"}, "g": {"S": "moved" if i < 10 else "kept"}})
    for i in range(10):
        ddb.update_item(
            TableName=TABLE,
            Key={"pk": {"S": f"p{i}"}},
            UpdateExpression="SET g = :g",
            ExpressionAttributeValues={":g": {"S": "final"}},
        )
    ddb.delete_item(TableName=TABLE, Key={"pk": {"S": "p29"}})
    assert _wait_gsi(ddb, "by_g", "kept", 19) == []  # nothing propagated yet
    server.kill()

    server = ServerProcess(data_dir=tmp_path)
    try:
        ddb = make_client(server.url)
        assert len(_wait_gsi(ddb, "by_g", "kept", 19)) == 19
        assert sorted(i["pk"]["S"] for i in _wait_gsi(ddb, "by_g", "final", 10)) == sorted(f"p{i}" for i in range(10))
        assert _wait_gsi(ddb, "by_g", "moved", 0) == []
        lag = json.loads(urllib.request.urlopen(f"{server.url}/dynastore/indexes").read())
        assert lag["waiting"] == 0
    finally:
        server.stop()


def test_kill_during_backfill_loses_nothing(tmp_path: Path) -> None:
    # One item copied every 0.2 s of the server's clock: the backfill is still running when killed.
    server = ServerProcess("--gsi-backfill-chunk", "1", "--gsi-backfill-interval", "0.2", data_dir=tmp_path)
    ddb = make_client(server.url)
    _create(ddb, gsis=False)
    for i in range(40):
        ddb.put_item(TableName=TABLE, Item={"pk": {"S": f"p{i}"}, "g": {"S": "all"}})
    ddb.update_table(
        TableName=TABLE,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[
            {
                "Create": {
                    "IndexName": "by_g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            }
        ],
    )
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "during"}, "g": {"S": "all"}})  # writable meanwhile
    assert ddb.get_item(TableName=TABLE, Key={"pk": {"S": "p1"}})["Item"]["g"] == {"S": "all"}  # readable
    time.sleep(1.0)
    index = ddb.describe_table(TableName=TABLE)["Table"]["GlobalSecondaryIndexes"][0]
    assert index["IndexStatus"] == "CREATING"
    server.kill()

    server = ServerProcess(data_dir=tmp_path)
    try:
        ddb = make_client(server.url)
        for _ in range(300):
            index = ddb.describe_table(TableName=TABLE)["Table"]["GlobalSecondaryIndexes"][0]
            if index["IndexStatus"] == "ACTIVE":
                break
            time.sleep(0.05)
        assert index["IndexStatus"] == "ACTIVE"
        assert len(_wait_gsi(ddb, "by_g", "all", 41)) == 41
    finally:
        server.stop()
