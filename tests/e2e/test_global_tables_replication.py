"""Global tables end to end on one server: a table of us-east-1 gets a replica in us-west-2 (another region of the
same server) through UpdateTable's ReplicaUpdates, and the two stay in sync (multi-region eventual consistency,
last writer wins). The clock is manual, so time-to-live expiry happens when a test says so."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import boto3
import pytest

from tests.e2e.conftest import BOTO_CONFIG, error_of, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.stream_reader import all_shards, read_shard

EAST, WEST = "us-east-1", "us-west-2"
STREAM = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
SETTLE_SECONDS = 20  # how long a wait for replication gives up after (it takes milliseconds when it works)

T = TypeVar("T")

server = server_fixture("--manual-clock", "--region", EAST)


def client(server: ServerProcess, region: str, service: str = "dynamodb") -> Any:
    return boto3.client(
        service,
        endpoint_url=server.url,
        region_name=region,
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=BOTO_CONFIG,
    )


def eventually(read: Callable[[], T], wanted: Callable[[T], bool]) -> T:
    """``read()`` once ``wanted`` holds of it, or as it is when SETTLE_SECONDS have passed."""
    deadline = time.monotonic() + SETTLE_SECONDS
    value = read()
    while not wanted(value) and time.monotonic() < deadline:
        time.sleep(0.02)
        value = read()
    return value


def item(ddb: Any, table: str, pk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = ddb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True).get("Item")
    return found


def replicated(ddb: Any, table: str, pk: str, expected: dict[str, Any] | None) -> dict[str, Any] | None:
    return eventually(lambda: item(ddb, table, pk), lambda found: found == expected)


def replicas(ddb: Any, table: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ddb.describe_table(TableName=table)["Table"].get("Replicas", [])
    return found


def active(ddb: Any, table: str) -> list[dict[str, Any]]:
    """The table's Replicas once every one is ACTIVE and the table is."""

    def read() -> tuple[str, list[dict[str, Any]]]:
        description = ddb.describe_table(TableName=table)["Table"]
        return description["TableStatus"], description.get("Replicas", [])

    status, found = eventually(read, lambda s: s[0] == "ACTIVE" and all(r["ReplicaStatus"] == "ACTIVE" for r in s[1]))
    assert status == "ACTIVE"
    return found


def create_global_table(east: Any, west: Any, seed: int = 0) -> str:
    name = unique_name("gt")
    east.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification=STREAM,
    )
    for n in range(seed):
        east.put_item(TableName=name, Item={"pk": {"S": f"seed{n}"}, "n": {"N": str(n)}})
    east.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": WEST}}])
    assert active(east, name) == [{"RegionName": WEST, "ReplicaStatus": "ACTIVE"}]
    return name


@pytest.fixture
def regions(server: ServerProcess) -> tuple[Any, Any]:
    return client(server, EAST), client(server, WEST)


@pytest.fixture
def table(regions: tuple[Any, Any]) -> Iterator[str]:
    east, west = regions
    name = create_global_table(east, west)
    yield name
    for ddb in (east, west):
        if ddb.list_tables()["TableNames"].count(name):
            east.update_table(TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}])
            eventually(lambda: west.list_tables()["TableNames"], lambda names: name not in names)
            east.delete_table(TableName=name)
            break


