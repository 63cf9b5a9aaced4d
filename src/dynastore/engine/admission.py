"""Admission: the one API every data-plane handler calls before it reads or writes, and after.

Usage (see docs/capacity.md for every operation)::

    ticket = admission.admit_write(ctx, table, key, estimate_half_units, item=new_item_or_None)
    ...the write...
    admission.settle_write(ctx, ticket, result.old_size, result.new_size, old_item=..., new_item=..., gsi_units=...)

    admission.admit_read(ctx, table, key, half_units)              # raises when throttled
    ticket = admission.try_admit_read(ctx, table, key, half_units)   # None when throttled
    outcome = admission.attempt_read(ctx, table, key, half_units)    # Ticket, or the error (batches, transactions)

``admit_*`` raise ``ProvisionedThroughputExceededException`` (provisioned tables) or ``ThrottlingException``
(on-demand tables) with DynamoDB's messages and ``ThrottlingReasons``; ``try_admit_*`` return None instead and
``attempt_*`` the error, so a batch can put the item in ``UnprocessedKeys``/``UnprocessedItems`` (and raise the
error when nothing was admitted) and a transaction can cancel. A throttled request consumes nothing.
With ``--capacity report`` nothing is refused: a request that would have been throttled is counted (per
partition and in Contributor Insights) and served without taking capacity.

State: per server one ``Capacity`` (found from ``ctx.catalog``) holding per table a ``TableState``: the
partition maps of the table and of each GSI (persisted in the catalog's KV under ``#capacity:<table id>``:
hash ranges, weights, item counts and sizes, throughput basis, on-demand peaks, the as-if override and
Contributor Insights status) and the token buckets (memory only: a restart starts them afresh). Item counts
and sizes per partition are persisted at most every ``PERSIST_SECONDS`` and at every structural change.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import orjson

from dynastore import limits, messages
from dynastore.api.context import Context
from dynastore.api.per_server import PerServer
from dynastore.engine import throttle
from dynastore.engine.capacity import read_half_units, write_half_units
from dynastore.engine.contributors import ContributorCounters
from dynastore.engine.partitions import (
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
from dynastore.engine.throttle import Lane, Meter, TableBucket
from dynastore.errors import (
    DynamoError,
    LimitExceededException,
    ProvisionedThroughputExceededException,
    ThrottlingException,
)
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import DELETING, BillingMode, IndexDef, KeyAttr, ProvisionedThroughput, TableDef
from dynastore.model.values import Item
from dynastore.storage import keycodec
from dynastore.storage.itemcodec import stored_size

__all__ = [
    "AS_IF_TAG",
    "MIN_WRITE_HALF_UNITS",
    "PERSIST_SECONDS",
    "Ticket",
    "admit_read",
    "admit_write",
    "attempt_read",
    "attempt_write",
    "capacity_of",
    "check_throughput_decrease",
    "read_cost",
    "refund",
    "settle_failed_write",
    "settle_read",
    "settle_write",
    "try_admit_read",
    "try_admit_write",
]

AS_IF_TAG = "dynastore:partitions"  # reserved tag: behave as if the table held this many partitions
PERSIST_SECONDS = 60.0
_RECORD_PREFIX = "#capacity:"  # "#" cannot start a table name, so these never collide with table records
_REASONS = {
    throttle.KEY_RANGE: "KeyRangeThroughputExceeded",
    throttle.PROVISIONED: "ProvisionedThroughputExceeded",
    throttle.MAX_ON_DEMAND: "MaxOnDemandThroughputExceeded",
    throttle.ACCOUNT_LIMIT: "AccountLimitExceeded",
}


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

    def resources(self) -> list[Resource]:
        return [self.base, *self.gsis.values()]


class Capacity:
    """The capacity model of one server."""

    def __init__(self, ctx: Context) -> None:
        config = ctx.config
        self.ctx = ctx
        self.enforce = config.capacity != "report"
        self.limits = PartitionLimits(config.partition_size_limit, config.partition_max_rcu, config.partition_max_wcu)
        self.adaptive_delay = config.adaptive_delay
        self.tables: dict[int, TableState] = {}
        # What every request consumed, reads and writes, across tables (see throttle.Meter).
        self.meters = (Meter(), Meter())

    # ---- lookup -------------------------------------------------------------------------------------------
    def state(self, table: TableDef) -> TableState:
        st = self.tables.get(table.table_id)
        if st is None or st.td is not table:
            st = self._reconcile(table, st)
        return st

    def find(self, name: str) -> TableState:
        return self.state(self.ctx.catalog.get(name))

    # ---- building and reconciling -------------------------------------------------------------------------
    def _reconcile(self, td: TableDef, st: TableState | None) -> TableState:
        now = self.ctx.clock.now()
        arn = td.arn(self.ctx.config.region, self.ctx.config.account_id)
        if st is None:
            st = TableState(td, Resource(None, arn, keycodec.table_prefix(td.table_id), td, self.meters))
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
                res = Resource(idx, f"{arn}/index/{name}", keycodec.index_prefix(idx.index_id), td, self.meters)
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
        size = self.ctx.catalog.stats(td.name)[1] if idx is None else 0
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
        odt = td.on_demand if idx is None else idx.on_demand
        res.on_demand_max = (None, None) if odt is None else (odt.max_read, odt.max_write)
        if provisioned != res.provisioned or (read, write) != (res.read_units, res.write_units) or changed:
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
            rate, binding = float(units), throttle.PROVISIONED
            if not res.provisioned:
                binding = throttle.KEY_RANGE
                if od_max is not None and od_max > 0 and od_max < rate:
                    rate, binding = float(od_max), throttle.MAX_ON_DEMAND
                if quota < rate:
                    rate, binding = float(quota), throttle.ACCOUNT_LIMIT
            total.set_rate(rate, rate, now)
            if rebuild:
                total.tokens = rate  # a fresh table bucket starts with one second of capacity
            total.binding = binding

    def _after_structural_change(self, st: TableState, res: Resource) -> None:
        res.unsplittable.clear()
        if res.index_name is None and res.override is None:
            self._measure(st, res)

    def _measure(self, st: TableState, res: Resource) -> None:
        items = self.ctx.catalog.stats(st.td.name)[0]
        if res.index_name is None and items <= MEASURE_MAX_ITEMS:
            measure(self.ctx.kv, res.prefix, res.pmap)

    def _apply_as_if(self, st: TableState, now: float) -> None:
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
        self._apply_as_if(st, self.ctx.clock.now())
        self.persist(st)

    def spend_burst(self, st: TableState) -> None:
        """Every partition of the table and its GSIs as after a busy spell: one second of its share left and no
        burst credit (a new partition starts with all of it). A test aid for throttling on a fresh table."""
        now = self.ctx.clock.now()
        for res in st.resources():
            for lane in (*res.reads, *res.writes):
                lane.spend_burst(now)

    def rebuild(self, st: TableState) -> None:
        """Re-partition the table as DynamoDB would on restoring it: from its throughput and its size now."""
        now = self.ctx.clock.now()
        res = st.base
        read, write = self._wanted(res, st.td, None)
        size = self.ctx.catalog.stats(st.td.name)[1]
        res.natural = PartitionMap.even(initial_partition_count(read, write, size, self.limits))
        self._after_structural_change(st, res)
        self._rates(res, now, rebuild=True)
        self.persist(st)

    # ---- persistence --------------------------------------------------------------------------------------
    def _load(self, st: TableState, td: TableDef) -> bool:
        with self.ctx.kv.read() as txn:
            raw = txn.get(keycodec.meta_key(f"{_RECORD_PREFIX}{td.table_id}"))
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
            res = Resource(idx, f"{st.base.arn}/index/{name}", keycodec.index_prefix(idx.index_id), td, self.meters)
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
        if not self.ctx.kv.writable:
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
        with self.ctx.kv.write() as txn:
            txn.put(keycodec.meta_key(f"{_RECORD_PREFIX}{st.td.table_id}"), orjson.dumps(rec))
        st.dirty = False
        st.last_persist = self.ctx.clock.now()

    # ---- size splits --------------------------------------------------------------------------------------
    def split_if_full(self, st: TableState, res: Resource, index: int) -> None:
        p = res.natural.partitions[index]
        if p.bytes <= self.limits.max_bytes or p.lo in res.unsplittable or p.hi - p.lo < 2:
            return
        at = split_point(self.ctx.kv, res.prefix, p)
        if at is None:
            res.unsplittable.add(p.lo)  # one item collection: it cannot be divided
            return
        now = self.ctx.clock.now()
        left, right = res.natural.split(index, at)
        _recount(self, res, left, right)
        for lanes in (res.reads, res.writes):
            lanes.insert(index + 1, lanes[index].split(now))
        self.persist(st)


def _recount(cap: Capacity, res: Resource, left: Partition, right: Partition) -> None:
    """Exact sizes of two fresh children from their stored items."""
    pmap = PartitionMap([left, right])
    for p in pmap:
        p.items = 0
        p.bytes = 0
    for h, size in item_sizes(cap.ctx.kv, res.prefix, left.lo, right.hi):
        p = left if h < right.lo else right
        p.items += 1
        p.bytes += size


capacity_of = PerServer(Capacity)  # capacity_of(ctx): the capacity model of ctx's server


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


# ---------------------------------------------------------------------------------------------- admission


class Ticket:
    """What an admitted request took, so its cost can be settled (or refunded) afterwards. (A plain class: one is
    made per request, and a compiled build makes a dataclass through its interpreted __init__.)"""

    __slots__ = ("state", "resource", "lane", "index", "half_units", "key", "write", "transactional", "took", "extra")

    def __init__(
        self,
        state: TableState,
        resource: Resource,
        lane: Lane,
        index: int,
        half_units: int,
        key: bytes,
        write: bool,
        *,
        transactional: bool = False,
        took: int = throttle.OK,
    ) -> None:
        self.state = state
        self.resource = resource
        self.lane = lane
        self.index = index  # the partition's position in the resource's map
        self.half_units = half_units
        self.key = key
        self.write = write
        self.transactional = transactional
        self.took = took  # what the admission took from ``lane`` (for a refund)
        self.extra: list[tuple[Resource, Lane, int, int]] = []  # GSI lanes taken, and how


def admit_read(ctx: Context, table: TableDef, key: bytes, half_units: int, *, index: str | None = None) -> Ticket:
    """Admit a read of ``half_units`` at storage key ``key`` (a table key, or an index key with ``index``);
    raises the throttling error DynamoDB returns for the table's billing mode."""
    ticket = _admit(ctx, table, key, half_units, False, index, None)
    if isinstance(ticket, DynamoError):
        raise ticket
    return ticket


