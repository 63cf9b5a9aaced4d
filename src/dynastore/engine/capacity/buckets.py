"""Token buckets per partition and per table, with burst and adaptive capacity, driven by an injectable clock.

Units are capacity units (floats; the callers convert from the integer half-units of ``capacity.py``).
Nothing here reads the time itself: every call takes ``now`` from ``ctx.clock`` (see util/clock.py).

One *lane* is one direction (reads or writes) of one partition:

* ``share``: refills at the partition's provisioned share and holds up to ``1 + BURST_SECONDS`` seconds of
  it, so unused capacity of the last 300 seconds is kept for bursts (DynamoDB's burst capacity). A new
  lane (a new table or index, a split, a restart) starts full: one second of capacity and 300 seconds of
  burst credit, so a fresh 5-WCU table absorbs a quick sequence of about 1,500 write units, as DynamoDB's
  fresh tables do; a sustained overload still throttles once the credit is spent.
* ``ceiling``: the partition maximum (3000 RCU / 1000 WCU per second); burst and adaptive capacity never
  take a partition past it. A request starts while the partition is under its maximum (the ceiling holds a
  positive balance) and takes all its units, possibly leaving a debt paid back at the maximum rate: the
  rate never passes the maximum over time, and a few large items landing on one partition in the same
  instant are not refused halfway through their second.

One *table bucket* per direction holds one second of the table's (or index's) total throughput. Every
admitted request drains it; a partition whose own share is spent may *borrow* from it once adaptive
capacity has lifted that partition (after it has throttled for ``adaptive_delay`` seconds; the lift ends
after ``ADAPTIVE_COOLDOWN`` seconds without pressure). On-demand tables have no shares: the table bucket
holds what the table may take at once (double its previous peak, within OnDemandThroughput maximums and the
per-table quota) and each lane is just the partition maximum.

A request of ``u`` units passes a bucket when the bucket holds ``min(u, one second of its rate)``; it then
takes all ``u``, possibly leaving a debt, so a large item on a small table is served, then paid back.
Token buckets live in memory only; the partition map they follow is persisted (see admission.py).
"""

from __future__ import annotations

from typing import Final

from dynastore.limits import BURST_SECONDS

__all__ = [
    "ACCOUNT_LIMIT",
    "ADAPTIVE_COOLDOWN",
    "KEY_RANGE",
    "MAX_ON_DEMAND",
    "OK",
    "PROVISIONED",
    "Bucket",
    "Lane",
    "Meter",
    "TableBucket",
    "decide",
]

OK: Final = 0
KEY_RANGE: Final = 1  # KeyRangeThroughputExceeded: one partition is over what it may serve
PROVISIONED: Final = 2  # ProvisionedThroughputExceeded: the table (or index) is over its provisioned total
MAX_ON_DEMAND: Final = 3  # MaxOnDemandThroughputExceeded: over the table's OnDemandThroughput maximum
ACCOUNT_LIMIT: Final = 4  # AccountLimitExceeded: over the per-table quota of an on-demand table
BORROWED: Final = 5  # admitted on the table's unused capacity (adaptive capacity), not on the partition's share
NOT_TAKEN: Final = 6  # let through without taking capacity (report mode): nothing to give back
ADMITTED: Final = (OK, BORROWED)

ADAPTIVE_COOLDOWN: Final = 900.0  # seconds without pressure after which adaptive capacity lets a partition go


class Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``cap`` tokens."""

    __slots__ = ("rate", "cap", "tokens", "last")

    def __init__(self, rate: float, cap: float, now: float, tokens: float | None = None) -> None:
        self.rate = rate
        self.cap = cap
        self.tokens = rate if tokens is None else tokens
        self.last = now

    def refill(self, now: float) -> None:
        elapsed = now - self.last
        if elapsed > 0:
            tokens = self.tokens + elapsed * self.rate
            self.tokens = tokens if tokens < self.cap else self.cap
            self.last = now

    def has(self, units: float) -> bool:
        """Whether a request of ``units`` may start: the bucket holds it, or at least one second's worth."""
        need = units if units < self.rate else self.rate
        return self.tokens >= need and self.tokens > 0

    def under_maximum(self) -> bool:
        """Whether a request may start against a ceiling: the partition has not reached its maximum."""
        return self.tokens > 0

    def set_rate(self, rate: float, cap: float, now: float) -> None:
        self.refill(now)
        self.rate = rate
        self.cap = cap
        if self.tokens > cap:
            self.tokens = cap


class Meter:
    """The units every table and index of a server took in one direction since it started. The request log
    (protocol/request_log.py) reads it before and after a request: the difference is what the request consumed."""

    __slots__ = ("units",)

    def __init__(self) -> None:
        self.units = 0.0


class TableBucket(Bucket):
    """The table-level (or index-level) bucket of one direction, and what the table has consumed."""

    __slots__ = ("binding", "window_start", "window_used", "peak", "meter", "consumed", "throttled")

    def __init__(self, rate: float, now: float, binding: int = PROVISIONED, meter: Meter | None = None) -> None:
        super().__init__(rate, rate, now)
        self.binding = binding  # the reason reported when this bucket is what refuses a request
        self.window_start = now
        self.window_used = 0.0
        self.peak = 0.0  # the highest consumption seen in a one-second window
        self.meter = Meter() if meter is None else meter  # shared by the server's buckets of one direction
        self.consumed = 0.0  # units this table (or index) consumed since the server started (metrics)
        self.throttled = 0  # admissions refused (or, in report mode, that would have been) since then (metrics)

    def account(self, units: float, now: float) -> bool:
        """Record consumption; True when a one-second window closed (the caller may revisit the peak)."""
        closed = False
        if now - self.window_start >= 1.0:
            if self.window_used > self.peak:
                self.peak = self.window_used
            self.window_start = now
            self.window_used = 0.0
            closed = True
        self.window_used += units
        self.tokens -= units
        self.meter.units += units
        self.consumed += units
        return closed