class TestReplicaSet:
    def test_adding_a_replica_creates_the_table_in_the_region_and_seeds_it(self, regions: tuple[Any, Any]) -> None:
        east, west = regions
        name = unique_name("gt")
        east.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification=STREAM,
        )
        for n in range(30):
            east.put_item(TableName=name, Item={"pk": {"S": f"seed{n}"}, "n": {"N": str(n)}})
        east.delete_item(TableName=name, Key={"pk": {"S": "seed0"}})

        update = [{"Create": {"RegionName": WEST}}]
        answer = east.update_table(TableName=name, ReplicaUpdates=update)["TableDescription"]

        assert answer["TableStatus"] == "UPDATING"
        assert answer["GlobalTableVersion"] == "2019.11.21"
        assert [(r["RegionName"], r["ReplicaStatus"]) for r in answer["Replicas"]] == [(WEST, "CREATING")]
        assert active(east, name) == [{"RegionName": WEST, "ReplicaStatus": "ACTIVE"}]
        described = west.describe_table(TableName=name)["Table"]
        assert described["TableArn"] == f"arn:aws:dynamodb:{WEST}:000000000000:table/{name}"
        assert described["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
        assert described["StreamSpecification"] == STREAM
        assert described["Replicas"] == [{"RegionName": EAST, "ReplicaStatus": "ACTIVE"}]
        seeded = west.scan(TableName=name, ConsistentRead=True)["Items"]
        assert sorted(int(i["n"]["N"]) for i in seeded) == list(range(1, 30))

    def test_removing_the_replica_deletes_its_table(self, regions: tuple[Any, Any]) -> None:
        east, west = regions
        name = create_global_table(east, west)

        update = [{"Delete": {"RegionName": WEST}}]
        answer = east.update_table(TableName=name, ReplicaUpdates=update)["TableDescription"]

        assert [(r["RegionName"], r["ReplicaStatus"]) for r in answer["Replicas"]] == [(WEST, "DELETING")]
        assert eventually(lambda: replicas(east, name), lambda found: found == []) == []
        assert eventually(lambda: name in west.list_tables()["TableNames"], lambda listed: not listed) is False
        assert error_of(lambda: west.describe_table(TableName=name)) == (
            "ResourceNotFoundException",
            f"Requested resource not found: Table: {name} not found",
        )
        east.put_item(TableName=name, Item={"pk": {"S": "after"}})  # the table itself goes on, alone
        east.delete_table(TableName=name)


class TestReplication:
    def test_writes_in_either_region_appear_in_the_other(self, regions: tuple[Any, Any], table: str) -> None:
        east, west = regions
        east.put_item(TableName=table, Item={"pk": {"S": "a"}, "from": {"S": "east"}})
        assert replicated(west, table, "a", {"pk": {"S": "a"}, "from": {"S": "east"}}) is not None

        west.update_item(
            TableName=table,
            Key={"pk": {"S": "a"}},
            UpdateExpression="SET #f = :w, extra = :x",
            ExpressionAttributeNames={"#f": "from"},
            ExpressionAttributeValues={":w": {"S": "west"}, ":x": {"N": "1"}},
        )
        expected = {"pk": {"S": "a"}, "from": {"S": "west"}, "extra": {"N": "1"}}
        assert replicated(east, table, "a", expected) == expected

        east.delete_item(TableName=table, Key={"pk": {"S": "a"}})
        assert replicated(west, table, "a", None) is None

    def test_concurrent_writes_to_one_item_converge_to_the_same_value(
        self, regions: tuple[Any, Any], table: str
    ) -> None:
        east, west = regions
        for round_ in range(10):
            east.put_item(TableName=table, Item={"pk": {"S": "x"}, "v": {"S": f"east{round_}"}})
            west.put_item(TableName=table, Item={"pk": {"S": "x"}, "v": {"S": f"west{round_}"}})

        def both() -> tuple[Any, Any]:
            return item(east, table, "x"), item(west, table, "x")

        in_east, in_west = eventually(both, lambda pair: pair[0] == pair[1])
        assert in_east == in_west
        assert in_east is not None and in_east["v"]["S"] in ("east9", "west9")

    def test_a_transaction_s_items_replicate(self, regions: tuple[Any, Any], table: str) -> None:
        east, west = regions
        east.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": {"pk": {"S": "t1"}, "v": {"N": "1"}}}},
                {"Put": {"TableName": table, "Item": {"pk": {"S": "t2"}, "v": {"N": "2"}}}},
            ]
        )
        assert replicated(west, table, "t1", {"pk": {"S": "t1"}, "v": {"N": "1"}}) is not None
        assert replicated(west, table, "t2", {"pk": {"S": "t2"}, "v": {"N": "2"}}) is not None

    def test_the_replica_s_stream_shows_the_replicated_writes(
        self, server: ServerProcess, regions: tuple[Any, Any], table: str
    ) -> None:
        east, west = regions
        # One change at a time: a replica is sent an item's newest state, so changes made back to back may reach it
        # as one.
        east.put_item(TableName=table, Item={"pk": {"S": "s1"}, "v": {"N": "1"}})
        assert replicated(west, table, "s1", {"pk": {"S": "s1"}, "v": {"N": "1"}}) is not None
        east.put_item(TableName=table, Item={"pk": {"S": "s1"}, "v": {"N": "2"}})
        assert replicated(west, table, "s1", {"pk": {"S": "s1"}, "v": {"N": "2"}}) is not None
        east.delete_item(TableName=table, Key={"pk": {"S": "s1"}})
        assert replicated(west, table, "s1", None) is None
        streams = client(server, WEST, "dynamodbstreams")
        arn = west.describe_table(TableName=table)["Table"]["LatestStreamArn"]

        def events() -> list[tuple[str, str]]:
            records = [r for s in all_shards(streams, arn) for r in read_shard(streams, arn, s["ShardId"], None)]
            return [(r["eventName"], r["awsRegion"]) for r in records if r["dynamodb"]["Keys"] == {"pk": {"S": "s1"}}]

        expected = [("INSERT", WEST), ("MODIFY", WEST), ("REMOVE", WEST)]
        assert eventually(events, lambda found: len(found) >= 3) == expected

    def test_time_to_live_deletions_replicate(
        self, server: ServerProcess, regions: tuple[Any, Any], table: str
    ) -> None:
        east, west = regions
        # Time to live is turned on in us-east-1 after the replica was made: the setting reaches us-west-2 too.
        east.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
        expires = {"N": str(int(server.now()) + 60)}
        east.put_item(TableName=table, Item={"pk": {"S": "ttl"}, "exp": expires})
        assert replicated(west, table, "ttl", {"pk": {"S": "ttl"}, "exp": expires}) is not None
        ttl = eventually(
            lambda: west.describe_time_to_live(TableName=table)["TimeToLiveDescription"],
            lambda found: found.get("TimeToLiveStatus") == "ENABLED",
        )
        assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}

        server.advance(120)

        assert replicated(east, table, "ttl", None) is None
        assert replicated(west, table, "ttl", None) is None


def test_a_replica_needs_a_stream_of_new_and_old_images(regions: tuple[Any, Any]) -> None:
    east, _ = regions
    name = unique_name("gt")
    east.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        assert error_of(
            lambda: east.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": WEST}}])
        ) == (
            "ValidationException",
            f"Table {name} must have DynamoDB Streams enabled with StreamViewType NEW_AND_OLD_IMAGES to add a replica",
        )
        assert "Replicas" not in east.describe_table(TableName=name)["Table"]
    finally:
        east.delete_table(TableName=name)


def test_deleting_a_replica_table_takes_it_off_the_other_region_s_list(regions: tuple[Any, Any]) -> None:
    east, west = regions
    name = create_global_table(east, west, seed=3)
    west.delete_table(TableName=name)
    assert eventually(lambda: replicas(east, name), lambda found: found == []) == []
    assert len(east.scan(TableName=name)["Items"]) == 3
    east.delete_table(TableName=name)
