"""Token buckets, burst and adaptive capacity on a ManualClock (engine/capacity/buckets.py)."""

from __future__ import annotations

from dynastore.engine.capacity import buckets as throttle
from dynastore.engine.capacity.buckets import Lane, TableBucket

T0 = 1_700_000_000.0


def served(lane: Lane, table: TableBucket, now: float, count: int, units: float = 1.0, delay: float = 300.0) -> int:
    return sum(throttle.decide(lane, table, units, now, delay, True) in throttle.ADMITTED for _ in range(count))


def spent(share: float, ceiling: float, *, burst: bool = True) -> Lane:
    """A lane whose burst credit is spent: one second of its share left (the state after a long busy spell)."""
    lane = Lane(share, ceiling, T0, burst=burst)
    lane.share.tokens = share
    return lane


def test_a_new_lane_starts_with_its_full_burst_credit() -> None:
    lane, table = Lane(10, 100_000, T0, burst=True), TableBucket(10, T0)
    assert lane.burst_balance() == 3000
    assert served(lane, table, T0, 4000) == 3010  # one second and 300 seconds of credit, at once
    assert served(lane, table, T0 + 1, 20) == 10  # then the share, second by second
    no_burst = Lane(10, 1000, T0, burst=False)  # on-demand lanes: no share of their own to save up
    assert no_burst.burst_balance() == 0


def test_split_children_start_full() -> None:
    lane, table = Lane(10, 100_000, T0, burst=True), TableBucket(10, T0)
    served(lane, table, T0, 3010)
    assert lane.burst_balance() == 0
    child = lane.split(T0)
    assert (lane.share.rate, child.share.rate) == (5, 5)
    assert (lane.burst_balance(), child.burst_balance()) == (1500, 1500)
    assert lane.ceiling.tokens == child.ceiling.tokens == 100_000


def test_share_serves_its_rate_each_second() -> None:
    lane, table = spent(10, 1000), TableBucket(100, T0)
    assert served(lane, table, T0, 15) == 10
    assert served(lane, table, T0 + 1, 15) == 10
    assert lane.throttled == 10


def test_burst_lets_a_short_spike_through_but_not_a_sustained_one() -> None:
    lane, table = spent(10, 1000), TableBucket(1000, T0)
    now = T0 + 60  # a minute idle: 600 units of burst credit
    assert lane.burst_balance() == 0
    lane.share.refill(now)
    assert lane.burst_balance() == 600
    assert served(lane, table, now, 200) == 200  # a spike 20x the share
    sustained = 0
    for second in range(1, 120):
        sustained += served(lane, table, now + second, 30)
    # 30/s against 10/s: the remaining 410 units of credit run out after ~20 s, then 10/s
    assert 119 * 10 + 410 - 30 <= sustained <= 119 * 10 + 410 + 30
    assert lane.throttled > 0


def test_burst_credit_is_capped_at_300_seconds() -> None:
    lane = Lane(10, 1000, T0, burst=True)
    lane.share.refill(T0 + 10_000)
    assert lane.burst_balance() == 3000


def test_burst_never_passes_the_partition_maximum() -> None:
    lane, table = Lane(10, 50, T0, burst=True), TableBucket(1000, T0)
    lane.share.refill(T0 + 300)
    assert served(lane, table, T0 + 300, 200) == 50
    assert served(lane, table, T0 + 301, 200) == 50


def test_a_request_starts_while_the_partition_is_under_its_maximum() -> None:
    # Three 390-unit writes on a 1,000-unit partition: the third starts (the partition is under its maximum)
    # and leaves a debt; the next waits until the debt is paid back at the maximum rate.
    lane, table = Lane(1000, 1000, T0, burst=True), TableBucket(4000, T0)
    assert served(lane, table, T0, 3, units=390) == 3
    assert lane.ceiling.tokens == 1000 - 3 * 390
    assert served(lane, table, T0 + 0.1, 1) == 0
    assert served(lane, table, T0 + 0.2, 1) == 1
    # Over a longer spell the maximum still holds: ten seconds of 390-unit writes, 100 a second, are served
    # the second the partition held when they began and ten seconds of its rate, plus at most one debt.
    got = sum(served(lane, table, T0 + 1 + t / 100, 1, units=390) for t in range(1000))
    assert 11_000 - 390 <= got * 390 <= 11_000 + 390