def try_admit_read(
    ctx: Context, table: TableDef, key: bytes, half_units: int, *, index: str | None = None
) -> Ticket | None:
    ticket = _admit(ctx, table, key, half_units, False, index, None)
    return None if isinstance(ticket, DynamoError) else ticket


def attempt_read(
    ctx: Context, table: TableDef, key: bytes, half_units: int, *, index: str | None = None
) -> Ticket | DynamoError:
    """Like ``try_admit_read``, but a refusal returns the error ``admit_read`` would raise: batches raise it
    when every key was refused, transactions turn it into a cancellation reason."""
    return _admit(ctx, table, key, half_units, False, index, None)


def admit_write(
    ctx: Context, table: TableDef, key: bytes, half_units: int, *, item: Item | None = None, transactional: bool = False
) -> Ticket:
    """Admit a write estimated at ``half_units`` to ``key``; ``item`` (the new item, when known before the
    write) lets every GSI the item will update admit it too, so an index short of capacity throttles the
    table write (DynamoDB: "the throttled GSI also throttles the table writes")."""
    ticket = _admit(ctx, table, key, half_units, True, None, item)
    if isinstance(ticket, DynamoError):
        raise ticket
    ticket.transactional = transactional
    return ticket


def try_admit_write(
    ctx: Context, table: TableDef, key: bytes, half_units: int, *, item: Item | None = None, transactional: bool = False
) -> Ticket | None:
    ticket = attempt_write(ctx, table, key, half_units, item=item, transactional=transactional)
    return None if isinstance(ticket, DynamoError) else ticket


