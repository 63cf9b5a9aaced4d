"""What multi-Region strong consistency costs a write and a read across servers (docs/global-tables.md "Multi-Region
strong consistency (MRSC)"): three dynastore servers on 127.0.0.1, each serving its region and a peer of the
others, with three etcd members keeping the strong log (``--strong-etcd``); sequential PutItem calls from one
client of us-east-1 on an MREC global table and on an MRSC one, then strongly consistent GetItem calls of the
items just written from us-west-2. Latencies in milliseconds (p50 / p99), interleaved rounds.

    python benchmarks/strong_writes.py [calls per round] [rounds]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cluster.node_fixtures import EtcdCluster, wait_for  # noqa: E402
from tests.e2e.peer_servers import PeerServers  # noqa: E402

REGIONS = ("us-east-1", "us-east-2", "us-west-2")


def make_global_table(servers: PeerServers, name: str, strong: bool) -> None:
    ddb = servers.client("us-east-1")
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    wait_for(name, lambda: ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE")
    creates = [{"Create": {"RegionName": region}} for region in REGIONS[1:]]
    if strong:
        ddb.update_table(TableName=name, ReplicaUpdates=creates, MultiRegionConsistency="STRONG")
    else:
        for create in creates:
            ddb.update_table(TableName=name, ReplicaUpdates=[create])
            wait_for(name, lambda: ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE")
    wait_for(name, lambda: _settled(ddb.describe_table(TableName=name)["Table"]))


def _settled(table: dict[str, Any]) -> bool:
    replicas = table.get("Replicas", [])
    return bool(table["TableStatus"] == "ACTIVE" and len(replicas) == 2 and all(
        r["ReplicaStatus"] == "ACTIVE" for r in replicas))  # fmt: skip


def timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main(calls: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="dynastore-strong-bench-") as directory:
        etcd = EtcdCluster(Path(directory) / "etcd", 3)
        try:
            etcd.wait_healthy()
            with PeerServers(REGIONS, "--strong-etcd", etcd.spec, data_root=Path(directory) / "servers") as servers:
                make_global_table(servers, "eventual", strong=False)
                make_global_table(servers, "strong", strong=True)
                east, west = servers.client("us-east-1"), servers.client("us-west-2")
                figures: dict[str, list[float]] = {"eventual put": [], "strong put": [], "strong get elsewhere": []}
                for round_ in range(rounds):
                    for table in ("eventual", "strong") if round_ % 2 == 0 else ("strong", "eventual"):
                        for i in range(calls):
                            item = {"pk": {"S": f"r{round_}-{i}"}, "v": {"S": "x" * 100}}
                            figures[f"{table} put"].append(timed(partial(east.put_item, TableName=table, Item=item)))
                    for i in range(calls):
                        key = {"pk": {"S": f"r{round_}-{i}"}}
                        read = partial(west.get_item, TableName="strong", Key=key, ConsistentRead=True)
                        figures["strong get elsewhere"].append(timed(read))
                for name, values in figures.items():
                    print(f"{name:22} p50 {statistics.median(values):6.2f} ms   p99 {percentile(values, 0.99):6.2f} ms")
        finally:
            etcd.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