def test_adaptive_capacity_lifts_a_hot_partition_after_the_delay() -> None:
    hot, cold, table = spent(15, 20), spent(15, 20), TableBucket(30, T0)
    delay = 5.0
    got = [served(hot, table, T0 + s, 20, delay=delay) for s in range(5)]
    assert got == [15] * 5  # share-bound while adaptive capacity waits
    got = [served(hot, table, T0 + s, 20, delay=delay) for s in range(5, 10)]
    assert got == [20] * 5  # lifted: borrows unused table throughput up to the partition maximum
    assert hot.borrowed > 0
    # the cold partition still has its own share
    assert served(cold, table, T0 + 10, 15, delay=delay) == 15


def test_refund_gives_back_to_where_the_capacity_came_from() -> None:
    hot, table = spent(15, 20, burst=False), TableBucket(30, T0)
    for s in range(6):
        served(hot, table, T0 + s, 20, delay=5.0)
    now = T0 + 6
    assert served(hot, table, now, 15, delay=5.0) == 15  # the share, spent
    share_left, table_left = hot.share.tokens, table.tokens
    took = throttle.decide(hot, table, 1, now, 5.0, True)
    assert took == throttle.BORROWED
    assert (hot.share.tokens, hot.borrowed > 0) == (share_left, True)
    borrowed = hot.borrowed
    throttle.refund(hot, table, 1, took)
    assert (hot.share.tokens, hot.borrowed, table.tokens) == (share_left, borrowed - 1, table_left)
    throttle.refund(hot, table, 1, throttle.NOT_TAKEN)  # report mode took nothing: nothing comes back
    assert (hot.share.tokens, table.tokens) == (share_left, table_left)


def test_adaptive_capacity_only_borrows_what_the_table_leaves_unused() -> None:
    hot, cold, table = spent(15, 30), spent(15, 30), TableBucket(30, T0)
    for s in range(6):
        served(hot, table, T0 + s, 30, delay=5.0)
    now = T0 + 6
    assert served(cold, table, now, 15, delay=5.0) == 15  # cold uses its whole share first
    assert served(hot, table, now, 30, delay=5.0) == 15  # hot: its share, nothing left to borrow


def test_a_large_item_on_a_small_table_is_served_then_paid_back() -> None:
    lane, table = spent(1, 1000), TableBucket(1, T0)
    assert throttle.decide(lane, table, 5, T0, 300, True) == throttle.OK
    assert lane.share.tokens == -4
    assert throttle.decide(lane, table, 1, T0 + 4, 300, True) != throttle.OK
    assert throttle.decide(lane, table, 1, T0 + 5, 300, True) == throttle.OK


def test_an_on_demand_table_bucket_asks_a_part_of_a_request_for_the_whole_request() -> None:
    lane, table = Lane(0, 1000, T0, burst=False), TableBucket(4000, T0)
    table.tokens = 3000
    assert throttle.decide(lane, table, 500, T0, 300, False, table_need=3500) == throttle.PROVISIONED
    assert throttle.decide(lane, table, 500, T0, 300, False, table_need=3000) == throttle.OK
    table.tokens = -100  # a request that already passed the bucket takes its other parts without asking
    assert throttle.decide(Lane(0, 1000, T0, burst=False), table, 500, T0, 300, False, table_need=0) == throttle.OK


def test_reasons() -> None:
    lane, table = spent(10, 1000), TableBucket(10, T0)
    served(lane, table, T0, 10)
    assert throttle.decide(lane, table, 1, T0, 300, True) == throttle.PROVISIONED  # table total spent too
    lane2, table2 = spent(10, 1000), TableBucket(100, T0)
    served(lane2, table2, T0, 10)
    assert throttle.decide(lane2, table2, 1, T0, 300, True) == throttle.KEY_RANGE  # one hot partition


def test_the_meter_counts_what_is_taken_charged_and_given_back() -> None:
    meter = throttle.Meter()
    lane, table = spent(10, 1000), TableBucket(100, T0, meter=meter)
    other = TableBucket(100, T0, meter=meter)  # a second table of the same server shares the meter
    assert throttle.decide(lane, table, 3.0, T0, 300.0, True) == throttle.OK
    throttle.charge(lane, other, 1.5, T0)
    assert meter.units == 4.5
    assert served(lane, table, T0, 20) == 5  # what the share still holds; the refused take nothing
    assert meter.units == 9.5
    throttle.refund(lane, table, 3.0, throttle.OK)
    throttle.refund(lane, table, 1.0, throttle.NOT_TAKEN)  # report mode metered it at admission
    assert meter.units == 5.5