def attempt_write(
    ctx: Context, table: TableDef, key: bytes, half_units: int, *, item: Item | None = None, transactional: bool = False
) -> Ticket | DynamoError:
    """Like ``try_admit_write``, but a refusal returns the error ``admit_write`` would raise."""
    ticket = _admit(ctx, table, key, half_units, True, None, item)
    if not isinstance(ticket, DynamoError):
        ticket.transactional = transactional
    return ticket


def _admit(
    ctx: Context, table: TableDef, key: bytes, half_units: int, write: bool, index: str | None, item: Item | None
) -> Ticket | DynamoError:
    cap = capacity_of(ctx)
    st = cap.tables.get(table.table_id)
    if st is None or st.td is not table:
        st = cap.state(table)
    res = st.base if index is None else st.gsis.get(index, st.base)
    now = ctx.clock.now()
    position = res.pmap.index_of(int.from_bytes(key[5:9], "big") if len(key) >= 9 else 0)
    units = half_units / 2
    lane = (res.writes if write else res.reads)[position]
    took = _take(cap, st, res, lane, units, now, write, key)
    if isinstance(took, DynamoError):
        return took
    ticket = Ticket(st, res, lane, position, half_units, key, write, took=took)
    if write and item is not None and st.gsis:
        for gsi in st.gsis.values():
            gsi_key = _index_key(gsi, item)
            if gsi_key is None:
                continue
            gsi_lane = gsi.writes[gsi.pmap.index_of(int.from_bytes(gsi_key[5:9], "big"))]
            took = _take(cap, st, gsi, gsi_lane, units, now, True, gsi_key)
            if isinstance(took, DynamoError):
                refund(ctx, ticket)
                return took
            ticket.extra.append((gsi, gsi_lane, half_units, took))
    return ticket


