"""What a fresh table absorbs at once, end to end over boto3 with retries off: a new partition starts with its
full burst credit (300 seconds of its share), a new on-demand table takes DynamoDB's initial throughput, and a
sustained overload still throttles once the credit is spent.

dynastore-only (server options and extension endpoints): the servers run with a manual clock that never moves
unless a test says so, so "at once" is exact: nothing refills between the requests.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.e2e.conftest import make_client
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_capacity import partition_hash, partitions

server = server_fixture("--manual-clock")  # DynamoDB's partition constants: 3,000 RCU / 1,000 WCU / 10 GB


def provisioned(ddb: Any, read: int, write: int) -> str:
    name = f"fresh_{uuid.uuid4().hex[:10]}"
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
    )
    return name


def on_demand(ddb: Any) -> str:
    name = f"fresh_{uuid.uuid4().hex[:10]}"
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


def put_codes(ddb: Any, table: str, items: list[dict[str, Any]]) -> list[str]:
    codes = []
    for item in items:
        try:
            ddb.put_item(TableName=table, Item=item)
            codes.append("ok")
        except ddb.exceptions.ClientError as e:
            codes.append(e.response["Error"]["Code"])
    return codes


def test_a_fresh_5_5_table_takes_what_a_test_suite_sends_it_at_once(server: ServerProcess) -> None:
    ddb = server.ddb
    name = provisioned(ddb, 5, 5)
    ddb.put_item(TableName=name, Item={"pk": {"S": "big"}, "v": {"S": "x" * 350_000}})  # 342 write units
    with ThreadPoolExecutor(max_workers=20) as pool:
        list(pool.map(lambda i: ddb.put_item(TableName=name, Item={"pk": {"S": f"p{i}"}}), range(20)))
    # 30 items, as a client's batch writer sends them: 25 and 5.
    items = [{"PutRequest": {"Item": {"pk": {"S": f"b{i}"}, "v": {"S": "y" * 500}}}} for i in range(30)]
    for chunk in (items[:25], items[25:]):
        assert ddb.batch_write_item(RequestItems={name: chunk})["UnprocessedItems"] == {}
    actions = [{"Put": {"TableName": name, "Item": {"pk": {"S": f"t{i}"}}}} for i in range(25)]
    ddb.transact_write_items(TransactItems=actions)
    ddb.get_item(TableName=name, Key={"pk": {"S": "big"}}, ConsistentRead=True)  # 86 read units
    assert ddb.scan(TableName=name, Select="COUNT")["Count"] == 1 + 20 + 30 + 25
    partition = partitions(server, name)["partitions"][0]
    assert partition["consumed"]["write"] == 342 + 20 + 30 + 25 * 2
    assert partition["throttled"] == {"read": 0, "write": 0}
    assert partition["burst"]["write"] == 5 * 301 - partition["consumed"]["write"] - 5


def test_a_sustained_overload_throttles_after_about_its_burst(server: ServerProcess) -> None:
    ddb = server.ddb
    name = provisioned(ddb, 1, 1)
    codes = put_codes(ddb, name, [{"pk": {"S": "hot"}}] * 600)
    assert codes[:301] == ["ok"] * 301  # one second of 1 WCU and 300 seconds of burst credit
    assert codes[301:] == ["ProvisionedThroughputExceededException"] * 299
    assert partitions(server, name)["partitions"][0]["burst"]["write"] == 0
    server.advance(5)
    codes = put_codes(ddb, name, [{"pk": {"S": "hot"}}] * 10)
    assert codes.count("ok") == 5  # then the share: one write unit a second


def test_a_fresh_on_demand_table_takes_a_few_megabytes_at_once(server: ServerProcess) -> None:
    ddb = server.ddb
    name = on_demand(ddb)
    view = partitions(server, name)
    assert view["partition_count"] == 8  # sized for 12,000 read and 4,000 write units a second
    ranges = [tuple(int(bound, 16) for bound in p["hash_range"]) for p in view["partitions"]]

    def partition(key: str) -> int:
        h = partition_hash(key)
        return next(i for i, (lo, hi) in enumerate(ranges) if lo <= h <= hi)

    # Nine items of 380 KB (3.4 MB, 3,420 write units), three of which land on the same partition: more than its
    # 1,000 units in the same instant, as large items spread over a few partitions often do.
    keys = [f"k{i}" for i in range(200)]
    same = [k for k in keys if partition(k) == 0][:3]
    others = [next(k for k in keys if partition(k) == p) for p in range(1, 7)]
    items = [{"pk": {"S": k}, "v": {"S": "z" * 380_000}} for k in same + others]
    assert put_codes(ddb, name, items) == ["ok"] * 9
    # And most of the rest of the 4,000 write units a second, spread over the partitions still under their
    # maximum (the first one, past it, would refuse: the per-partition maximum holds).
    small = [{"pk": {"S": k}} for k in (f"s{i}" for i in range(2000)) if partition(k) != 0][:600]
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(lambda item: put_codes(ddb, name, [item])[0], small))
    assert codes == ["ok"] * 600
    view = partitions(server, name)
    assert sum(p["consumed"]["write"] for p in view["partitions"]) == 9 * 372 + 600
    assert sum(p["throttled"]["write"] for p in view["partitions"]) == 0
    assert put_codes(ddb, name, [{"pk": {"S": same[0]}}]) == ["ThrottlingException"]


def test_a_fresh_on_demand_table_takes_a_3_5_megabyte_transaction(server: ServerProcess) -> None:
    """A transaction is admitted as one request: its 7,000 transactional write units pass a table bucket that
    holds the 4,000 a second of a new on-demand table, and a partition that several of its items land on."""
    ddb = server.ddb
    name = on_demand(ddb)
    items = [{"pk": {"S": f"k{i}"}, "v": {"S": "z" * 390_000}} for i in range(9)]  # 3.5 MB, 381 units each
    answer = ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": name, "Item": item}} for item in items], ReturnConsumedCapacity="TOTAL"
    )
    assert answer["ConsumedCapacity"] == [{"TableName": name, "CapacityUnits": 9 * 2 * 381.0}]
    gets = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": name, "Key": {"pk": i["pk"]}}} for i in items])
    assert [r["Item"]["pk"] for r in gets["Responses"]] == [i["pk"] for i in items]
    view = partitions(server, name)
    assert sum(p["consumed"]["write"] for p in view["partitions"]) == 9 * 2 * 381
    assert sum(p["throttled"]["write"] for p in view["partitions"]) == 0


def test_a_restarted_server_gives_every_partition_its_burst_credit_again(tmp_path: Path) -> None:
    process = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        ddb = make_client(process.url)
        name = provisioned(ddb, 1, 1)
        assert put_codes(ddb, name, [{"pk": {"S": "k"}}] * 302).count("ok") == 301
    finally:
        process.stop()
    process = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        ddb = make_client(process.url)
        # Token buckets live in memory: after a restart the partition starts full, as a new one does.
        assert put_codes(ddb, name, [{"pk": {"S": "k"}}] * 302).count("ok") == 301
    finally:
        process.stop()


def test_spend_burst_through_the_cli(server: ServerProcess) -> None:
    name = provisioned(server.ddb, 2, 3)
    before = partitions(server, name)["partitions"][0]["burst"]
    assert before == {"read": 600, "write": 900}  # a new partition: 300 seconds of its share
    out = subprocess.run(
        [sys.executable, "-m", "dynastore", "partitions", name, "--endpoint", server.url, "--spend-burst", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out)["partitions"][0]["burst"] == {"read": 0, "write": 0}
    assert put_codes(server.ddb, name, [{"pk": {"S": "k"}}] * 4).count("ok") == 3  # one second of 3 WCU


def test_a_lowered_on_demand_maximum_binds_at_once(server: ServerProcess) -> None:
    # UpdateTable's OnDemandThroughput alone, on a table that exists: the next writes meet the new maximum.
    ddb = server.ddb
    name = on_demand(ddb)
    ddb.update_table(TableName=name, OnDemandThroughput={"MaxWriteRequestUnits": 2})
    items = [{"pk": {"S": f"k{i}"}} for i in range(2)]
    assert put_codes(ddb, name, items) == ["ok", "ok"]
    try:
        ddb.put_item(TableName=name, Item={"pk": {"S": "k2"}})
        raise AssertionError("the third write of the second was not throttled")
    except ddb.exceptions.ClientError as e:
        error = e.response
    assert (error["ResponseMetadata"]["HTTPStatusCode"], error["Error"]["Code"]) == (400, "ThrottlingException")
    assert error["Error"]["Message"].startswith("Throughput exceeds the current capacity of your table or index.")
    arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
    assert error["throttlingReasons"] == [{"reason": "TableWriteMaxOnDemandThroughputExceeded", "resource": arn}]
