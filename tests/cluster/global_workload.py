"""The global table of a run and the load on it: client threads in every region at once, each writing through its
own region's server, and probes that time how long a write takes to show in the other regions.

Every write puts a value no other operation uses (``<region>/<thread>.<counter>``) in the item's ``w`` attribute;
every delete gets one too (in the history only). Keys: a few hot keys that every region writes, reads and deletes
(conflicts), fresh keys each written once by one region (nothing may hide their loss) and sometimes updated or
deleted later by another region (which may not have them yet), and one probe key per region.

``RegionLoad`` is what any load on regions shares (its threads, its clients, the recording of an operation), and
the table's creation, waiting and scans take the table's name: the MRSC load (tests/cluster/strong_workload.py) is
built on them.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from botocore.config import Config

from tests.cluster.clients import until_done
from tests.cluster.global_regions import Region
from tests.cluster.history import History, Outcome

TABLE = "gt_convergence"
HOT_KEYS = 24
RECENT_FRESH = 64  # the fresh keys another region may update or delete: the latest ones
POLL = 0.02  # seconds between a probe's reads of the regions it waits for
PROBE_PATIENCE = 30.0  # seconds a probe waits for a region to show its write
PROBE_CONFIG = Config(parameter_validation=False, retries={"max_attempts": 0}, connect_timeout=1, read_timeout=2)
SETUP_CONFIG = Config(parameter_validation=False, retries={"max_attempts": 0}, connect_timeout=2, read_timeout=30)


@dataclass
class Lag:
    """One probe's write in ``source``, acknowledged at ``acked``, first read back in ``target`` at ``seen`` (None:
    not within PROBE_PATIENCE). Times in seconds since the history's origin."""

    source: str
    target: str
    acked: float
    seen: float | None

    @property
    def seconds(self) -> float | None:
        return None if self.seen is None else self.seen - self.acked