def _take(
    cap: Capacity, st: TableState, res: Resource, lane: Lane, units: float, now: float, write: bool, key: bytes
) -> DynamoError | int:
    """What was taken (throttle.OK, BORROWED or NOT_TAKEN, for a refund), or the error of a refusal."""
    total = res.write_total if write else res.read_total
    reason = throttle.decide(lane, total, units, now, cap.adaptive_delay, res.provisioned)
    insights = res.insights
    if reason in throttle.ADMITTED:
        if not res.provisioned and total.peak > (res.peaks[1] if write else res.peaks[0]):
            _new_peak(cap, st, res, now)
        if insights is not None:
            _count(res, insights, now, key, units * 3 if write else units, False)
        return reason
    if insights is not None:
        _count(res, insights, now, key, 0.0, True)
    if not cap.enforce:
        total.meter.units += units  # metered as consumed all the same: the request is served
        return throttle.NOT_TAKEN  # report mode: counted as throttled, served without taking capacity
    return _error(res, reason, write)


def _error(res: Resource, reason: int, write: bool) -> DynamoError:
    kind = ("Table" if res.index_name is None else "Index") + ("Write" if write else "Read") + _REASONS[reason]
    reasons = [{"reason": kind, "resource": res.arn}]
    if res.provisioned:
        text = messages.THROUGHPUT_EXCEEDED_TABLE if res.index_name is None else messages.THROUGHPUT_EXCEEDED_INDEX
        return ProvisionedThroughputExceededException(text, ThrottlingReasons=reasons)
    text = messages.THROTTLED_ON_DEMAND if res.index_name is None else messages.THROTTLED_ON_DEMAND_INDEX
    return ThrottlingException(text, throttlingReasons=reasons)


