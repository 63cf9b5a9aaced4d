"""app.py: one dynastore built from a Config, driven without a socket."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.engine.changelog import IMAGES, NOT_FOLLOWED, ChangeRecord
from dynastore.model.table_schema import TableDef
from dynastore.storage.itemcodec import decode_item
from dynastore.storage.keyspace import consumer_record_key
from dynastore.storage.memory_kv import MemoryKV
from dynastore.triggers.spec import TriggerSpec

HEADERS = {
    "content-type": "application/x-amz-json-1.0",
    "authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host, Signature=ab",
    "x-amz-date": "20260101T000000Z",
}


def call(app: Dynastore, operation: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    headers = {**HEADERS, "x-amz-target": f"DynamoDB_20120810.{operation}"}
    response = app.protocol.handle("POST", headers, orjson.dumps(body))
    return response.status, orjson.loads(response.body)


TABLE = {
    "TableName": "things",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "g", "AttributeType": "S"},
    ],
    "BillingMode": "PAY_PER_REQUEST",
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
}


def test_every_component_is_a_field_of_its_own_dynastore() -> None:
    one, two = Dynastore(Config(in_memory=True)), Dynastore(Config(in_memory=True))
    try:
        assert isinstance(one.kv, MemoryKV)
        assert one.engine.kv is one.kv and one.engine.catalog is one.catalog
        for name in ("capacity", "indexes", "locks", "expressions", "key_templates"):
            assert getattr(one.engine, name) is not getattr(two.engine, name), name
        assert call(one, "CreateTable", TABLE)[0] == 200
        assert call(two, "ListTables", {}) == (200, {"TableNames": []})
        put = {"TableName": "things", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_not_exists(pk)"}
        assert call(one, "PutItem", put) == (200, {})
        assert one.engine.expressions.misses == 1 and two.engine.expressions.misses == 0
    finally:
        one.close()
        two.close()


def test_started_on_a_loop_it_propagates_gsi_writes_and_stops_cleanly(tmp_path: Path) -> None:
    app = Dynastore(Config(data_dir=tmp_path / "data"))
    assert call(app, "CreateTable", TABLE)[0] == 200

    async def run() -> dict[str, Any]:
        app.start(asyncio.get_running_loop())
        assert call(app, "PutItem", {"TableName": "things", "Item": {"pk": {"S": "a"}, "g": {"S": "x"}}})[0] == 200
        for _ in range(200):  # the propagation task runs between loop turns; no wall-clock wait is asserted
            if app.engine.propagation.applied:
                break
            await asyncio.sleep(0.005)
        query = {"TableName": "things", "IndexName": "by_g", "KeyConditionExpression": "g = :g"}
        status, body = call(app, "Query", {**query, "ExpressionAttributeValues": {":g": {"S": "x"}}})
        assert status == 200
        await app.stop()
        return body

    body = asyncio.run(run())
    assert body["Items"] == [{"pk": {"S": "a"}, "g": {"S": "x"}}]
    assert app.committer is None  # drained and closed; reopening below shows the store was closed too
    again = Dynastore(Config(data_dir=tmp_path / "data"))  # the store was closed: it opens again
    try:
        status, got = call(again, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}})
        assert (status, got) == (200, {"Item": {"pk": {"S": "a"}, "g": {"S": "x"}}})
    finally:
        again.close()


def test_serving_on_a_port_reaches_describe_endpoints() -> None:
    app = Dynastore(Config(in_memory=True, port=0))
    try:
        app.serving_on(41234)
        status, body = call(app, "DescribeEndpoints", {})
        assert status == 200
        assert body["Endpoints"][0]["Address"].endswith(":41234")
    finally:
        app.close()


class _Follower:
    """A change log consumer a host registers (engine/changelog.py ``Consumer``): every change of one table, with
    images, held until it has read them."""

    name = "follower"
    checkpoint_key = consumer_record_key(name)

    def __init__(self) -> None:
        self.position = -1

    def need(self, table: TableDef) -> int:
        return IMAGES if table.name == "plain" else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        return record.seq > self.position


def test_consumers_are_registered_by_the_composition_root_and_a_host_adds_its_own() -> None:
    app = Dynastore(Config(in_memory=True))
    try:
        app.add_trigger(TriggerSpec(name="audit", table="things", handler=lambda event: None))
        follower = _Follower()
        app.add_consumer(follower)
        log = app.engine.changelog
        assert [c.name for c in log.consumers] == [
            "gsi-propagation",
            "streams",
            "point-in-time",
            "global-tables",
            "trigger:audit",
            "follower",
        ]
        plain = {
            "TableName": "plain",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        }
        assert call(app, "CreateTable", plain)[0] == 200
        assert call(app, "PutItem", {"TableName": "plain", "Item": {"pk": {"S": "a"}, "v": {"N": "1"}}})[0] == 200
        (record,) = log.read(follower.position, 10)
        assert record.event_name == "INSERT" and record.new is not None
        assert decode_item(record.new) == {"pk": {"S": "a"}, "v": {"N": "1"}}
    finally:
        app.close()
