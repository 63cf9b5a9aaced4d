"""The MRSC table of a run and the load on it: client threads in every region at once, each through its own
region's server, on a few hot keys every region writes.

- **Registers** (``r0``...): a strongly consistent GetItem, then a PutItem conditioned on the version read (``ver =
  :v``, or ``attribute_not_exists(pk)``) writing version + 1 and a token no other write uses (in ``w``): a
  compare-and-set register per key (tests/cluster/cas_register.py).
- **Plain keys** (``k0``...): PutItem of a value no other operation uses (in ``w``), DeleteItem (its value, in the
  history only), and strongly consistent GetItem or Query (``sread``): a read/write register per key; and
  eventually consistent GetItem (``eread``), which may lag but must show only values written and not refused.

A write racing one of the same item from another region may be refused with ReplicatedWriteConflictException (a
400: failed, nothing written); a region that cannot reach a majority of the strong log answers 503 (in doubt).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from tests.cluster.clients import until_done
from tests.cluster.global_regions import Region
from tests.cluster.global_workload import SETUP_CONFIG, RegionLoad, create_table, wait_replicas_active
from tests.cluster.global_workload import scan as scan_table
from tests.cluster.history import History
from tests.cluster.workloads import read_register, write_register

TABLE = "mrsc_convergence"
REGISTERS = 3
PLAIN_KEYS = 6
BACK_OFF = 1.0  # seconds a thread waits after an answer in doubt, as a client would (each one costs the checker)
TOKEN = "w"  # the attribute that holds a register's token, as it holds a plain key's value


@dataclass
class StrongLoad(RegionLoad):
    """``workers`` client threads per region until the deadline; each operation goes to its thread's region."""

    thread_prefix = "s"
    back_off = BACK_OFF

    def operate(self, process: int, region: str, ddb: Any, rng: random.Random, n: int, value: str) -> None:
        roll = rng.random()
        if roll < 0.5:
            self.compare_and_set(process, region, ddb, f"r{rng.randrange(REGISTERS)}", value)
        else:
            self.plain(process, region, ddb, f"k{rng.randrange(PLAIN_KEYS)}", value, rng.random())

    def compare_and_set(self, process: int, region: str, ddb: Any, key: str, token: str) -> None:
        """Read the register, then write version + 1 on condition that it still holds the version read (every
        write's expected version comes from the read just before it: cas_register.from_history relies on it)."""
        state = self.attempt(process, region, "read", key, None, partial(read_register, ddb, TABLE, key, TOKEN))
        if state is not None:
            write = partial(write_register, ddb, TABLE, key, state[0], token, TOKEN)
            self.attempt(process, region, "cas", key, (state[0], token), write)

    def plain(self, process: int, region: str, ddb: Any, key: str, value: str, roll: float) -> None:
        if roll < 0.40:
            put = partial(ddb.put_item, TableName=TABLE, Item={"pk": {"S": key}, "w": {"S": value}})
            self.attempt(process, region, "put", key, value, put)
        elif roll < 0.60:
            self.attempt(process, region, "delete", key, value, partial(ddb.delete_item, TableName=TABLE,
                                                                        Key={"pk": {"S": key}}))  # fmt: skip
        elif roll < 0.90:  # a GetItem or a Query, both strongly consistent
            read = read_value if roll < 0.80 else query_value
            self.attempt(process, region, "sread", key, None, partial(read, ddb, key))
        else:
            self.attempt(process, region, "eread", key, None, partial(read_value, ddb, key, consistent=False))


def read_value(ddb: Any, key: str, consistent: bool = True) -> str | None:
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": key}}, ConsistentRead=consistent).get("Item")
    return None if item is None else str(item["w"]["S"])


def query_value(ddb: Any, key: str) -> str | None:
    items = ddb.query(TableName=TABLE, KeyConditionExpression="pk = :k", ExpressionAttributeValues={":k": {"S": key}},
                      ConsistentRead=True)["Items"]  # fmt: skip
    return None if not items else str(items[0]["w"]["S"])


def final_reads(regions: list[Region], history: History) -> None:
    """A strongly consistent read of every key in every region, appended to the history after everything else
    (process -1): the registers' searches then decide their in-doubt writes (cas_register.from_history)."""
    for region in regions:
        ddb = region.client(SETUP_CONFIG)
        for i in range(REGISTERS):
            _final(history, region.name, "read", f"r{i}", partial(read_register, ddb, TABLE, f"r{i}", TOKEN))
        for i in range(PLAIN_KEYS):
            _final(history, region.name, "sread", f"k{i}", partial(read_value, ddb, f"k{i}"))


def _final(history: History, region: str, kind: str, key: str, read: Callable[[], Any]) -> None:
    op = history.invoke(-1, kind, key)
    op.node = region
    history.ok(op, until_done(read, timeout=60))


def create_strong_table(regions: list[Region], witness: str | None, timeout: float = 120) -> None:
    """The table created in the first region, then made an MRSC global table in one UpdateTable: a replica in
    every other region (and the witness, if any), MultiRegionConsistency STRONG; then every region waited for until
    it shows the table and each replica ACTIVE."""
    first = regions[0].client(SETUP_CONFIG)
    create_table(first, TABLE)
    wait_replicas_active(regions[:1], [], timeout, TABLE)
    update: dict[str, Any] = {"ReplicaUpdates": [{"Create": {"RegionName": r.name}} for r in regions[1:]],
                              "MultiRegionConsistency": "STRONG"}  # fmt: skip
    if witness is not None:
        update["GlobalTableWitnessUpdates"] = [{"Create": {"RegionName": witness}}]
    until_done(partial(first.update_table, TableName=TABLE, **update), timeout=timeout)
    wait_active(regions, [r.name for r in regions], witness, timeout)


def wait_active(regions: list[Region], names: list[str], witness: str | None, timeout: float) -> None:
    """Until each of ``regions`` shows the table ACTIVE with every other of ``names`` as an ACTIVE replica,
    MultiRegionConsistency STRONG and ``witness`` as an ACTIVE witness."""

    def strong(shown: dict[str, Any]) -> bool:
        witnesses = {
            w["RegionName"] for w in shown.get("GlobalTableWitnesses", []) if w.get("WitnessStatus") == "ACTIVE"
        }
        return shown.get("MultiRegionConsistency") == "STRONG" and (witness is None or witness in witnesses)

    wait_replicas_active(regions, names, timeout, TABLE, strong, f" (STRONG, witness {witness})")


def scan(region: Region, consistent: bool) -> dict[str, dict[str, Any]]:
    """Every item of the table in ``region``, by key: a Scan with ConsistentRead, or eventually consistent."""
    return scan_table(region, table=TABLE, consistent=consistent, timeout=60)