def _new_peak(cap: Capacity, st: TableState, res: Resource, now: float) -> None:
    """An on-demand table reached a new peak: it may now take up to double that, on more partitions."""
    res.peaks = (max(res.peaks[0], res.read_total.peak), max(res.peaks[1], res.write_total.peak))
    idx = None if res.index_name is None else st.td.index(res.index_name)
    if cap.apply_throughput(st, res, st.td, idx, now):
        cap.persist(st)
    else:
        st.dirty = True


def refund(ctx: Context, ticket: Ticket) -> None:
    """Give back everything ``ticket`` took (an operation refused as a whole after this part was admitted)."""
    res = ticket.resource
    throttle.refund(
        ticket.lane, res.write_total if ticket.write else res.read_total, ticket.half_units / 2, ticket.took
    )
    for gsi, lane, half_units, took in ticket.extra:
        throttle.refund(lane, gsi.write_total, half_units / 2, took)
    ticket.extra.clear()


MIN_WRITE_HALF_UNITS = 2  # the estimate of a write whose size is known only once it ran (one write unit)


def read_cost(raw: bytes | None, *, consistent: bool) -> int:
    """The half-units of reading one stored item (None: nothing found, the minimum), from its stored size."""
    return read_half_units(0 if raw is None else stored_size(raw), consistent=consistent)


def settle_failed_write(ctx: Context, ticket: Ticket, old: Item | None) -> None:
    """A write whose condition was false still consumes write capacity, by the size of the stored item;
    nothing changed, so no partition size moves."""
    size = 0 if old is None else item_size(old)
    settle_write(ctx, ticket, size, size)


def settle_read(ctx: Context, ticket: Ticket, half_units: int) -> None:
    """The read's actual cost (Query/Scan: known only after the page was read); the difference is charged
    without refusal, so an underestimate leaves a debt the partition pays back."""
    delta = half_units - ticket.half_units
    if delta:
        res = ticket.resource
        throttle.charge(ticket.lane, res.read_total, delta / 2, ctx.clock.now())
        ticket.half_units = half_units


def settle_write(
    ctx: Context,
    ticket: Ticket,
    old_size: int,
    new_size: int,
    *,
    old_item: Item | None = None,
    new_item: Item | None = None,
    gsi_units: dict[str, int] | None = None,
) -> None:
    """After the write: charge the actual cost (the larger of the old and new item), account the partition's
    item count and size (splitting it when it passes the size limit), and charge the GSIs the write touched
    that were not admitted before it (UpdateItem/DeleteItem, and a changed index key). ``gsi_units``: the
    write half-units each GSI actually took (engine/indexes.py; None: the write touched no GSI); the estimate
    taken at admission is corrected."""
    actual = write_half_units(max(old_size, new_size), transactional=ticket.transactional)
    res = ticket.resource
    now = ctx.clock.now()
    if actual != ticket.half_units:
        throttle.charge(ticket.lane, res.write_total, (actual - ticket.half_units) / 2, now)
        ticket.half_units = actual
    st = ticket.state
    if st.gsis and gsi_units is not None:
        _settle_index_units(ticket, old_item, new_item, gsi_units, now)
    if old_size == new_size and (old_size == 0) == (new_size == 0):
        return
    parts = res.pmap.partitions
    position = ticket.index
    h = int.from_bytes(ticket.key[5:9], "big")
    if position >= len(parts) or not parts[position].lo <= h < parts[position].hi:
        position = res.pmap.index_of(h)  # the map changed during the request (an on-demand table grew)
    p = parts[position]
    p.items += (new_size > 0) - (old_size > 0)
    p.bytes += new_size - old_size
    cap = capacity_of(ctx)
    if p.bytes > cap.limits.max_bytes and res.override is None:
        cap.split_if_full(st, res, position)
    else:
        st.dirty = True
        if now - st.last_persist >= PERSIST_SECONDS:
            cap.persist(st)


