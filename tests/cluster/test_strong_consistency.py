"""Multi-Region strong consistency across servers (docs/global-tables.md "Multi-Region strong consistency (MRSC)"):
three dynastore servers, each serving its region and a peer of the others, committing the writes of an MRSC table
to a strong log kept by three etcd members (``--strong-etcd``). A write in any region is read strongly at once in
the others, followed by their eventually consistent reads soon after; concurrent conditional increments from
two regions count exactly (each refused one is a failed condition or a ReplicatedWriteConflictException); a
region without an etcd majority refuses writes with a 503 and writes again once the majority is back; a server
killed with kill -9 catches up from the log when it starts again."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.cluster.node_fixtures import EtcdCluster, require_etcd, wait_for
from tests.e2e.conftest import error_of
from tests.e2e.peer_servers import PeerServers

REGIONS = ("us-east-1", "us-east-2", "us-west-2")
TABLE = "strong_items"
CONFLICT = "One or more items in the request are being modified by a request in another Region"
LOG_UNAVAILABLE = "The table's strong log cannot be reached from this region right now: the request was not carried out"


class Deployment:
    def __init__(self, etcd: EtcdCluster, servers: PeerServers) -> None:
        self.etcd = etcd
        self.servers = servers

    def client(self, region: str) -> Any:
        return self.servers.client(region)


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    require_etcd()
    with tempfile.TemporaryDirectory(prefix="dynastore-strong-") as directory:
        etcd = EtcdCluster(Path(directory) / "etcd", 3)
        try:
            etcd.wait_healthy()
            with PeerServers(REGIONS, "--strong-etcd", etcd.spec, data_root=Path(directory) / "servers") as servers:
                deployment = Deployment(etcd, servers)
                _create_mrsc_table(deployment.client("us-east-1"))
                for region in REGIONS:
                    wait_for(f"the MRSC table in {region}", partial(_settled_in, deployment, region))
                yield deployment
        finally:
            etcd.stop()


def _create_mrsc_table(ddb: Any) -> None:
    ddb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    wait_for("the table", lambda: ddb.describe_table(TableName=TABLE)["Table"]["TableStatus"] == "ACTIVE")
    ddb.update_table(
        TableName=TABLE,
        ReplicaUpdates=[{"Create": {"RegionName": "us-east-2"}}, {"Create": {"RegionName": "us-west-2"}}],
        MultiRegionConsistency="STRONG",
    )


def _settled(ddb: Any) -> bool:
    try:
        table = ddb.describe_table(TableName=TABLE)["Table"]
    except ClientError:
        return False
    replicas = table.get("Replicas", [])
    return bool(
        table["TableStatus"] == "ACTIVE"
        and table.get("MultiRegionConsistency") == "STRONG"
        and len(replicas) == 2
        and all(r["ReplicaStatus"] == "ACTIVE" for r in replicas)
    )


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


def strongly_read(ddb: Any, pk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = ddb.get_item(TableName=TABLE, Key=key(pk), ConsistentRead=True).get("Item")
    return found


def test_a_write_is_read_strongly_at_once_in_every_other_region(deployment: Deployment) -> None:
    for i in range(9):
        writer = deployment.client(REGIONS[i % 3])
        writer.put_item(TableName=TABLE, Item={**key(f"w{i}"), "v": {"N": str(i)}})
        for reader in REGIONS:
            assert strongly_read(deployment.client(reader), f"w{i}") == {**key(f"w{i}"), "v": {"N": str(i)}}


def test_eventually_consistent_reads_follow_the_log(deployment: Deployment) -> None:
    deployment.client("us-west-2").put_item(TableName=TABLE, Item=key("follow"))
    for region in REGIONS:
        ddb = deployment.client(region)
        wait_for(f"the write in {region}", partial(_eventually_read, ddb, "follow"))


def test_concurrent_conditional_increments_from_two_regions_count_exactly(deployment: Deployment) -> None:
    deployment.client("us-east-1").put_item(TableName=TABLE, Item={**key("counter"), "n": {"N": "0"}})
    succeeded: list[int] = []
    refused: list[tuple[str, str]] = []

    def increment(region: str) -> None:
        ddb = deployment.servers.client(region)
        for _ in range(15):
            seen = int(strongly_read(ddb, "counter")["n"]["N"])  # type: ignore[index]
            try:
                ddb.update_item(
                    TableName=TABLE,
                    Key=key("counter"),
                    UpdateExpression="SET n = :next",
                    ConditionExpression="n = :seen",
                    ExpressionAttributeValues={":seen": {"N": str(seen)}, ":next": {"N": str(seen + 1)}},
                )
                succeeded.append(seen + 1)
            except ClientError as e:
                refused.append((e.response["Error"]["Code"], e.response["Error"]["Message"]))

    threads = [threading.Thread(target=increment, args=(region,)) for region in ("us-east-2", "us-west-2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Every acknowledged increment counted once: the values written are distinct and the counter holds their count.
    assert sorted(succeeded) == list(range(1, len(succeeded) + 1))
    for region in REGIONS:
        assert strongly_read(deployment.client(region), "counter") == {
            **key("counter"),
            "n": {"N": str(len(succeeded))},
        }
    allowed = {("ConditionalCheckFailedException", "The conditional request failed"),
               ("ReplicatedWriteConflictException", CONFLICT)}  # fmt: skip
    assert set(refused) <= allowed
    assert len(succeeded) + len(refused) == 30


def test_without_an_etcd_majority_writes_are_refused_then_resume(deployment: Deployment) -> None:
    ddb = deployment.client("us-east-2")
    stopped = deployment.etcd.members[1:]
    for member in stopped:
        member.stop()
    try:
        assert error_of(lambda: ddb.put_item(TableName=TABLE, Item=key("cut"))) == (
            "ServiceUnavailable",
            LOG_UNAVAILABLE,
        )
    finally:
        initial = ",".join(f"{m.name}={m.peer_url}" for m in deployment.etcd.members)
        for member in stopped:
            member.start(initial)
    deployment.etcd.wait_healthy()
    wait_for("writes to resume", lambda: _put_succeeds(ddb, key("after")))
    assert strongly_read(deployment.client("us-west-2"), "after") == key("after")


def test_a_server_killed_catches_up_from_the_log(deployment: Deployment) -> None:
    deployment.servers.kill("us-west-2")
    try:
        deployment.client("us-east-1").put_item(TableName=TABLE, Item=key("while-down"))
    finally:
        deployment.servers.start("us-west-2")
    ddb = deployment.client("us-west-2")
    wait_for("the restarted server", lambda: _settled(ddb))
    assert strongly_read(ddb, "while-down") == key("while-down")
    wait_for("its follower", partial(_eventually_read, ddb, "while-down"))


def _settled_in(deployment: Deployment, region: str) -> bool:
    return _settled(deployment.client(region))


def _eventually_read(ddb: Any, pk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = ddb.get_item(TableName=TABLE, Key=key(pk)).get("Item")
    return found


def _put_succeeds(ddb: Any, item: dict[str, Any]) -> bool:
    try:
        ddb.put_item(TableName=TABLE, Item=item)
    except ClientError:
        return False
    return True


def test_partiql_writes_and_strong_selects_go_through_the_log(deployment: Deployment) -> None:
    ohio, oregon = deployment.client("us-east-2"), deployment.client("us-west-2")
    ohio.execute_statement(Statement=f"INSERT INTO \"{TABLE}\" VALUE {{'pk': 'statement', 'v': 1}}")
    select = f"SELECT * FROM \"{TABLE}\" WHERE pk = 'statement'"
    assert oregon.execute_statement(Statement=select, ConsistentRead=True)["Items"] == [
        {**key("statement"), "v": {"N": "1"}}
    ]
    code, _ = error_of(
        lambda: oregon.execute_statement(Statement=f"INSERT INTO \"{TABLE}\" VALUE {{'pk': 'statement', 'v': 2}}")
    )
    assert code == "DuplicateItemException"
    answer = oregon.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": key("batched")}}]})
    assert answer["UnprocessedItems"] == {}
    assert strongly_read(ohio, "batched") == key("batched")
