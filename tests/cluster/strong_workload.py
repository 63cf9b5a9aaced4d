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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from botocore.config import Config

from tests.cluster.clients import until_done
from tests.cluster.global_regions import Region
from tests.cluster.history import History, Outcome

TABLE = "mrsc_convergence"
REGISTERS = 3
PLAIN_KEYS = 6
BACK_OFF = 1.0  # seconds a thread waits after an answer in doubt, as a client would (each one costs the checker)
SETUP_CONFIG = Config(parameter_validation=False, retries={"max_attempts": 0}, connect_timeout=2, read_timeout=30)


@dataclass
class StrongLoad:
    """``workers`` client threads per region until the deadline; each operation goes to its thread's region."""

    regions: list[Region]
    seed: int
    workers: int = 3
    history: History = field(default_factory=History)
    pause: float = 0.03  # between one thread's operations: bounded load on a machine of two cores
    deadline: float = 0.0
    _clients: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Made before the clock starts (making one takes a while); botocore clients are shared by threads.
        self._clients = {r.name: r.client() for r in self.regions}

    def run(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        threads: list[threading.Thread] = []
        for region in self.regions:
            for _ in range(self.workers):
                process = len(threads)
                threads.append(threading.Thread(target=self.work, args=(region.name, process), name=f"s{process}"))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def attempt(self, process: int, region: str, kind: str, key: str, value: Any, call: Callable[[], Any]) -> Any:
        """``call()`` recorded as one operation; what it answered, or None when it failed (recorded as such)."""
        op = self.history.invoke(process, kind, key, value)
        op.node = region
        try:
            answer = call()
        except Exception as error:  # every way a request can end is recorded, none stops the thread
            self.history.failed(op, error)
            if op.outcome is Outcome.UNKNOWN:
                time.sleep(BACK_OFF)
            return None
        self.history.ok(op, answer)
        return answer

    def work(self, region: str, process: int) -> None:
        rng = random.Random(self.seed * 1000 + process)
        ddb = self._clients[region]
        n = 0
        while time.monotonic() < self.deadline:
            n += 1
            value = f"{region}/{process}.{n}"
            roll = rng.random()
            if roll < 0.5:
                self.compare_and_set(process, region, ddb, f"r{rng.randrange(REGISTERS)}", value)
            else:
                self.plain(process, region, ddb, f"k{rng.randrange(PLAIN_KEYS)}", value, rng.random())
            time.sleep(self.pause)

    def compare_and_set(self, process: int, region: str, ddb: Any, key: str, token: str) -> None:
        """Read the register, then write version + 1 on condition that it still holds the version read (every
        write's expected version comes from the read just before it: cas_register.from_history relies on it)."""
        state = self.attempt(process, region, "read", key, None, partial(read_register, ddb, key))
        if state is not None:
            self.attempt(process, region, "cas", key, (state[0], token), partial(write_register, ddb, key, state[0],
                                                                                 token))  # fmt: skip

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


def read_register(ddb: Any, key: str) -> tuple[int, str | None]:
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
    return (0, None) if item is None else (int(item["ver"]["N"]), str(item["w"]["S"]))


def write_register(ddb: Any, key: str, expected: int, token: str) -> Any:
    item = {"pk": {"S": key}, "ver": {"N": str(expected + 1)}, "w": {"S": token}}
    if expected == 0:
        return ddb.put_item(TableName=TABLE, Item=item, ConditionExpression="attribute_not_exists(pk)")
    return ddb.put_item(TableName=TABLE, Item=item, ConditionExpression="ver = :v",
                        ExpressionAttributeValues={":v": {"N": str(expected)}})  # fmt: skip


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
            _final(history, region.name, "read", f"r{i}", partial(read_register, ddb, f"r{i}"))
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
    until_done(partial(first.create_table, TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}),
               accept=("ResourceInUseException",))  # fmt: skip
    wait_active(regions[:1], [], None, timeout, strong=False)
    update: dict[str, Any] = {"ReplicaUpdates": [{"Create": {"RegionName": r.name}} for r in regions[1:]],
                              "MultiRegionConsistency": "STRONG"}  # fmt: skip
    if witness is not None:
        update["GlobalTableWitnessUpdates"] = [{"Create": {"RegionName": witness}}]
    until_done(partial(first.update_table, TableName=TABLE, **update), timeout=timeout)
    wait_active(regions, [r.name for r in regions], witness, timeout)


def wait_active(regions: list[Region], names: list[str], witness: str | None, timeout: float,
                strong: bool = True) -> None:  # fmt: skip
    """Until each of ``regions`` shows the table ACTIVE with every other of ``names`` as an ACTIVE replica, and
    (``strong``) MultiRegionConsistency STRONG with ``witness`` as an ACTIVE witness."""
    deadline = time.monotonic() + timeout
    for region in regions:
        ddb = region.client(SETUP_CONFIG)
        wanted = {name for name in names if name != region.name}
        while True:
            table = until_done(partial(ddb.describe_table, TableName=TABLE), timeout=timeout,
                               accept=("ResourceNotFoundException",))  # fmt: skip
            shown = (table or {}).get("Table", {})
            active = {r["RegionName"] for r in shown.get("Replicas", []) if r.get("ReplicaStatus") == "ACTIVE"}
            witnesses = {w["RegionName"] for w in shown.get("GlobalTableWitnesses", [])
                         if w.get("WitnessStatus") == "ACTIVE"}  # fmt: skip
            mrsc = not strong or (shown.get("MultiRegionConsistency") == "STRONG" and
                                  (witness is None or witness in witnesses))  # fmt: skip
            if shown.get("TableStatus") == "ACTIVE" and wanted <= active and mrsc:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{region.name}: the table is not ACTIVE with replicas {sorted(wanted)}"
                    f"{' (STRONG, witness ' + str(witness) + ')' if strong else ''}: {shown}"
                )
            time.sleep(0.5)


def scan(region: Region, consistent: bool) -> dict[str, dict[str, Any]]:
    """Every item of the table in ``region``, by key: a Scan with ConsistentRead, or eventually consistent."""
    ddb = region.client(SETUP_CONFIG)
    items: dict[str, dict[str, Any]] = {}
    start: dict[str, Any] = {}
    while True:
        page = until_done(partial(ddb.scan, TableName=TABLE, ConsistentRead=consistent, **start), timeout=60)
        assert page is not None
        items.update({item["pk"]["S"]: item for item in page["Items"]})
        if "LastEvaluatedKey" not in page:
            return items
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}
