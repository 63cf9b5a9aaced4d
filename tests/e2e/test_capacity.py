"""Partitions and throughput end to end: the seeds' examples, hot keys, write sharding, burst, adaptive capacity,
GSI back-pressure, report mode, Contributor Insights and `dynastore partitions`, over boto3 with retries off.

dynastore-only (extension endpoints, server options): each server here is started with a manual clock that
the tests move through POST /dynastore/clock, so nothing sleeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import pytest

from dynastore.storage import keyspace
from tests.e2e.conftest import ADMIN, Send
from tests.e2e.server_process import ServerProcess, server_fixture

PTEE_TABLE = (
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API."
)
PTEE_INDEX = (
    "The level of configured provisioned throughput for one or more global secondary indexes of the table was "
    "exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes "
    "with the UpdateTable API."
)


def partitions(server: ServerProcess, table: str) -> Any:
    return server.admin(f"/dynastore/partitions/{table}")


def spend_burst(server: ServerProcess, table: str) -> None:
    """Drop the burst credit of every partition of ``table`` (a new partition starts with 300 seconds of it), so a
    test sees the share bucket's rate from its first request."""
    server.admin(f"/dynastore/partitions/{table}", {"spend_burst": True})


def capacity_table(server: ServerProcess, read: int, write: int, **extra: Any) -> str:
    name = f"cap_{uuid.uuid4().hex[:10]}"
    server.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        **extra,
    )
    return name


def puts(server: ServerProcess, table: str, keys: list[str]) -> list[str]:
    """The error code (or "ok") of one PutItem per key."""
    out = []
    for key in keys:
        try:
            server.ddb.put_item(TableName=table, Item={"pk": {"S": key}, "v": {"S": "x" * 50}})
            out.append("ok")
        except server.ddb.exceptions.ClientError as e:
            out.append(e.response["Error"]["Code"])
    return out


# DynamoDB's partition constants, but partitions of 2,000 bytes, so size splits need little data.
seeds = server_fixture("--manual-clock", "--partition-size-limit", "2000")
# Partitions of 60 RCU / 20 WCU and a 5-second adaptive-capacity delay: hot keys with a few requests.
small = server_fixture(
    "--manual-clock", "--partition-max-rcu", "60", "--partition-max-wcu", "20", "--adaptive-delay", "5"
)


def shares(view: dict[str, Any]) -> list[tuple[float, float]]:
    return [(p["provisioned"]["read"], p["provisioned"]["write"]) for p in view["partitions"]]


def partition_hash(key: str) -> int:
    from dynastore.storage import keycodec

    return int.from_bytes(keyspace.partition_hash(keycodec.encode_string(key)), "big")


# ---------------------------------------------------------------- the seeds' examples


