"""Global tables end to end when a region's own work meets replication: a replicated write waits for a transaction
of the receiving region that holds its item (one server serves us-east-1 and us-west-2; transactions keep their
items locked 30 seconds of the manual clock after their commit, --transaction-lock-hold, so a test can meet them);
a change the receiving region refuses is skipped after a bounded number of attempts (two peer servers)."""

from __future__ import annotations

import re
import urllib.request
from typing import Any

import pytest

from tests.e2e.conftest import unique_name
from tests.e2e.peer_servers import PeerServers
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_global_tables_replication import (
    EAST,
    STREAM,
    WEST,
    active,
    client,
    create_global_table,
    eventually,
    item,
)

LOCK_HOLD = 30.0

server = server_fixture("--manual-clock", "--region", EAST, "--transaction-lock-hold", str(LOCK_HOLD))


@pytest.fixture
def regions(server: ServerProcess) -> tuple[Any, Any]:
    return client(server, EAST), client(server, WEST)


def metric(server: ServerProcess, name: str, table: str, source: str, target: str) -> float | None:
    """The sample of ``name`` for the table's (source, target) pair in /metrics, None when it has none."""
    request = urllib.request.Request(server.url + "/metrics", headers={"Host": "localhost"})
    with urllib.request.urlopen(request, timeout=30) as response:
        page = response.read().decode()
    labels = f'table="{table}",source_region="{source}",target_region="{target}"'
    found = re.search(rf"^{name}\{{{re.escape(labels)}\}} (\S+)$", page, re.MULTILINE)
    return None if found is None else float(found.group(1))


class TestTransactions:
    def test_a_replicated_write_waits_for_the_transaction_holding_its_item(
        self, server: ServerProcess, regions: tuple[Any, Any]
    ) -> None:
        east, west = regions
        table = create_global_table(east, west)
        key = {"pk": {"S": "x"}}
        west.transact_write_items(
            TransactItems=[{"Put": {"TableName": table, "Item": {**key, "v": {"S": "transaction"}}}}]
        )
        east.put_item(TableName=table, Item={**key, "v": {"S": "east"}})

        # us-east-1's write reached us-west-2 and waits there (still pending) while the transaction holds the item.
        pending = eventually(
            lambda: metric(server, "dynastore_pending_replication_count", table, EAST, WEST),
            lambda value: value is not None and value >= 1,
        )
        assert pending is not None and pending >= 1
        assert item(west, table, "x") == {**key, "v": {"S": "transaction"}}

        server.advance(LOCK_HOLD + 1)  # the transaction's commit is final: its items are free

        # The later write (us-east-1's) wins in both regions.
        assert eventually(lambda: item(west, table, "x"), lambda found: found == {**key, "v": {"S": "east"}}) == {
            **key,
            "v": {"S": "east"},
        }
        assert eventually(lambda: item(east, table, "x"), lambda found: found == {**key, "v": {"S": "east"}}) == {
            **key,
            "v": {"S": "east"},
        }


class TestRefusals:
    def test_a_change_the_replica_refuses_is_skipped_and_counted_and_later_changes_flow(self) -> None:
        # us-west-2's server allows item collections of 1,000 bytes only: an item of 2,000 bytes that us-east-1
        # took is refused there for good (as an item collection over 10 GB in one region would be).
        servers = PeerServers([EAST, WEST])  # started one by one: us-west-2 with a setting of its own
        try:
            servers.start(EAST)
            servers.env["DYNASTORE_ITEM_COLLECTION_SIZE_LIMIT"] = "1000"
            servers.start(WEST)
            east, west = servers.client(EAST), servers.client(WEST)
            name = unique_name("gt")
            east.create_table(
                TableName=name,
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                AttributeDefinitions=[
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                    {"AttributeName": "l", "AttributeType": "S"},
                ],
                LocalSecondaryIndexes=[
                    {
                        "IndexName": "by_l",
                        "KeySchema": [
                            {"AttributeName": "pk", "KeyType": "HASH"},
                            {"AttributeName": "l", "KeyType": "RANGE"},
                        ],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                ],
                BillingMode="PAY_PER_REQUEST",
                StreamSpecification=STREAM,
            )
            east.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": WEST}}])
            assert active(east, name) == [{"RegionName": WEST, "ReplicaStatus": "ACTIVE"}]

            big = {"pk": {"S": "c"}, "sk": {"S": "1"}, "l": {"S": "x"}, "data": {"S": "z" * 2000}}
            small = {"pk": {"S": "d"}, "sk": {"S": "1"}, "l": {"S": "y"}}
            east.put_item(TableName=name, Item=big)
            east.put_item(TableName=name, Item=small)

            def get(key: dict[str, Any]) -> dict[str, Any] | None:
                found: dict[str, Any] | None = west.get_item(TableName=name, Key=key, ConsistentRead=True).get("Item")
                return found

            assert eventually(lambda: get({"pk": small["pk"], "sk": small["sk"]}), lambda f: f == small) == small
            assert get({"pk": big["pk"], "sk": big["sk"]}) is None
            skipped = metric(servers[EAST], "dynastore_replication_skipped_changes_total", name, EAST, WEST)
            assert skipped == 1.0
            assert metric(servers[EAST], "dynastore_pending_replication_count", name, EAST, WEST) == 0.0
        finally:
            servers.close()
