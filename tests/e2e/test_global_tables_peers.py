"""Global tables across servers: two and three `dynastore serve` processes on 127.0.0.1, each serving its region and
the peer of the others (docs/global-tables-peers.md). A replica created from one server appears in the other's
region, writes on any server reach the others, a server stopped and started again catches up, a region removed
stops cleanly, and a peer request that is unsigned or malformed is refused with its error."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest
from botocore.exceptions import ClientError

from dynastore.security.sigv4 import sign_headers
from tests.e2e.peer_servers import PeerServers

EAST, WEST, EU = "us-east-1", "us-west-2", "eu-west-1"
TABLE = "Music"
WAIT = 60.0  # seconds a replication step may take on a busy machine before the test fails

T = TypeVar("T")


def eventually(check: Callable[[], T], what: str, seconds: float = WAIT) -> T:
    """``check()``'s first truthy answer; fails naming ``what`` if none comes in ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        answer = check()
        if answer:
            return answer
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds:g} s: {what} (last: {answer!r})")
        time.sleep(0.1)


def create_table(ddb: Any) -> None:
    ddb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    eventually(lambda: ddb.describe_table(TableName=TABLE)["Table"]["TableStatus"] == "ACTIVE", "table ACTIVE")


def replicas(ddb: Any) -> dict[str, str]:
    """Region -> ReplicaStatus of the table's Replicas as DescribeTable lists them."""
    table = ddb.describe_table(TableName=TABLE)["Table"]
    return {r["RegionName"]: r["ReplicaStatus"] for r in table.get("Replicas", [])}


def add_replica(ddb: Any, region: str) -> None:
    ddb.update_table(TableName=TABLE, ReplicaUpdates=[{"Create": {"RegionName": region}}])
    eventually(lambda: replicas(ddb).get(region) == "ACTIVE", f"the replica in {region} ACTIVE")


def item(ddb: Any, pk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = ddb.get_item(TableName=TABLE, Key={"pk": {"S": pk}}).get("Item")
    return found


def put(ddb: Any, pk: str, value: str) -> None:
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": pk}, "v": {"S": value}})


def holds(ddb: Any, pk: str, value: str) -> Callable[[], bool]:
    return lambda: (item(ddb, pk) or {}).get("v") == {"S": value}


def lacks(ddb: Any, pk: str) -> Callable[[], bool]:
    return lambda: item(ddb, pk) is None


def lists_two(ddb: Any) -> Callable[[], bool]:
    return lambda: len(replicas(ddb)) == 2


def table_gone(ddb: Any) -> bool:
    try:
        ddb.describe_table(TableName=TABLE)
    except ClientError as e:
        return bool(e.response["Error"]["Code"] == "ResourceNotFoundException")
    return False


# ---------------------------------------------------------------- two servers


@pytest.fixture(scope="module")
def two() -> Iterator[PeerServers]:
    """Two servers without authentication; the tests below run in order on them (the replica they create first is
    written to, restarted, then removed)."""
    with PeerServers([EAST, WEST]) as servers:
        yield servers


def test_a_replica_created_from_one_server_is_seeded_and_listed_in_the_other(two: PeerServers) -> None:
    east, west = two.client(EAST), two.client(WEST)
    create_table(east)
    for n in range(25):  # data before the replica exists: the new replica is seeded with it
        put(east, f"seed-{n}", "before")
    add_replica(east, WEST)
    described = west.describe_table(TableName=TABLE)["Table"]
    assert [r["RegionName"] for r in described["Replicas"]] == [EAST]
    assert described["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    for n in range(25):
        eventually(holds(west, f"seed-{n}", "before"), f"seed-{n} in {WEST}")


def test_writes_on_either_server_reach_the_other(two: PeerServers) -> None:
    east, west = two.client(EAST), two.client(WEST)
    put(east, "from-east", "1")
    put(west, "from-west", "2")
    eventually(holds(west, "from-east", "1"), f"the write of {EAST} in {WEST}")
    eventually(holds(east, "from-west", "2"), f"the write of {WEST} in {EAST}")
    west.delete_item(TableName=TABLE, Key={"pk": {"S": "from-east"}})
    eventually(lacks(east, "from-east"), f"the delete of {WEST} in {EAST}")


def test_a_server_stopped_and_started_again_catches_up(two: PeerServers) -> None:
    east = two.client(EAST)
    two.stop(WEST)
    for n in range(20):  # written while the peer is down: the link fails, the cursor waits
        put(east, f"missed-{n}", "while-down")
    two.start(WEST)
    west = two.client(WEST)
    for n in range(20):
        eventually(holds(west, f"missed-{n}", "while-down"), f"missed-{n} in {WEST} after its restart")
    put(west, "after-restart", "3")
    eventually(holds(east, "after-restart", "3"), f"a write of the restarted {WEST} in {EAST}")


def test_a_server_killed_after_acknowledging_writes_ships_them_when_it_is_back(two: PeerServers) -> None:
    east = two.client(EAST)
    two.stop(WEST)  # the writes cannot leave before the kill: their cursor must survive it
    for n in range(10):
        put(east, f"unshipped-{n}", "acknowledged")
    two.kill(EAST)
    two.start(WEST)
    two.start(EAST)
    west = two.client(WEST)
    for n in range(10):
        eventually(holds(west, f"unshipped-{n}", "acknowledged"), f"unshipped-{n} in {WEST} after {EAST} was killed")


def test_a_region_removed_stops_cleanly(two: PeerServers) -> None:
    east, west = two.client(EAST), two.client(WEST)
    east.update_table(TableName=TABLE, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}])
    eventually(lambda: WEST not in replicas(east), f"{WEST} off the list of {EAST}")
    eventually(lambda: table_gone(west), f"the replica in {WEST} deleted")
    put(east, "after-removal", "4")  # nothing is sent to the removed region, and nothing fails
    assert item(east, "after-removal") == {"pk": {"S": "after-removal"}, "v": {"S": "4"}}
    assert table_gone(west)