class TestSeedExamples:
    def test_7500_rcu_3000_wcu_is_6_partitions(self, seeds: ServerProcess) -> None:
        view = partitions(seeds, capacity_table(seeds, 7500, 3000))
        assert view["partition_count"] == 6
        assert shares(view) == [(1250.0, 500.0)] * 6

    def test_5000_2000_then_8000_rcu_doubles(self, seeds: ServerProcess) -> None:
        name = capacity_table(seeds, 5000, 2000)
        assert shares(partitions(seeds, name)) == [(1250.0, 500.0)] * 4
        seeds.ddb.update_table(
            TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 8000, "WriteCapacityUnits": 2000}
        )
        view = partitions(seeds, name)
        assert view["partition_count"] == 8
        assert shares(view) == [(1000.0, 250.0)] * 8

    def test_one_of_four_partitions_filling_up(self, seeds: ServerProcess) -> None:
        name = capacity_table(seeds, 5000, 2000)
        keys = [k for k in (f"user{i}" for i in range(2000)) if partition_hash(k) < (1 << 30)][:40]
        for key in keys:
            assert puts(seeds, name, [key]) == ["ok"]
            if partitions(seeds, name)["partition_count"] == 5:
                break
        view = partitions(seeds, name)
        assert sorted(shares(view), reverse=True) == [(1250.0, 500.0)] * 3 + [(625.0, 250.0)] * 2
        assert [p["weight"] for p in view["partitions"]] == ["1/8", "1/8", "1/4", "1/4", "1/4"]
        assert sum(p["bytes"] for p in view["partitions"]) == view["size_bytes"]
        assert all(p["bytes"] <= 2000 for p in view["partitions"])

    def test_bulk_load_at_11000_wcu_then_200(self, seeds: ServerProcess) -> None:
        name = capacity_table(seeds, 1, 11000)
        assert [w for _, w in shares(partitions(seeds, name))] == [1000.0] * 11
        seeds.ddb.update_table(
            TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 200}
        )
        view = partitions(seeds, name)
        assert view["partition_count"] == 11  # partitions never merge
        assert all(abs(w - 200 / 11) < 1e-9 for _, w in shares(view))  # about 20 each

    def test_65_units_of_data_is_7_partitions(self, seeds: ServerProcess) -> None:
        name = capacity_table(seeds, 1, 1000)
        i = 0
        while partitions(seeds, name)["size_bytes"] <= 12000:  # "65 GB" at a 2,000-byte partition: 6.5 -> 7
            assert puts(seeds, name, [f"k{i:04d}-{j}" for j in range(10)]) == ["ok"] * 10
            seeds.advance(1)
            i += 1
        view = seeds.admin(f"/dynastore/partitions/{name}", {"rebuild": True})
        assert view["partition_count"] == 7
        assert sum(p["items"] for p in view["partitions"]) == view["item_count"]

    def test_describe_table_agrees(self, seeds: ServerProcess) -> None:
        name = capacity_table(seeds, 7500, 3000)
        puts(seeds, name, ["a", "b"])
        table = seeds.ddb.describe_table(TableName=name)["Table"]
        view = partitions(seeds, name)
        assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == sum(r for r, _ in shares(view))
        assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == sum(w for _, w in shares(view))
        assert table["ItemCount"] == view["item_count"] == sum(p["items"] for p in view["partitions"])


# ---------------------------------------------------------------- hot keys and write sharding


class TestHotKeys:
    def test_hot_key_throttles_while_the_table_is_under_its_total(self, small: ServerProcess) -> None:
        name = capacity_table(small, 1, 80)  # 4 partitions of 20 WCU
        assert partitions(small, name)["partition_count"] == 4
        small.advance(1)
        results = puts(small, name, ["hot"] * 25)
        assert results == ["ok"] * 20 + ["ProvisionedThroughputExceededException"] * 5
        try:
            small.ddb.put_item(TableName=name, Item={"pk": {"S": "hot"}})
        except small.ddb.exceptions.ProvisionedThroughputExceededException as e:
            assert e.response["Error"]["Message"] == PTEE_TABLE
            assert e.response["ThrottlingReasons"] == [
                {
                    "reason": "TableWriteKeyRangeThroughputExceeded",
                    "resource": f"arn:aws:dynamodb:us-east-1:000000000000:table/{name}",
                }
            ]
        else:
            pytest.fail("not throttled")
        view = partitions(small, name)
        assert sum(p["consumed"]["write"] for p in view["partitions"]) == 20  # a quarter of the table's 80
        assert sorted(p["throttled"]["write"] for p in view["partitions"]) == [0, 0, 0, 6]

    def test_write_sharding_makes_the_throttling_go_away(self, small: ServerProcess) -> None:
        name = capacity_table(small, 1, 80)
        small.advance(1)
        # the seeds' calculated suffix: [key]#(OrderId % 40 + 1)
        keys = [f"2014-07-09#{order % 40 + 1}" for order in range(60)]
        assert puts(small, name, keys) == ["ok"] * 60
        view = partitions(small, name)
        assert all(p["throttled"]["write"] == 0 for p in view["partitions"])
        assert all(p["consumed"]["write"] > 0 for p in view["partitions"])

    def test_reads_have_their_own_budget_and_eventual_reads_cost_half(self, small: ServerProcess) -> None:
        name = capacity_table(small, 4, 60)  # 4 partitions of 1 RCU
        puts(small, name, ["r"])
        spend_burst(small, name)
        codes = []
        for _ in range(3):
            try:
                small.ddb.get_item(TableName=name, Key={"pk": {"S": "r"}})
                codes.append("ok")
            except small.ddb.exceptions.ClientError as e:
                codes.append(e.response["Error"]["Code"])
        assert codes == ["ok", "ok", "ProvisionedThroughputExceededException"]