@dataclass
class RegionLoad:
    """``workers`` client threads per region until the deadline, each sending every operation through its own
    region's server (``operate``: the subclass's) and recording it in ``history``."""

    regions: list[Region]
    seed: int
    workers: int = 3
    history: History = field(default_factory=History)
    pause: float = 0.03  # between one thread's operations: bounded load on a machine of two cores
    deadline: float = 0.0
    _clients: dict[str, Any] = field(default_factory=dict)

    thread_prefix: ClassVar[str] = "w"  # a worker thread's name: the prefix, then its process number
    back_off: ClassVar[float] = 0.0  # seconds a thread waits after an answer in doubt

    def __post_init__(self) -> None:
        # Made before the clock starts (making one takes a while); botocore clients are shared by threads.
        self._clients = {r.name: r.client() for r in self.regions}

    def run(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        threads: list[threading.Thread] = []
        for region in self.regions:
            for _ in range(self.workers):
                process = len(threads)
                threads.append(threading.Thread(target=self.work, args=(region.name, process),
                                                name=f"{self.thread_prefix}{process}"))  # fmt: skip
        threads += self.more_threads(len(threads))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def more_threads(self, first_process: int) -> list[threading.Thread]:
        """Threads the load runs beside its workers, numbered from ``first_process`` (none here)."""
        return []

    def running(self) -> bool:
        return time.monotonic() < self.deadline

    def attempt(self, process: int, region: str, kind: str, key: str, value: Any, call: Callable[[], Any]) -> Any:
        """``call()`` recorded as one operation; what it answered, or None when it failed (recorded as such)."""
        op = self.history.invoke(process, kind, key, value)
        op.node = region
        try:
            answer = call()
        except Exception as error:  # every way a request can end is recorded, none stops the thread
            self.history.failed(op, error)
            if self.back_off and op.outcome is Outcome.UNKNOWN:
                time.sleep(self.back_off)
            return None
        self.history.ok(op, answer)
        return answer

    def work(self, region: str, process: int) -> None:
        """One worker: operations until the deadline, each written value ``<region>/<process>.<n>`` (no other
        operation uses it), its random source seeded from the run's seed and the process."""
        rng = random.Random(self.seed * 1000 + process)
        ddb = self._clients[region]
        n = 0
        while self.running():
            n += 1
            self.operate(process, region, ddb, rng, n, f"{region}/{process}.{n}")
            time.sleep(self.pause)

    def operate(self, process: int, region: str, ddb: Any, rng: random.Random, n: int, value: str) -> None:
        """The worker's ``n``th operation (or read then write), through ``ddb``, writing ``value`` if it writes."""
        raise NotImplementedError


@dataclass
class GlobalLoad(RegionLoad):
    """``workers`` client threads per region plus one probe thread per region, until the deadline."""

    probe_every: tuple[float, float] = (0.3, 0.7)
    lags: list[Lag] = field(default_factory=list)
    _fresh: list[str] = field(default_factory=list)  # acknowledged fresh keys, the latest last
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _probe_clients: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._probe_clients = {r.name: r.client(PROBE_CONFIG) for r in self.regions}

    def more_threads(self, first_process: int) -> list[threading.Thread]:
        """One probe thread per region."""
        return [threading.Thread(target=self.probe, args=(region.name, process), name=f"p{process}")
                for process, region in enumerate(self.regions, start=first_process)]  # fmt: skip

    def operate(self, process: int, region: str, ddb: Any, rng: random.Random, n: int, value: str) -> None:
        roll = rng.random()
        if roll < 0.70:
            self._hot(process, region, ddb, rng, value, roll)
        elif roll < 0.88:
            self._put_fresh(process, region, ddb, f"f-{region}-{process}.{n}", value)
        else:
            self._touch_fresh(process, region, ddb, rng, value)

    def _hot(self, process: int, region: str, ddb: Any, rng: random.Random, value: str, roll: float) -> None:
        """A write, conditional write, update or delete of a key every region writes."""
        key = f"h{rng.randrange(HOT_KEYS)}"
        if roll < 0.25:
            call = partial(ddb.put_item, TableName=TABLE, Item=_item(key, value))
            self.attempt(process, region, "put", key, value, call)
        elif roll < 0.40:
            self._read_then_put(process, region, ddb, key, value)
        elif roll < 0.55:
            self.attempt(process, region, "update", key, value, partial(_update, ddb, key, value, rng.random() < 0.5))
        else:
            self.attempt(process, region, "delete", key, value, partial(_delete, ddb, key, rng.random() < 0.5))

    def _read_then_put(self, process: int, region: str, ddb: Any, key: str, value: str) -> None:
        """Read the key in this region, then put it on condition that it still holds what was read (evaluated
        against this region's replica, as DynamoDB's global tables do)."""
        read = partial(_read, ddb, key)
        op = self.history.invoke(process, "read", key)
        op.node = region
        try:
            seen = read()
        except Exception as error:  # recorded; the conditional put needs the read
            self.history.failed(op, error)
            return
        self.history.ok(op, seen)
        self.attempt(process, region, "cond-put", key, value, partial(_put_if, ddb, key, value, seen))

    def _put_fresh(self, process: int, region: str, ddb: Any, key: str, value: str) -> None:
        put = partial(ddb.put_item, TableName=TABLE, Item=_item(key, value))
        if self.attempt(process, region, "put", key, value, put) is not None:
            with self._lock:
                self._fresh.append(key)
                del self._fresh[:-RECENT_FRESH]

    def _touch_fresh(self, process: int, region: str, ddb: Any, rng: random.Random, value: str) -> None:
        """Update or delete a fresh key another region wrote (this region may not have it yet)."""
        with self._lock:
            theirs = [k for k in self._fresh if not k.startswith(f"f-{region}-")]
        if not theirs:
            return
        key = rng.choice(theirs)
        if rng.random() < 0.5:
            self.attempt(process, region, "update", key, value, partial(_update, ddb, key, value, False))
        else:
            self.attempt(process, region, "delete", key, value, partial(_delete, ddb, key, False))

    def probe(self, region: str, process: int) -> None:
        """Write this region's probe key every so often (``<region>/probe.<n>``, n growing), while a watcher of
        each other region reads it there (so that a region cut off delays no other's samples)."""
        rng = random.Random(self.seed * 1000 + process)
        ddb, key, n = self._clients[region], f"probe-{region}", 0
        acked: list[tuple[int, float]] = []  # (n, acknowledged at): appended here, read by the watchers
        done = threading.Event()
        watchers = [threading.Thread(target=self._watch, args=(region, r.name, key, acked, done))
                    for r in self.regions if r.name != region]  # fmt: skip
        for watcher in watchers:
            watcher.start()
        while self.running():
            n += 1
            value = f"{region}/probe.{n}"
            put = partial(ddb.put_item, TableName=TABLE, Item=_item(key, value))
            if self.attempt(process, region, "probe", key, value, put) is not None:
                acked.append((n, self.history.now()))
            time.sleep(rng.uniform(*self.probe_every))
        done.set()
        for watcher in watchers:
            watcher.join()

    def _watch(self, source: str, target: str, key: str, acked: list[tuple[int, float]], done: threading.Event) -> None:
        """Read ``source``'s probe key in ``target`` while a probe is awaited there: a region showing probe n, or a
        later one, is at least as recent as n (the origin ships the key's current value, a later probe may come in
        n's stead)."""
        seen = 0  # how many of ``acked`` are settled
        while seen < len(acked) or not done.is_set():
            if seen == len(acked):
                time.sleep(POLL)
                continue
            latest, answered = self._probe_shown(target, key)
            while seen < len(acked) and (acked[seen][0] <= latest or answered - acked[seen][1] > PROBE_PATIENCE):
                n, at = acked[seen]
                self._record(Lag(source, target, at, answered if n <= latest else None))
                seen += 1
            time.sleep(POLL)

    def _probe_shown(self, region: str, key: str) -> tuple[int, float]:
        """The number of the latest probe ``region`` shows under ``key`` (0: none, or the region does not answer),
        and when it answered."""
        try:
            value = _read(self._probe_clients[region], key)
        except Exception:  # a region down or cut off shows nothing yet
            return 0, self.history.now()
        return (0 if value is None else int(value.rsplit(".", 1)[1])), self.history.now()

    def _record(self, lag: Lag) -> None:
        with self._lock:
            self.lags.append(lag)


def _item(key: str, value: str) -> dict[str, Any]:
    return {"pk": {"S": key}, "w": {"S": value}}


def _read(ddb: Any, key: str) -> str | None:
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
    return None if item is None else str(item["w"]["S"])


def _put_if(ddb: Any, key: str, value: str, seen: str | None) -> Any:
    if seen is None:
        return ddb.put_item(TableName=TABLE, Item=_item(key, value), ConditionExpression="attribute_not_exists(pk)")
    return ddb.put_item(TableName=TABLE, Item=_item(key, value), ConditionExpression="w = :seen",
                        ExpressionAttributeValues={":seen": {"S": seen}})  # fmt: skip


def _update(ddb: Any, key: str, value: str, only_existing: bool) -> Any:
    """``w`` and ``u`` set to the value, ``n`` counting this region's updates of the item (the whole item is what
    replicates: every replica must end with the same attributes)."""
    condition = {"ConditionExpression": "attribute_exists(pk)"} if only_existing else {}
    return ddb.update_item(TableName=TABLE, Key={"pk": {"S": key}}, UpdateExpression="SET w = :w, u = :w, "
                           "n = if_not_exists(n, :zero) + :one", ExpressionAttributeValues={":w": {"S": value},
                           ":zero": {"N": "0"}, ":one": {"N": "1"}}, **condition)  # fmt: skip


def _delete(ddb: Any, key: str, only_existing: bool) -> Any:
    condition = {"ConditionExpression": "attribute_exists(pk)"} if only_existing else {}
    return ddb.delete_item(TableName=TABLE, Key={"pk": {"S": key}}, **condition)


def create_global_table(regions: list[Region], timeout: float = 120) -> None:
    """The table created in the first region, then a replica added in each other region (UpdateTable with
    ReplicaUpdates, one at a time), and every region waited for until it shows the table and each replica ACTIVE."""
    first = regions[0].client(SETUP_CONFIG)
    create_table(first, TABLE)
    wait_replicas_active(regions[:1], [], timeout)
    for index, region in enumerate(regions[1:], start=1):
        create = [{"Create": {"RegionName": region.name}}]
        until_done(partial(first.update_table, TableName=TABLE, ReplicaUpdates=create), timeout=timeout)
        wait_replicas_active(regions[: index + 1], [r.name for r in regions[: index + 1]], timeout)


def create_table(ddb: Any, table: str) -> None:
    """``table`` (a string key ``pk``, on demand, a stream of new and old images: what a replica needs) created
    through ``ddb``, retried until it is there."""
    until_done(partial(ddb.create_table, TableName=table, BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}),
               accept=("ResourceInUseException",))  # fmt: skip


