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

State: ``ctx.capacity``, the server's capacity model (engine/capacity/state.py).
"""

from __future__ import annotations

from dynastore import messages
from dynastore.engine.capacity import buckets
from dynastore.engine.capacity.buckets import ADMITTED, Lane
from dynastore.engine.capacity.contributors import ContributorCounters
from dynastore.engine.capacity.partitions import partition_of_key
from dynastore.engine.capacity.state import PERSIST_SECONDS, Capacity, Resource, TableState
from dynastore.engine.capacity.units import read_half_units, write_half_units
from dynastore.engine.context import Context
from dynastore.errors import (
    DynamoError,
    ProvisionedThroughputExceededException,
    ThrottlingException,
)
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.storage import keycodec, keyspace
from dynastore.storage.itemcodec import stored_size
from dynastore.storage.keyspace import KEY_HEAD_BYTES

_REASONS = {
    buckets.KEY_RANGE: "KeyRangeThroughputExceeded",
    buckets.PROVISIONED: "ProvisionedThroughputExceeded",
    buckets.MAX_ON_DEMAND: "MaxOnDemandThroughputExceeded",
    buckets.ACCOUNT_LIMIT: "AccountLimitExceeded",
}

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
        took: int = buckets.OK,
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


class Joint:
    """One request made of many items (a transaction), admitted as one request on an on-demand table: DynamoDB
    takes a transaction's items together, so the table bucket decides once, on the request's whole cost on
    that table (``units``, by table id: a fresh on-demand table's 4,000 write units a second admit a 3.5 MB
    transaction of 7,000), and a partition once, at its first item; the later items take their part without
    asking, possibly leaving a debt, as one large item does."""

    __slots__ = ("units", "admitted")

    def __init__(self, units: dict[int, float]) -> None:
        self.units = units  # capacity units of the whole request per table id (its GSIs ask for as much)
        self.admitted: set[object] = set()  # the lanes and table buckets that admitted the request


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
    ctx: Context, table: TableDef, key: bytes, half_units: int, *, index: str | None = None, joint: Joint | None = None
) -> Ticket | DynamoError:
    """Like ``try_admit_read``, but a refusal returns the error ``admit_read`` would raise: batches raise it
    when every key was refused, transactions turn it into a cancellation reason (``joint``: the transaction's
    items are admitted as one request)."""
    return _admit(ctx, table, key, half_units, False, index, None, joint)


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
    ctx: Context,
    table: TableDef,
    key: bytes,
    half_units: int,
    *,
    item: Item | None = None,
    transactional: bool = False,
    joint: Joint | None = None,
) -> Ticket | DynamoError:
    """Like ``try_admit_write``, but a refusal returns the error ``admit_write`` would raise (``joint``: the
    transaction's items are admitted as one request)."""
    ticket = _admit(ctx, table, key, half_units, True, None, item, joint)
    if not isinstance(ticket, DynamoError):
        ticket.transactional = transactional
    return ticket


def _admit(
    ctx: Context,
    table: TableDef,
    key: bytes,
    half_units: int,
    write: bool,
    index: str | None,
    item: Item | None,
    joint: Joint | None = None,
) -> Ticket | DynamoError:
    cap = ctx.capacity
    st = cap.tables.get(table.table_id)
    if st is None or st.td is not table:
        st = cap.state(table)
    res = st.base if index is None else st.gsis.get(index, st.base)
    now = ctx.clock.now()
    if now >= st.history.due:  # the clock left the partition history's open bucket (history.py)
        st.capture_history(now)
    position = res.pmap.index_of(partition_of_key(key))
    units = half_units / 2
    lane = (res.writes if write else res.reads)[position]
    took = _take(cap, st, res, lane, units, now, write, key, joint)
    if isinstance(took, DynamoError):
        return took
    ticket = Ticket(st, res, lane, position, half_units, key, write, took=took)
    if write and item is not None and st.gsis:
        for gsi in st.gsis.values():
            gsi_key = _index_key(gsi, item)
            if gsi_key is None:
                continue
            gsi_lane = gsi.writes[gsi.pmap.index_of(partition_of_key(gsi_key))]
            took = _take(cap, st, gsi, gsi_lane, units, now, True, gsi_key, joint)
            if isinstance(took, DynamoError):
                refund(ctx, ticket)
                return took
            ticket.extra.append((gsi, gsi_lane, half_units, took))
    return ticket


def _take(
    cap: Capacity,
    st: TableState,
    res: Resource,
    lane: Lane,
    units: float,
    now: float,
    write: bool,
    key: bytes,
    joint: Joint | None = None,
) -> DynamoError | int:
    """What was taken (buckets.OK, BORROWED or NOT_TAKEN, for a refund), or the error of a refusal."""
    total = res.write_total if write else res.read_total
    if joint is None:
        reason = buckets.decide(lane, total, units, now, cap.adaptive_delay, res.provisioned)
    else:
        reason = _decide_joint(cap, st, res, lane, total, units, now, joint)
    insights = res.insights
    if reason in ADMITTED:
        if not res.provisioned and total.peak > (res.peaks[1] if write else res.peaks[0]):
            _new_peak(cap, st, res, now)
        if insights is not None:
            _count(res, insights, now, key, units * 3 if write else units, False)
        return reason
    total.throttled += 1
    if insights is not None:
        _count(res, insights, now, key, 0.0, True)
    if not cap.enforce:
        total.meter.units += units
        total.consumed += units  # metered as consumed all the same: the request is served
        return buckets.NOT_TAKEN  # report mode: counted as throttled, served without taking capacity
    return _error(res, reason, write)


def _decide_joint(
    cap: Capacity, st: TableState, res: Resource, lane: Lane, total: buckets.TableBucket, units: float, now: float,
    joint: Joint,
) -> int:  # fmt: skip
    """``buckets.decide`` for one item of a request admitted as a whole (see ``Joint``). A provisioned table's
    partitions still decide item by item: their shares, not a table bucket, are what a transaction meets there."""
    if res.provisioned:
        return buckets.decide(lane, total, units, now, cap.adaptive_delay, True)
    admitted = joint.admitted
    if lane in admitted:
        buckets.charge(lane, total, units, now)  # the partition admitted the request at an earlier item
        return buckets.OK
    need = 0.0 if total in admitted else joint.units.get(st.td.table_id, units)
    reason = buckets.decide(lane, total, units, now, cap.adaptive_delay, res.provisioned, need)
    if reason in ADMITTED:
        admitted.add(lane)
        admitted.add(total)
    return reason


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
    buckets.refund(ticket.lane, res.write_total if ticket.write else res.read_total, ticket.half_units / 2, ticket.took)
    for gsi, lane, half_units, took in ticket.extra:
        buckets.refund(lane, gsi.write_total, half_units / 2, took)
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
        buckets.charge(ticket.lane, res.read_total, delta / 2, ctx.clock.now())
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
        buckets.charge(ticket.lane, res.write_total, (actual - ticket.half_units) / 2, now)
        ticket.half_units = actual
    st = ticket.state
    if st.gsis and gsi_units is not None:
        _settle_index_units(ticket, old_item, new_item, gsi_units, now)
    if old_size == new_size and (old_size == 0) == (new_size == 0):
        return
    parts = res.pmap.partitions
    position = ticket.index
    h = partition_of_key(ticket.key)
    if position >= len(parts) or not parts[position].lo <= h < parts[position].hi:
        position = res.pmap.index_of(h)  # the map changed during the request (an on-demand table grew)
    p = parts[position]
    p.items += (new_size > 0) - (old_size > 0)
    p.bytes += new_size - old_size
    cap = ctx.capacity
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
    res = ctx.capacity.state(table).base
    p = res.pmap.partitions[res.pmap.index_of(partition_of_key(key))]
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
            lane = gsi.writes[gsi.pmap.index_of(partition_of_key(key))]
        buckets.charge(lane, gsi.write_total, delta / 2, now)


def _index_key(gsi: Resource, item: Item) -> bytes | None:
    """The index-key prefix (prefix, partition hash, encoded key) an item has in ``gsi``, or None."""
    encoded = b""
    for attr in gsi.hash_attrs:
        value = item.get(attr.name)
        if value is None or attr.type not in value or value[attr.type] == "":
            return None
        encoded += keycodec.encode_value(attr.type, value[attr.type])
    key = gsi.prefix + keyspace.partition_hash(encoded) + encoded
    for rng in gsi.range_attrs:
        rvalue = item.get(rng.name)
        if rvalue is None or rng.type not in rvalue or rvalue[rng.type] == "":
            return None
        key += keycodec.encode_value(rng.type, rvalue[rng.type])
    return key


def _count(res: Resource, insights: ContributorCounters, now: float, key: bytes, units: float, throttled: bool) -> None:
    if len(key) <= 9:
        return  # a bare prefix (the start of a Scan segment): no key to name
    end = KEY_HEAD_BYTES
    for attr in res.hash_attrs:  # every partition attribute of a multi-attribute key
        _, end = keycodec.decode_value(attr.type, key, end)
    insights.record(
        now, key[KEY_HEAD_BYTES:end], key[KEY_HEAD_BYTES:] if res.range_attr is not None else None, units, throttled
    )