class TestBurstAndAdaptive:
    def test_burst_lets_a_short_spike_through_and_not_a_sustained_one(self, small: ServerProcess) -> None:
        name = capacity_table(small, 1, 10)  # one partition: 10 WCU share, 20 WCU maximum
        spend_burst(small, name)  # a new partition starts with 300 seconds of credit: spend it...
        small.advance(10)  # ...then ten idle seconds: 100 units of burst credit
        per_second = []
        for _ in range(20):
            small.advance(1)
            per_second.append(puts(small, name, [f"k{i}" for i in range(20)]).count("ok"))
        assert per_second[:8] == [20] * 8  # the spike runs on burst credit
        assert per_second[-5:] == [10] * 5  # sustained: the share, no more
        assert partitions(small, name)["partitions"][0]["burst"]["write"] == 0

    def test_adaptive_capacity_lifts_a_hot_partition_after_the_delay(self, small: ServerProcess) -> None:
        name = capacity_table(small, 1, 30)  # two partitions of 15 WCU (maximum 20)
        view = partitions(small, name)
        assert shares(view) == [(0.5, 15.0), (0.5, 15.0)]
        spend_burst(small, name)
        served = []
        for _ in range(10):
            served.append(puts(small, name, ["hot"] * 20).count("ok"))
            small.advance(1)
        assert served[:4] == [15] * 4  # throttled at the share while adaptive capacity waits (5 s)
        assert served[-4:] == [20] * 4  # lifted to the partition maximum with the table's unused throughput
        assert any(p["adaptive"]["write"] for p in partitions(small, name)["partitions"])


# ---------------------------------------------------------------- indexes, report mode, scale


def test_gsi_without_write_capacity_throttles_table_writes(seeds: ServerProcess) -> None:
    name = f"weather_{uuid.uuid4().hex[:8]}"
    seeds.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "station", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "station", "AttributeType": "S"},
            {"AttributeName": "intrusion", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 12000},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "intrusion",
                "KeySchema": [{"AttributeName": "intrusion", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
            }
        ],
    )
    seeds.advance(1)
    spend_burst(seeds, name)  # the index's burst credit would take 600 writes before the first refusal
    codes = []
    for i in range(3):
        try:
            seeds.ddb.put_item(TableName=name, Item={"station": {"S": f"s{i}"}, "intrusion": {"S": "False"}})
            codes.append("ok")
        except seeds.ddb.exceptions.ProvisionedThroughputExceededException as e:
            codes.append(e.response["Error"]["Message"])
    assert codes == ["ok", "ok", PTEE_INDEX]
    view = partitions(seeds, name)
    assert view["partition_count"] == 12  # "12,000 WCU will result in approximately 12 partitions"
    assert view["indexes"][0]["index"] == "intrusion"
    assert view["indexes"][0]["partitions"][0]["throttled"]["write"] == 1


def test_report_mode_throttles_nothing_and_shows_everything() -> None:
    server = ServerProcess("--manual-clock", "--capacity", "report", "--partition-max-wcu", "20")
    try:
        name = capacity_table(server, 1, 80)
        assert puts(server, name, ["hot"] * 25) == ["ok"] * 25
        view = partitions(server, name)
        assert view["capacity_mode"] == "report"
        assert sorted(p["throttled"]["write"] for p in view["partitions"]) == [0, 0, 0, 5]
    finally:
        server.stop()


def test_as_if_n_partitions_shows_the_throttling_of_full_size(seeds: ServerProcess) -> None:
    name = capacity_table(seeds, 1, 400)  # one partition locally
    seeds.advance(1)
    assert puts(seeds, name, ["hot"] * 30) == ["ok"] * 30
    view = seeds.admin(f"/dynastore/partitions/{name}", {"as_if": 40})  # ...but 40 at scale: 10 WCU each
    assert view["partition_count"] == 40 and view["as_if"] == 40
    spend_burst(seeds, name)  # the 40 start with their burst credit: what is left is the sustained rate
    assert puts(seeds, name, ["hot"] * 12).count("ok") == 10