# ---------------------------------------------------------------- three servers, SigV4 between them


BOB = {"aws_access_key_id": "AKIABOBBOBBOBBOBBOB2", "aws_secret_access_key": "bob-secret-bob-secret-bob-secret-bob"}


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PeerServers]:
    """Three servers with --auth sigv4 signing to one another, and a table of us-east-1 replicated to the others;
    each also knows bob, a user who is no admin."""
    users = tmp_path_factory.mktemp("users") / "credentials.json"
    bob = {"account": "000000000000", "user_id": "AIDABOBBOBBOBBOBBOB22", "admin": False, "groups": [],
           "keys": [{"id": BOB["aws_access_key_id"], "secret": BOB["aws_secret_access_key"]}]}  # fmt: skip
    users.write_text(json.dumps({"version": 1, "users": {"bob": bob}}))
    with PeerServers([EAST, WEST, EU], "--users-file", str(users), auth=True) as servers:
        east = servers.client(EAST)
        create_table(east)
        add_replica(east, WEST)
        add_replica(east, EU)
        yield servers


def test_three_signed_servers_replicate_every_region_to_every_other(three: PeerServers) -> None:
    for region in (WEST, EU):
        eventually(lists_two(three.client(region)), f"both other regions listed in {region}")
    for writer in (EAST, WEST, EU):
        put(three.client(writer), f"from-{writer}", writer)
    for reader in (EAST, WEST, EU):
        for writer in (EAST, WEST, EU):
            eventually(holds(three.client(reader), f"from-{writer}", writer), f"the write of {writer} in {reader}")


def test_a_write_after_a_replicated_one_wins_on_every_server(three: PeerServers) -> None:
    # Each write is made once the one before it has reached every region: its server has seen the earlier stamp,
    # so its own is later whatever the clocks say, and every region ends with it. (Writes in the same instant in
    # two regions are ordered by stamp and then region name, which need not be the order of real time.)
    for n, writer in enumerate((EAST, WEST, EU, WEST, EAST)):
        put(three.client(writer), "contended", f"{n}-{writer}")
        for reader in (EAST, WEST, EU):
            eventually(holds(three.client(reader), "contended", f"{n}-{writer}"), f"write {n} in {reader}")
    three.client(WEST).delete_item(TableName=TABLE, Key={"pk": {"S": "contended"}})
    for reader in (EAST, WEST, EU):
        eventually(lacks(three.client(reader), "contended"), f"the delete in {reader}")


def test_settings_changed_on_one_server_reach_the_others(three: PeerServers) -> None:
    def ttl(region: str) -> dict[str, Any]:
        found: dict[str, Any] = three.client(region).describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
        return found

    three.client(WEST).update_time_to_live(
        TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"}
    )
    for reader in (EAST, EU):
        eventually(lambda r=reader: ttl(r).get("AttributeName") == "exp", f"time to live on in {reader}")  # type: ignore[misc]
    three.client(EU).update_time_to_live(
        TableName=TABLE, TimeToLiveSpecification={"Enabled": False, "AttributeName": "exp"}
    )
    for reader in (EAST, WEST):
        eventually(lambda r=reader: ttl(r) == {"TimeToLiveStatus": "DISABLED"}, f"time to live off in {reader}")  # type: ignore[misc]