def account_deleted(ctx: Context, table: TableDef, key: bytes, old_size: int) -> None:
    """A deletion that consumes no capacity (TTL): keep the partition's item count and size right."""
    if not old_size:
        return
    res = capacity_of(ctx).state(table).base
    p = res.pmap.partitions[res.pmap.index_of(int.from_bytes(key[5:9], "big"))]
    p.items -= 1
    p.bytes -= old_size


def _settle_index_units(
    ticket: Ticket, old_item: Item | None, new_item: Item | None, gsi_units: dict[str, int], now: float
) -> None:
    """Charge each GSI what the write really cost it, less what admission took from it."""
    factor = 2 if ticket.transactional else 1
    taken = {gsi.index_name: (lane, half_units) for gsi, lane, half_units, _ in ticket.extra}
    for gsi in ticket.state.gsis.values():
        name = gsi.index_name
        assert name is not None
        lane_taken = taken.get(name)
        delta = gsi_units.get(name, 0) * factor - (0 if lane_taken is None else lane_taken[1])
        if not delta:
            continue
        if lane_taken is not None:
            lane = lane_taken[0]
        else:
            key = None if new_item is None else _index_key(gsi, new_item)
            if key is None and old_item is not None:
                key = _index_key(gsi, old_item)
            if key is None:
                continue
            lane = gsi.writes[gsi.pmap.index_of(int.from_bytes(key[5:9], "big"))]
        throttle.charge(lane, gsi.write_total, delta / 2, now)


def _index_key(gsi: Resource, item: Item) -> bytes | None:
    """The index-key prefix (prefix, partition hash, encoded key) an item has in ``gsi``, or None."""
    encoded = b""
    for attr in gsi.hash_attrs:
        value = item.get(attr.name)
        if value is None or attr.type not in value or value[attr.type] == "":
            return None
        encoded += keycodec.encode_value(attr.type, value[attr.type])
    key = gsi.prefix + keycodec.partition_hash(encoded) + encoded
    for rng in gsi.range_attrs:
        rvalue = item.get(rng.name)
        if rvalue is None or rng.type not in rvalue or rvalue[rng.type] == "":
            return None
        key += keycodec.encode_value(rng.type, rvalue[rng.type])
    return key


def _count(res: Resource, insights: ContributorCounters, now: float, key: bytes, units: float, throttled: bool) -> None:
    if len(key) <= 9:
        return  # a bare prefix (the start of a Scan segment): no key to name
    _, end = keycodec.decode_value(res.hash_attr.type, key, 9)
    insights.record(now, key[9:end], key[9:] if res.range_attr is not None else None, units, throttled)


# ---------------------------------------------------------------------------------------------- control plane


def check_throughput_decrease(current: ProvisionedThroughput, now: float) -> None:
    """DynamoDB's daily limit on decreases: 4 at any time of the UTC day, then one an hour after the last
    one (27 in all). Raises LimitExceededException with DynamoDB's text."""
    count = current.decreases_on(now)
    if count < limits.THROUGHPUT_FREE_DECREASES:
        return
    last = current.last_decrease
    assert last is not None
    next_at = last + limits.THROUGHPUT_DECREASE_INTERVAL
    if count >= limits.MAX_THROUGHPUT_DECREASES_PER_DAY:
        next_at = (now // 86400 + 1) * 86400
    elif now >= next_at:
        return
    raise LimitExceededException(
        messages.THROUGHPUT_DECREASE_LIMIT.format(count=count, last=utc_text(last), next=utc_text(next_at))
    )


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def utc_text(t: float) -> str:
    """``Friday, October 9, 2026 at 12:21:34 AM Coordinated Universal Time`` (as DynamoDB writes times)."""
    d = datetime.datetime.fromtimestamp(int(t), datetime.UTC)
    hour = d.hour % 12 or 12
    half = "AM" if d.hour < 12 else "PM"
    return (
        f"{_DAYS[d.weekday()]}, {_MONTHS[d.month - 1]} {d.day}, {d.year} at "
        f"{hour}:{d.minute:02d}:{d.second:02d} {half} Coordinated Universal Time"
    )