class Lane:
    """One direction of one partition: its share bucket (with burst), its ceiling, and its statistics."""

    __slots__ = (
        "share", "ceiling", "throttled_since", "last_pressure", "consumed", "throttled", "borrowed", "marks",
    )  # fmt: skip

    def __init__(self, share_rate: float, ceiling_rate: float, now: float, *, burst: bool) -> None:
        cap = share_rate * (1 + BURST_SECONDS) if burst else share_rate
        self.share = Bucket(share_rate, cap, now, tokens=cap)  # starts full: see the module docstring
        self.ceiling = Bucket(ceiling_rate, ceiling_rate, now)
        self.throttled_since: float | None = None
        self.last_pressure = 0.0
        self.consumed = 0.0
        self.throttled = 0
        self.borrowed = 0.0
        self.marks = (0.0, 0)  # consumed and throttled when the partition history last took them (history.py)

    def take_marks(self) -> tuple[float, int]:
        """Units consumed and requests throttled since the last call (the partition history's bucket)."""
        consumed, throttled = self.consumed, self.throttled
        before = self.marks
        self.marks = (consumed, throttled)
        return consumed - before[0], throttled - before[1]

    def burst_balance(self) -> float:
        """Burst credit: what the share bucket holds beyond one second of the share."""
        extra = self.share.tokens - self.share.rate
        return extra if extra > 0 else 0.0

    def spend_burst(self, now: float) -> None:
        """Drop the burst credit: keep at most one second of the share."""
        share = self.share
        share.refill(now)
        if share.tokens > share.rate:
            share.tokens = share.rate

    def resize(self, share_rate: float, ceiling_rate: float, now: float, *, burst: bool) -> None:
        self.share.set_rate(share_rate, share_rate * (1 + BURST_SECONDS) if burst else share_rate, now)
        self.ceiling.set_rate(ceiling_rate, ceiling_rate, now)

    def split(self, now: float) -> Lane:
        """Halve this lane's share and return the other half, for a partition split. Both children are new
        partitions: each starts full (one second of its half share and its burst credit), its own maximum."""
        share = self.share
        share.refill(now)
        burst = share.cap > share.rate
        share.rate /= 2
        share.cap /= 2
        share.tokens = share.cap
        self.ceiling.refill(now)
        self.ceiling.tokens = self.ceiling.cap
        return Lane(share.rate, self.ceiling.rate, now, burst=burst)


def decide(
    lane: Lane,
    table: TableBucket,
    units: float,
    now: float,
    adaptive_delay: float,
    provisioned: bool,
    table_need: float | None = None,
) -> int:
    """Whether a request of ``units`` may take capacity from ``lane``: OK or BORROWED (the capacity is taken,
    from the partition's share or, through adaptive capacity, from the table's) or the reason it may not
    (nothing is taken). ``table_need``: what an on-demand table bucket must allow when ``units`` is one part of
    a larger request (a transaction's whole cost on the table; 0 once the request has passed it)."""
    share = lane.share
    share.refill(now)
    ceiling = lane.ceiling
    ceiling.refill(now)
    table.refill(now)
    if not ceiling.under_maximum():
        return _refuse(lane, now, KEY_RANGE)
    took = OK
    if provisioned:
        if share.has(units):
            share.tokens -= units
        elif _lifted(lane, now, adaptive_delay) and table.has(units):
            lane.borrowed += units
            lane.last_pressure = now
            took = BORROWED
        else:
            return _refuse(lane, now, PROVISIONED if not table.has(units) else KEY_RANGE)
        if lane.throttled_since is not None and now - lane.last_pressure > ADAPTIVE_COOLDOWN:
            lane.throttled_since = None
    else:
        if table_need is None:
            table_need = units
        if table_need > 0 and not table.has(table_need):
            return _refuse(lane, now, table.binding)
        share.tokens -= units
    ceiling.tokens -= units
    lane.consumed += units
    table.account(units, now)
    return took


def charge(lane: Lane, table: TableBucket, units: float, now: float) -> None:
    """Take ``units`` without asking (the part of a request's cost known only after it ran); may leave a debt."""
    lane.share.refill(now)
    lane.ceiling.refill(now)
    table.refill(now)
    lane.share.tokens -= units
    lane.ceiling.tokens -= units
    lane.consumed += units
    table.account(units, now)


def refund(lane: Lane, table: TableBucket, units: float, took: int) -> None:
    """Give back what an admitted request took (``took``: what ``decide`` answered) when the operation as a
    whole was refused."""
    if took == NOT_TAKEN:
        table.meter.units -= units
        table.consumed -= units
        return
    if took == BORROWED:
        lane.borrowed -= units
    else:
        lane.share.tokens += units
    lane.ceiling.tokens += units
    lane.consumed -= units
    table.tokens += units
    table.window_used -= units
    table.meter.units -= units
    table.consumed -= units


def _lifted(lane: Lane, now: float, adaptive_delay: float) -> bool:
    since = lane.throttled_since
    return since is not None and now - since >= adaptive_delay


def _refuse(lane: Lane, now: float, reason: int) -> int:
    lane.throttled += 1
    lane.last_pressure = now
    if lane.throttled_since is None:
        lane.throttled_since = now
    return reason