def wait_replicas_active(regions: list[Region], names: list[str], timeout: float, table: str = TABLE,
                         shows_also: Callable[[dict[str, Any]], bool] = lambda _: True,
                         also_wanted: str = "") -> None:  # fmt: skip
    """Until each of ``regions`` shows ``table`` ACTIVE with every other of ``names`` as an ACTIVE replica, and its
    description passes ``shows_also`` (``also_wanted`` says what that wants, in the error past ``timeout``)."""
    deadline = time.monotonic() + timeout
    for region in regions:
        ddb = region.client(SETUP_CONFIG)
        wanted = {name for name in names if name != region.name}
        while True:
            described = until_done(partial(ddb.describe_table, TableName=table), timeout=timeout,
                                   accept=("ResourceNotFoundException",))  # fmt: skip
            shown = (described or {}).get("Table", {})
            active = {r["RegionName"] for r in shown.get("Replicas", []) if r.get("ReplicaStatus") == "ACTIVE"}
            if shown.get("TableStatus") == "ACTIVE" and wanted <= active and shows_also(shown):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{region.name}: the table is not ACTIVE with replicas {sorted(wanted)}{also_wanted}: {shown}"
                )
            time.sleep(0.5)


def scan(region: Region, config: Config = SETUP_CONFIG, table: str = TABLE, consistent: bool = True,
         timeout: float = 20) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Every item of ``table`` in ``region``'s replica, by key: a Scan with ConsistentRead (what the region holds
    now), or eventually consistent; each page retried for up to ``timeout`` seconds."""
    ddb = region.client(config)
    items: dict[str, dict[str, Any]] = {}
    start: dict[str, Any] = {}
    while True:
        page = until_done(partial(ddb.scan, TableName=table, ConsistentRead=consistent, **start), timeout=timeout)
        assert page is not None
        items.update({item["pk"]["S"]: item for item in page["Items"]})
        if "LastEvaluatedKey" not in page:
            return items
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def outcome_counts(history: History, kinds: frozenset[str]) -> dict[str, int]:
    ops = [op for op in history.ops if op.kind in kinds]
    return {outcome.value: sum(op.outcome is outcome for op in ops) for outcome in Outcome}
