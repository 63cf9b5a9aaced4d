"""The capacity model of one server: per table a ``TableState`` with the partition maps of the table and of each
GSI (persisted under the capacity record of storage/keyspace.py: hash ranges, weights, item counts and sizes,
throughput basis, on-demand peaks, the as-if override and Contributor Insights status) and the token buckets
(memory only: a restart starts them afresh). Item counts and sizes per partition are persisted at most every
``PERSIST_SECONDS`` and at every structural change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from dynastore import limits
from dynastore.config import Config
from dynastore.engine.capacity import buckets
from dynastore.engine.capacity.buckets import Lane, Meter, TableBucket
from dynastore.engine.capacity.contributors import ContributorCounters
from dynastore.engine.capacity.history import PartitionHistory
from dynastore.engine.capacity.partitions import (
    MEASURE_MAX_ITEMS,
    Partition,
    PartitionLimits,
    PartitionMap,
    grow_for_throughput,
    initial_partition_count,
    item_sizes,
    measure,
    split_point,
)
from dynastore.engine.progress import SPLIT, Jobs
from dynastore.model.table_schema import DELETING, BillingMode, IndexDef, KeyAttr, ProvisionedThroughput, TableDef
from dynastore.storage import keyspace
from dynastore.storage.catalog import Catalog
from dynastore.storage.kv import KV

AS_IF_TAG = "dynastore:partitions"  # reserved tag: behave as if the table held this many partitions
PERSIST_SECONDS = 60.0

# ---------------------------------------------------------------------------------------------- state


class Resource:
    """The table itself or one of its GSIs: partition map, lanes, totals, insights."""

    def __init__(
        self, index: IndexDef | None, arn: str, prefix: bytes, table: TableDef, meters: tuple[Meter, Meter]
    ) -> None:
        self.index_name = None if index is None else index.name
        key_schema = table.key_schema if index is None else index.key_schema
        self.hash_attr: KeyAttr = key_schema.hash_key
        self.range_attr: KeyAttr | None = key_schema.range_key
        self.hash_attrs = key_schema.hash_keys  # all of them (multi-attribute GSI keys)
        self.range_attrs = key_schema.range_keys
        self.arn = arn
        self.prefix = prefix
        self.natural = PartitionMap.even(1)
        self.override: PartitionMap | None = None
        self.provisioned = True
        self.read_units = 0  # provisioned RCU (or, on demand, what the table may take at once)
        self.write_units = 0
        self.basis = (0, 0)  # the provisioned throughput the partitions were last sized for
        self.peaks = (0.0, 0.0)  # on-demand: highest one-second consumption seen
        self.on_demand_max: tuple[int | None, int | None] = (None, None)
        self.reads: list[Lane] = []
        self.writes: list[Lane] = []
        self.read_total = TableBucket(0.0, 0.0, meter=meters[0])
        self.write_total = TableBucket(0.0, 0.0, meter=meters[1])
        self.insights: ContributorCounters | None = None
        self.insights_status: tuple[str, str, float] | None = None  # (status, mode, last update)
        self.unsplittable: set[int] = set()

    @property
    def pmap(self) -> PartitionMap:
        return self.override if self.override is not None else self.natural

    def to_record(self) -> dict[str, Any]:
        return {"parts": self.natural.to_record(), "basis": list(self.basis), "peaks": list(self.peaks)}

    def load_record(self, rec: dict[str, Any]) -> None:
        self.natural = PartitionMap.from_record(rec["parts"])
        self.basis = (int(rec["basis"][0]), int(rec["basis"][1]))
        self.peaks = (float(rec["peaks"][0]), float(rec["peaks"][1]))


@dataclass
class TableState:
    td: TableDef
    base: Resource
    gsis: dict[str, Resource] = field(default_factory=dict)
    as_if: int | None = None  # set through the extension endpoint / CLI
    tag_as_if: int | None = None  # set through the reserved tag
    dirty: bool = False
    last_persist: float = 0.0
    history: PartitionHistory = field(default_factory=PartitionHistory)  # memory only (history.py)

    def resources(self) -> list[Resource]:
        return [self.base, *self.gsis.values()]

    def capture_history(self, now: float) -> None:
        """Bring the partition history up to ``now`` (before a lane is replaced or the history is shown)."""
        self.history.capture(now, ((r.index_name or "", r.pmap, r.reads, r.writes) for r in self.resources()))


class Capacity:
    """The capacity model of one server."""

    def __init__(self, config: Config, kv: KV, catalog: Catalog, progress: Jobs | None = None) -> None:
        self.config = config
        self.kv = kv
        self.catalog = catalog
        self.clock = config.clock
        self.enforce = config.capacity != "report"
        self.limits = PartitionLimits(config.partition_size_limit, config.partition_max_rcu, config.partition_max_wcu)
        self.adaptive_delay = config.adaptive_delay
        self.tables: dict[int, TableState] = {}
        # What every request consumed, reads and writes, across tables (see buckets.Meter).
        self.meters = (Meter(), Meter())
        # the long work running now (engine/progress.py): a size split is one
        self.progress = Jobs(config.clock) if progress is None else progress

    # ---- lookup -------------------------------------------------------------------------------------------
    def state(self, table: TableDef) -> TableState:
        st = self.tables.get(table.table_id)
        if st is None or st.td is not table:
            st = self._reconcile(table, st)
        return st

    def find(self, name: str) -> TableState:
        """The state of table ``name`` of the default namespace."""
        return self.state(self.catalog.get(name))

    # ---- building and reconciling -------------------------------------------------------------------------
    def _reconcile(self, td: TableDef, st: TableState | None) -> TableState:
        now = self.clock.now()
        arn = self.catalog.owner(td).arn(td.name)  # the ARN in the table's namespace
        if st is None:
            st = TableState(td, Resource(None, arn, keyspace.table_prefix(td.table_id), td, self.meters))
            self.tables[td.table_id] = st
            if not self._load(st, td):
                self._fresh(st, st.base, td, None)
                st.dirty = True
        changed = st.dirty
        live = {g.name: g for g in td.gsis if g.status != DELETING}
        for name in [n for n in st.gsis if n not in live]:
            del st.gsis[name]
            changed = True
        for name, idx in live.items():
            if name not in st.gsis:
                res = Resource(idx, f"{arn}/index/{name}", keyspace.index_prefix(idx.index_id), td, self.meters)
                st.gsis[name] = res
                self._fresh(st, res, td, idx)
                changed = True
        st.td = td
        for res in st.resources():
            index = None if res.index_name is None else live[res.index_name]
            changed |= self.apply_throughput(st, res, td, index, now)
        tag = _as_if_tag(td)
        if tag != st.tag_as_if:
            st.tag_as_if = tag
            self._apply_as_if(st, now)
            changed = True
        if changed:
            self.persist(st)
        return st

    def _fresh(self, st: TableState, res: Resource, td: TableDef, idx: IndexDef | None) -> None:
        """A new table's (or index's) partitions, from its throughput and the data it already holds."""
        read, write = self._wanted(res, td, idx)
        size = self.catalog.owner(td).stats(td.name)[1] if idx is None else 0
        res.natural = PartitionMap.even(initial_partition_count(read, write, size, self.limits))
        res.basis = (read, write) if _provisioned(td) else res.basis
        if idx is None and size:
            self._measure(st, res)

    def _wanted(self, res: Resource, td: TableDef, idx: IndexDef | None) -> tuple[int, int]:
        """The throughput the partitions must serve: provisioned units, or what an on-demand table may take."""
        if _provisioned(td):
            pt = td.throughput if idx is None else (idx.throughput or ProvisionedThroughput(0, 0))
            return pt.read, pt.write
        read = max(limits.ON_DEMAND_INITIAL_READ, res.basis[0], int(2 * res.peaks[0]))
        write = max(limits.ON_DEMAND_INITIAL_WRITE, res.basis[1], int(2 * res.peaks[1]))
        return read, write

    def apply_throughput(self, st: TableState, res: Resource, td: TableDef, idx: IndexDef | None, now: float) -> bool:
        """Bring partitions and rates in line with the table definition; True if the persisted map changed."""
        st.capture_history(now)  # the map may grow and the lanes be replaced: take their counts first
        provisioned = _provisioned(td)
        read, write = self._wanted(res, td, idx)
        changed = False
        if provisioned and (read, write) != res.basis:
            if grow_for_throughput(res.natural, read, write, self.limits):
                self._after_structural_change(st, res)
            res.basis = (read, write)
            changed = True
        elif not provisioned and grow_for_throughput(res.natural, read, write, self.limits):
            self._after_structural_change(st, res)
            changed = True
        odt = td.on_demand_of(idx)
        on_demand_max = (None, None) if odt is None else (odt.max_read, odt.max_write)
        # (a new on-demand maximum alone changes the table's buckets too: UpdateTable's OnDemandThroughput)
        retuned = on_demand_max != res.on_demand_max
        res.on_demand_max = on_demand_max
        if provisioned != res.provisioned or (read, write) != (res.read_units, res.write_units) or changed or retuned:
            res.provisioned = provisioned
            res.read_units, res.write_units = read, write
            self._rates(res, now, rebuild=changed or not res.reads)
        return changed

    def _rates(self, res: Resource, now: float, *, rebuild: bool) -> None:
        """Set every lane's share and ceiling and the table buckets from the current map and throughput."""
        lim = self.limits
        pmap = res.pmap
        burst = res.provisioned
        if rebuild or len(res.reads) != len(pmap):
            res.reads = [Lane(0.0, lim.max_rcu, now, burst=burst) for _ in pmap]
            res.writes = [Lane(0.0, lim.max_wcu, now, burst=burst) for _ in pmap]
        for i, p in enumerate(pmap):
            share_r = float(p.weight) * res.read_units if res.provisioned else float(lim.max_rcu)
            share_w = float(p.weight) * res.write_units if res.provisioned else float(lim.max_wcu)
            if rebuild:
                res.reads[i] = Lane(share_r, lim.max_rcu, now, burst=burst)
                res.writes[i] = Lane(share_w, lim.max_wcu, now, burst=burst)
            else:
                res.reads[i].resize(share_r, lim.max_rcu, now, burst=burst)
                res.writes[i].resize(share_w, lim.max_wcu, now, burst=burst)
        for total, units, od_max, quota in (
            (res.read_total, res.read_units, res.on_demand_max[0], limits.TABLE_MAX_READ_CAPACITY),
            (res.write_total, res.write_units, res.on_demand_max[1], limits.TABLE_MAX_WRITE_CAPACITY),
        ):
            rate, binding = float(units), buckets.PROVISIONED
            if not res.provisioned:
                binding = buckets.KEY_RANGE
                if od_max is not None and od_max > 0 and od_max < rate:
                    rate, binding = float(od_max), buckets.MAX_ON_DEMAND
                if quota < rate:
                    rate, binding = float(quota), buckets.ACCOUNT_LIMIT
            total.set_rate(rate, rate, now)
            if rebuild:
                total.tokens = rate  # a fresh table bucket starts with one second of capacity
            total.binding = binding

    def _after_structural_change(self, st: TableState, res: Resource) -> None:
        res.unsplittable.clear()
        if res.index_name is None and res.override is None:
            self._measure(st, res)

    def _measure(self, st: TableState, res: Resource) -> None:
        items = self.catalog.owner(st.td).stats(st.td.name)[0]
        if res.index_name is None and items <= MEASURE_MAX_ITEMS:
            measure(self.kv, res.prefix, res.pmap)

    def _apply_as_if(self, st: TableState, now: float) -> None:
        st.capture_history(now)  # the lanes of the map in force until now
        wanted = st.tag_as_if if st.tag_as_if is not None else st.as_if
        res = st.base
        if wanted:
            res.override = PartitionMap.even(wanted)
        else:
            res.override = None
        self._measure(st, res)
        self._rates(res, now, rebuild=True)

    # ---- extension operations -----------------------------------------------------------------------------
    def set_as_if(self, st: TableState, count: int | None) -> None:
        st.as_if = count or None
        self._apply_as_if(st, self.clock.now())
        self.persist(st)

    def spend_burst(self, st: TableState) -> None:
        """Every partition of the table and its GSIs as after a busy spell: one second of its share left and no
        burst credit (a new partition starts with all of it). A test aid for throttling on a fresh table."""
        now = self.clock.now()
        for res in st.resources():
            for lane in (*res.reads, *res.writes):
                lane.spend_burst(now)

    def rebuild(self, st: TableState) -> None:
        """Re-partition the table as DynamoDB would on restoring it: from its throughput and its size now."""
        now = self.clock.now()
        st.capture_history(now)
        res = st.base
        read, write = self._wanted(res, st.td, None)
        size = self.catalog.owner(st.td).stats(st.td.name)[1]
        res.natural = PartitionMap.even(initial_partition_count(read, write, size, self.limits))
        self._after_structural_change(st, res)
        self._rates(res, now, rebuild=True)
        self.persist(st)

    # ---- persistence --------------------------------------------------------------------------------------
    def _load(self, st: TableState, td: TableDef) -> bool:
        with self.kv.read() as txn:
            raw = txn.get(keyspace.capacity_record_key(td.table_id))
        if raw is None:
            return False
        rec = orjson.loads(raw)
        st.as_if = rec.get("as_if")
        resources = rec["resources"]
        st.base.load_record(resources[""])
        for name, idx_rec in resources.items():
            idx = td.index(name) if name else None
            if idx is None or idx.kind != "GSI":
                continue
            res = Resource(idx, f"{st.base.arn}/index/{name}", keyspace.index_prefix(idx.index_id), td, self.meters)
            res.load_record(idx_rec)
            st.gsis[name] = res
        for name, (status, mode, at) in rec.get("insights", {}).items():
            target = st.base if not name else st.gsis.get(name)
            if target is not None:
                target.insights_status = (status, mode, at)
                target.insights = ContributorCounters(mode) if status == "ENABLED" else None
        if st.as_if:
            st.base.override = PartitionMap.even(st.as_if)
            self._measure(st, st.base)
        return True

    def persist(self, st: TableState) -> None:
        if not self.kv.writable:
            st.dirty = True  # read-only after a storage failure (a full disk): saved once writes resume
            return
        rec = {
            "kind": "capacity",
            "id": st.td.table_id,
            "as_if": st.as_if,
            "resources": {(r.index_name or ""): r.to_record() for r in st.resources()},
            "insights": {
                (r.index_name or ""): list(r.insights_status) for r in st.resources() if r.insights_status is not None
            },
        }
        with self.kv.write() as txn:
            txn.put(keyspace.capacity_record_key(st.td.table_id), orjson.dumps(rec))
        st.dirty = False
        st.last_persist = self.clock.now()

    # ---- size splits --------------------------------------------------------------------------------------
    def split_if_full(self, st: TableState, res: Resource, index: int) -> None:
        p = res.natural.partitions[index]
        if p.bytes <= self.limits.max_bytes or p.lo in res.unsplittable or p.hi - p.lo < 2:
            return
        _, _, _, region, account, _ = res.arn.split(":", 5)
        job = self.progress.start(
            SPLIT, (res.prefix, p.lo), st.td.name, index=res.index_name, total=p.items, account=account, region=region
        )
        at = split_point(self.kv, res.prefix, p)
        if at is None:
            res.unsplittable.add(p.lo)  # one item collection: it cannot be divided
            self.progress.finish(job, "its items all have one partition key value: it cannot be divided")
            return
        now = self.clock.now()
        left, right = res.natural.split(index, at)
        _recount(self, res, left, right)
        for lanes in (res.reads, res.writes):
            lanes.insert(index + 1, lanes[index].split(now))
        self.persist(st)
        job.done = left.items + right.items
        self.progress.finish(job)


def _recount(cap: Capacity, res: Resource, left: Partition, right: Partition) -> None:
    """Exact sizes of two fresh children from their stored items."""
    pmap = PartitionMap([left, right])
    for p in pmap:
        p.items = 0
        p.bytes = 0
    for h, size in item_sizes(cap.kv, res.prefix, left.lo, right.hi):
        p = left if h < right.lo else right
        p.items += 1
        p.bytes += size


def _provisioned(td: TableDef) -> bool:
    return td.billing_mode is BillingMode.PROVISIONED


def _as_if_tag(td: TableDef) -> int | None:
    for key, value in td.tags:
        if key == AS_IF_TAG:
            try:
                count = int(value)
            except ValueError:
                return None
            return count if 0 < count <= limits.MAX_AS_IF_PARTITIONS else None  # a larger count is ignored
    return None