def test_as_if_through_the_cli(seeds: ServerProcess) -> None:
    name = capacity_table(seeds, 7500, 3000)
    out = subprocess.run(
        [sys.executable, "-m", "dynastore", "partitions", name, "--endpoint", seeds.url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "table: 6 partitions, provisioned 7500 RCU / 3000 WCU a second" in out
    assert "1250" in out and "500" in out
    subprocess.run(
        [sys.executable, "-m", "dynastore", "partitions", name, "--endpoint", seeds.url, "--set-as-if", "12", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert partitions(seeds, name)["partition_count"] == 12


# ---------------------------------------------------------------- Contributor Insights


def test_contributor_insights_finds_the_hot_key(small: ServerProcess) -> None:
    name = capacity_table(small, 1, 80)
    ddb = small.ddb
    assert ddb.describe_contributor_insights(TableName=name)["ContributorInsightsStatus"] == "DISABLED"
    answer = ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE")
    assert answer["ContributorInsightsStatus"] == "ENABLING"
    described = ddb.describe_contributor_insights(TableName=name)
    assert described["ContributorInsightsStatus"] == "ENABLED"
    assert [r.split("-")[1] for r in described["ContributorInsightsRuleList"]] == ["PKC", "PKT"]
    listed = ddb.list_contributor_insights(TableName=name)["ContributorInsightsSummaries"]
    assert listed == [
        {
            "TableName": name,
            "ContributorInsightsStatus": "ENABLED",
            "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS",
        }
    ]
    small.advance(1)
    puts(small, name, ["hot"] * 25 + ["cold"])
    top = small.admin(f"/dynastore/contributors/{name}")
    [hot_partition] = [
        p["partition"] for p in small.admin(f"/dynastore/partitions/{name}")["partitions"] if p["throttled"]["write"]
    ]
    hot = {"key": {"pk": {"S": "hot"}}, "ConsumedThroughputUnits": 60.0, "ThrottleCount": 5, "partition": hot_partition}
    assert top["rules"]["PKC"][0] == top["rules"]["PKT"][0] == hot
    assert (
        ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="DISABLE")[
            "ContributorInsightsStatus"
        ]
        == "DISABLING"
    )
    assert ddb.describe_contributor_insights(TableName=name)["ContributorInsightsStatus"] == "DISABLED"


def test_contributor_insights_unknown_table(small: ServerProcess) -> None:
    with pytest.raises(small.ddb.exceptions.ResourceNotFoundException) as e:
        small.ddb.describe_contributor_insights(TableName="no_such_table")
    assert e.value.response["Error"]["Message"] == "Requested resource not found: Table: no_such_table not found"


# ---------------------------------------------------------------- control plane and the endpoint itself


def test_throughput_decreases_are_limited(seeds: ServerProcess) -> None:
    name = capacity_table(seeds, 100, 100)
    for units in (90, 80, 70, 60):
        seeds.ddb.update_table(
            TableName=name, ProvisionedThroughput={"ReadCapacityUnits": units, "WriteCapacityUnits": 100}
        )
        seeds.advance(1)
    with pytest.raises(seeds.ddb.exceptions.LimitExceededException) as e:
        seeds.ddb.update_table(
            TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 50, "WriteCapacityUnits": 100}
        )
    message = e.value.response["Error"]["Message"]
    assert message.startswith(
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the "
        "first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 "
        "seconds. Number of decreases today: 4. Last decrease at "
    )
    assert message.endswith(" Coordinated Universal Time")


def test_extension_errors(send: Send, request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--url"):
        pytest.skip("dynastore's own endpoints")

    def status(path: str, body: bytes | None = None) -> tuple[int, Any]:
        code, answer = send("GET" if body is None else "POST", path, body or b"", ADMIN)
        return code, json.loads(answer)

    assert status("/dynastore/partitions/no_such_table") == (
        404,
        {"error": "Requested resource not found: Table: no_such_table not found"},
    )
    code, body = status("/dynastore/clock", b'{"advance": 1}')
    assert code == 400 and "--manual-clock" in body["error"]
    code, body = status("/dynastore/clock")
    assert code == 200 and body["manual"] is False
    assert status("/dynastore/nothing")[0] == 404
