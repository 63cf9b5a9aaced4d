"""The /dynastore/global-tables/ endpoints a peer calls, through the protocol of an in-process dynastore: what each
applies, and the 400 / 404 / 405 answers (never a 500) to a body that is not what it takes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.global_tables import replicas
from dynastore.global_tables.changes import ReplicatedChange
from dynastore.global_tables.peers import changes_body, drop_body, replica_set_body
from dynastore.global_tables.versions import Version

ACCOUNT = "000000000000"
HEADERS = {
    "content-type": "application/x-amz-json-1.0",
    "authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-west-2/dynamodb/aws4_request, "
    "SignedHeaders=host, Signature=ab",
    "x-amz-date": "20260101T000000Z",
}
TABLE = {
    "TableName": "things",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
}


@pytest.fixture
def west() -> Iterator[Dynastore]:
    """A server of us-west-2 (the peer the requests reach)."""
    app = Dynastore(Config(in_memory=True, region="us-west-2"))
    yield app
    app.close()


def call(app: Dynastore, operation: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    region = app.config.region  # signed for the server's region: the tables of its default namespace
    authorization = HEADERS["authorization"].replace("us-west-2", region)
    headers = {**HEADERS, "authorization": authorization, "x-amz-target": f"DynamoDB_20120810.{operation}"}
    response = app.protocol.handle("POST", headers, orjson.dumps(body))
    return response.status, orjson.loads(response.body)


def peer(app: Dynastore, endpoint: str, body: bytes, method: str = "POST") -> tuple[int, dict[str, Any]]:
    headers = {"content-type": "application/json", "host": "127.0.0.1"}
    response = app.protocol.handle(method, headers, body, f"/dynastore/global-tables/{endpoint}")
    return response.status, orjson.loads(response.body)


def change(pk: str, stamp: int, item: dict[str, Any] | None, region: str = "us-east-1") -> ReplicatedChange:
    key = {"pk": {"S": pk}}
    return ReplicatedChange(key, item, Version(stamp, region, item is None), 1_790_000_000.0)


def test_changes_are_applied_last_writer_wins_and_idempotently(west: Dynastore) -> None:
    assert call(west, "CreateTable", TABLE)[0] == 200
    newer = change("a", 200 << 16, {"pk": {"S": "a"}, "v": {"N": "2"}})
    older = change("a", 100 << 16, {"pk": {"S": "a"}, "v": {"N": "1"}})
    assert peer(west, "changes", changes_body("us-west-2", ACCOUNT, "things", [newer])) == (200, {"Applied": 1})
    assert peer(west, "changes", changes_body("us-west-2", ACCOUNT, "things", [newer])) == (200, {"Applied": 0})
    assert peer(west, "changes", changes_body("us-west-2", ACCOUNT, "things", [older])) == (200, {"Applied": 0})
    status, got = call(west, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}})
    assert (status, got["Item"]) == (200, {"pk": {"S": "a"}, "v": {"N": "2"}})
    deleted = change("a", 300 << 16, None)
    assert peer(west, "changes", changes_body("us-west-2", ACCOUNT, "things", [deleted])) == (200, {"Applied": 1})
    assert call(west, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}}) == (200, {})


def test_changes_to_an_item_a_transaction_holds_are_refused_for_now() -> None:
    app = Dynastore(Config(in_memory=True, region="us-west-2", transaction_lock_hold=float("inf")))
    try:
        assert call(app, "CreateTable", TABLE)[0] == 200
        put = {"Put": {"TableName": "things", "Item": {"pk": {"S": "a"}, "v": {"S": "transaction"}}}}
        assert call(app, "TransactWriteItems", {"TransactItems": [put]})[0] == 200
        replicated = change("a", 200 << 16, {"pk": {"S": "a"}, "v": {"S": "replicated"}})
        status, answer = peer(app, "changes", changes_body("us-west-2", ACCOUNT, "things", [replicated]))
        assert status == 409
        assert answer == {"error": "a transaction holds the item {'pk': {'S': 'a'}} of things"}
        status, got = call(app, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}})
        assert (status, got["Item"]) == (200, {"pk": {"S": "a"}, "v": {"S": "transaction"}})
    finally:
        app.close()


def test_a_change_the_replica_cannot_take_is_refused_by_its_position_and_nothing_is_applied(west: Dynastore) -> None:
    assert call(west, "CreateTable", TABLE)[0] == 200
    fine = change("a", 100 << 16, {"pk": {"S": "a"}})
    misfit = ReplicatedChange({"pk": {"N": "1"}}, None, Version(101 << 16, "us-east-1", True), 0)
    status, answer = peer(west, "changes", changes_body("us-west-2", ACCOUNT, "things", [fine, misfit]))
    assert (status, answer) == (
        422,
        {
            "error": "a replicated change does not fit the replica: The provided key element does not match the schema",
            "Refused": 1,
            "Final": True,
        },
    )
    assert call(west, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}}) == (200, {})


def test_a_replica_set_definition_creates_the_replica_and_drop_deletes_it(west: Dynastore) -> None:
    east = Dynastore(Config(in_memory=True, region="us-east-1"))
    try:
        assert call(east, "CreateTable", TABLE)[0] == 200
        definition = replicas.replica_set_definition(east.engine, east.engine.catalog.get("things"))
        body = replica_set_body("us-west-2", ACCOUNT, orjson.loads(orjson.dumps(definition)))
        assert peer(west, "replica-set", body) == (200, {})
        assert peer(west, "replica-set", body) == (200, {})  # idempotent
        status, described = call(west, "DescribeTable", {"TableName": "things"})
        assert (status, described["Table"]["TableStatus"]) == (200, "ACTIVE")
        assert peer(west, "drop", drop_body("us-west-2", ACCOUNT, "things")) == (200, {})
        assert peer(west, "drop", drop_body("us-west-2", ACCOUNT, "things")) == (200, {})  # nothing left to drop
    finally:
        east.close()


def wrong(body: dict[str, Any]) -> bytes:
    return orjson.dumps({"Region": "us-west-2", "Account": ACCOUNT, "TableName": "things", **body})


MALFORMED: list[tuple[str, bytes, int, str]] = [
    ("changes", b"{not json", 400, "the body must be a JSON object"),
    ("changes", b"[]", 400, "the body must be a JSON object"),
    (
        "changes",
        wrong({"Region": "eu-west-1"}),
        400,
        "this server serves region us-west-2, not eu-west-1: the sending server's --peer for eu-west-1 names the "
        "wrong server",
    ),
    ("changes", wrong({"Region": 7}), 400, "Region must be a string"),
    ("changes", wrong({"Account": "12"}), 400, "Account must be an account id of 12 digits"),
    ("changes", wrong({"TableName": "x"}), 400, "TableName must be a table name"),
    ("changes", wrong({"Changes": {}}), 400, "Changes must be a list of changes"),
    (
        "changes",
        wrong({"Changes": [{"Key": {"pk": {"S": "a"}}}]}),
        400,
        "Changes is not a batch of replicated changes: missing member 'Item'",
    ),
    (
        "changes",
        wrong({"Changes": [{"Key": [], "Item": None, "Stamp": 1, "Region": "us-east-1", "Deleted": True, "At": 0}]}),
        400,
        "Changes is not a batch of replicated changes: a replicated change's Key and Item are maps of attribute values",
    ),
    (
        "changes",
        wrong(
            {
                "Changes": [
                    {
                        "Key": {"pk": {"S": "a"}},
                        "Item": {"pk": {"S": "a"}, "v": {"Q": "1"}},
                        "Stamp": 1,
                        "Region": "us-east-1",
                        "Deleted": False,
                        "At": 0,
                    }  # fmt: skip
                ]
            }
        ),
        422,
        "a replicated change does not fit the replica: 1 validation error detected: Supplied AttributeValue is "
        "empty, must contain exactly one of the supported datatypes",
    ),
    (
        "changes",
        wrong(
            {
                "Changes": [
                    {
                        "Key": {"id": {"S": "a"}},
                        "Item": None,
                        "Stamp": 1,
                        "Region": "us-east-1",
                        "Deleted": True,
                        "At": 0,
                    }  # fmt: skip
                ]
            }
        ),
        422,
        "a replicated change does not fit the replica: The provided key element does not match the schema",
    ),
    (
        "changes",
        wrong({"TableName": "missing", "Changes": []}),
        404,
        "ResourceNotFoundException: Requested resource not found: Table: missing not found",
    ),
    ("replica-set", wrong({"Definition": None}), 400, "Definition must be an object"),
    ("replica-set", wrong({"Definition": {"TableName": 5}}), 400, "TableName must be a table name"),
    (
        "replica-set",
        wrong({"Definition": {"TableName": "other", "Create": True, "Table": {"keys": 1}}}),
        400,
        "Definition is not a replica set's definition: missing member 'stream'",
    ),
    ("nothing", wrong({}), 404, "unknown global tables endpoint 'nothing' (changes, replica-set or drop)"),
]


@pytest.mark.parametrize(("endpoint", "body", "status", "error"), MALFORMED)
def test_a_body_that_is_not_what_the_endpoint_takes_is_refused(
    west: Dynastore, endpoint: str, body: bytes, status: int, error: str
) -> None:
    assert call(west, "CreateTable", TABLE)[0] == 200
    answered, answer = peer(west, endpoint, body)
    assert (answered, answer["error"]) == (status, error)


def test_only_post_is_served(west: Dynastore) -> None:
    status, answer = peer(west, "changes", b"", method="GET")
    assert (status, answer) == (
        405,
        {"error": "GET is not supported here: a peer POSTs to /dynastore/global-tables/..."},
    )