def test_a_replicas_own_settings_changed_on_one_server_reach_its_table_and_the_others_lists(
    three: PeerServers,
) -> None:
    def table_class(region: str) -> str | None:
        table = three.client(region).describe_table(TableName=TABLE)["Table"]
        found: str | None = table.get("TableClassSummary", {}).get("TableClass")
        return found

    def listed_class(reader: str, region: str) -> str | None:
        table = three.client(reader).describe_table(TableName=TABLE)["Table"]
        replica = next(r for r in table["Replicas"] if r["RegionName"] == region)
        found: str | None = replica.get("ReplicaTableClassSummary", {}).get("TableClass")
        return found

    def max_read(region: str) -> int | None:
        table = three.client(region).describe_table(TableName=TABLE)["Table"]
        found: int | None = table.get("OnDemandThroughput", {}).get("MaxReadRequestUnits")
        return found

    for setter, wanted, units in ((EAST, "STANDARD_INFREQUENT_ACCESS", 70), (EU, "STANDARD", 90)):
        update = {
            "RegionName": WEST,
            "TableClassOverride": wanted,
            "OnDemandThroughputOverride": {"MaxReadRequestUnits": units},
        }
        three.client(setter).update_table(TableName=TABLE, ReplicaUpdates=[{"Update": update}])
        eventually(lambda w=wanted: table_class(WEST) == w, f"{WEST}'s table class {wanted} set in {setter}")  # type: ignore[misc]
        eventually(lambda u=units: max_read(WEST) == u, f"{WEST}'s MaxReadRequestUnits {units} set in {setter}")  # type: ignore[misc]
        for reader in (EAST, EU):
            eventually(
                lambda r=reader, w=wanted: listed_class(r, WEST) == w,  # type: ignore[misc]
                f"{reader} listing {WEST}'s class {wanted}",
            )
        assert max_read(EAST) is None and max_read(EU) is None  # the set's maximum: none


def post(server_url: str, endpoint: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{server_url}/dynastore/global-tables/{endpoint}", data=body, method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def signed(
    three: PeerServers, endpoint: str, body: bytes, region: str, keys: dict[str, str] | None = None
) -> dict[str, str]:
    """Headers of ``body`` signed with ``keys`` (default: the servers' admin key)."""
    keys = keys or three.credentials
    assert keys is not None
    return sign_headers(
        "POST",
        f"/dynastore/global-tables/{endpoint}",
        {"Host": "localhost", "Content-Type": "application/json"},
        body,
        access_key_id=keys["aws_access_key_id"],
        secret=keys["aws_secret_access_key"],
        region=region,
        amz_date=datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
    )


def test_an_unsigned_peer_request_is_refused(three: PeerServers) -> None:
    body = json.dumps({"Region": WEST, "Account": "000000000000", "TableName": TABLE, "Changes": []}).encode()
    headers = {"Host": "localhost", "Content-Type": "application/json"}
    assert post(three.urls[WEST], "changes", body, headers) == (
        403,
        {
            "error": "this endpoint needs a request signed (SigV4) by an admin user: "
            "MissingAuthenticationTokenException: Request is missing Authentication Token"
        },
    )


def test_a_request_signed_with_another_secret_is_refused(three: PeerServers) -> None:
    body = json.dumps({"Region": WEST, "Account": "000000000000", "TableName": TABLE}).encode()
    headers = signed(three, "drop", body, WEST)
    status, answer = post(three.urls[WEST], "drop", body.replace(TABLE.encode(), b"Other"), headers)
    assert (status, answer["error"].split(": ", 2)[:2]) == (
        403,
        ["this endpoint needs a request signed (SigV4) by an admin user", "InvalidSignatureException"],
    )
    assert table_gone(three.client(WEST)) is False


def test_a_request_signed_by_a_user_who_is_no_admin_is_refused(three: PeerServers) -> None:
    body = json.dumps({"Region": WEST, "Account": "000000000000", "TableName": TABLE}).encode()
    assert post(three.urls[WEST], "drop", body, signed(three, "drop", body, WEST, BOB)) == (
        403,
        {"error": "arn:aws:iam::000000000000:user/bob is not an admin user (dynastore users add NAME --admin)"},
    )
    assert table_gone(three.client(WEST)) is False


@pytest.mark.parametrize(
    ("endpoint", "body", "error"),
    [
        ("changes", b"{", "the body must be a JSON object"),
        (
            "changes",
            json.dumps({"Region": EU, "Account": "000000000000", "TableName": TABLE, "Changes": []}).encode(),
            f"this server serves region {WEST}, not {EU}: the sending server's --peer for {EU} names the wrong server",
        ),
        (
            "changes",
            json.dumps({"Region": WEST, "Account": "000000000000", "TableName": TABLE, "Changes": [{}]}).encode(),
            "Changes is not a batch of replicated changes: missing member 'Key'",
        ),
        (
            "drop",
            json.dumps({"Region": WEST, "Account": "abc", "TableName": TABLE}).encode(),
            "Account must be an account id of 12 digits",
        ),  # fmt: skip
    ],
)
def test_a_malformed_signed_peer_request_is_a_400(three: PeerServers, endpoint: str, body: bytes, error: str) -> None:
    assert post(three.urls[WEST], endpoint, body, signed(three, endpoint, body, WEST)) == (400, {"error": error})
