"""The partition history (engine/capacity/history.py): buckets on the injectable clock, their bound, the window
chosen, rows mapped onto today's partitions; and, through the engine, what admission and the view make of it."""

from __future__ import annotations

from dynastore.engine.capacity.buckets import Lane
from dynastore.engine.capacity.contributors import ContributorCounters, Counts
from dynastore.engine.capacity.history import PartitionHistory, Row, window_of
from dynastore.engine.capacity.partitions import PartitionMap
from dynastore.engine.capacity.view import partitions_view
from tests.unit.engine.capacity.test_admission import outcomes, put
from tests.unit.engine.tables import T0, create, make_ctx, spend_burst

STEP = 5.0


class Resource:
    """A table's partition map and lanes, as Capacity keeps them (state.Resource)."""

    def __init__(self, count: int) -> None:
        self.pmap = PartitionMap.even(count)
        self.reads = [Lane(10.0, 3000.0, T0, burst=True) for _ in range(count)]
        self.writes = [Lane(10.0, 1000.0, T0, burst=True) for _ in range(count)]

    def listed(self) -> list[tuple[str, PartitionMap, list[Lane], list[Lane]]]:
        return [("", self.pmap, self.reads, self.writes)]


def used(lane: Lane, units: float, throttled: int = 0) -> None:
    lane.consumed += units
    lane.throttled += throttled


def test_a_bucket_takes_what_was_counted_while_it_was_open() -> None:
    history, res = PartitionHistory(), Resource(2)
    history.capture(T0 + 1, res.listed())
    assert history.open is not None and history.open.start == T0 and history.due == T0 + STEP
    used(res.writes[1], 3.0, throttled=2)
    used(res.reads[0], 0.5)
    history.capture(T0 + STEP, res.listed())  # the clock reached the bucket's end: it closes
    (closed,) = history.closed
    assert closed.start == T0
    assert closed.rows == {("", 0): Row(read=0.5), ("", 1 << 31): Row(write=3.0, write_throttled=2)}
    assert history.open.start == T0 + STEP and history.open.rows == {}


def test_counts_of_an_idle_spell_land_in_their_own_bucket_and_idle_buckets_are_not_stored() -> None:
    history, res = PartitionHistory(), Resource(1)
    history.capture(T0, res.listed())
    used(res.writes[0], 4.0)  # counted at T0 + 2: admission captures first once the clock passes T0 + 5
    history.capture(T0 + 600, res.listed())
    assert [b.start for b in history.closed] == [T0]
    assert history.closed[0].rows[("", 0)].write == 4.0
    history.capture(T0 + 900, res.listed())
    assert [b.start for b in history.closed] == [T0]  # nothing was used in between


def test_the_history_keeps_one_hour_of_five_second_buckets() -> None:
    history, res = PartitionHistory(), Resource(1)
    assert history.keep == 720
    now = T0
    for _ in range(2 * 720):  # two hours, busy all along
        history.capture(now, res.listed())
        used(res.writes[0], 1.0)
        now += STEP
    history.capture(now, res.listed())
    assert len(history.closed) == 720
    assert history.oldest() == now - 3600
    # a busy spell an hour ago, then silence: age, not only the count, drops a bucket
    history.capture(now + 3595, res.listed())
    assert [b.start for b in history.closed] == [now - STEP]
    history.capture(now + 3600, res.listed())
    assert list(history.closed) == [] and history.oldest() == now + 3600


def test_a_window_selects_the_buckets_that_overlap_it() -> None:
    history, res = PartitionHistory(), Resource(1)
    for second in range(0, 60, 5):
        history.capture(T0 + second, res.listed())
        used(res.writes[0], second + 1.0)
    history.capture(T0 + 60, res.listed())
    starts = [b.start - T0 for b in history.buckets(T0 + 12, T0 + 30)]
    assert starts == [10, 15, 20, 25]
    assert [u.rows[0].write for u in window_of(history, "", res.pmap, T0 + 50, T0 + 70)] == [51.0, 56.0]


def test_rows_of_a_partition_since_split_fall_in_todays_partitions() -> None:
    history, res = PartitionHistory(), Resource(1)
    history.capture(T0, res.listed())
    used(res.writes[0], 7.0)
    history.capture(T0 + 5, res.listed())
    res.pmap.split(0)  # the left child keeps the parent's first hash, the right one is new
    res.writes.insert(1, res.writes[0].split(T0 + 6))
    res.reads.insert(1, res.reads[0].split(T0 + 6))
    used(res.writes[1], 2.0)
    history.capture(T0 + 10, res.listed())
    usage = window_of(history, "", res.pmap, T0, T0 + 10)
    assert [(u.start, {i: r.write for i, r in u.rows.items()}) for u in usage] == [(T0, {0: 7.0}), (T0 + 5, {1: 2.0})]
    # the same buckets seen through one partition ("as if" stopped): summed
    assert [u.rows[0].write for u in window_of(history, "", PartitionMap.even(1), T0, T0 + 10)] == [7.0, 2.0]


def test_the_view_shows_a_hot_key_load_after_it_ended() -> None:
    ctx, clock = make_ctx()
    td = create(ctx, "hot", 4, 4)
    spend_burst(ctx, td)
    got = outcomes(lambda: put(ctx, td, {"pk": {"S": "hot"}}), 10)
    assert got.count("ok") == 4
    clock.advance(20 * 60)  # the load ended twenty minutes ago
    st = ctx.capacity.find("hot")
    assert "history" not in partitions_view(ctx, st)  # a live poll asks for none
    view = partitions_view(ctx, st, (clock.now() - 3600, clock.now()))
    assert view["window"] == {
        "since": T0 + 1200 - 3600,
        "until": T0 + 1200,
        "bucket_seconds": 5.0,
        "kept_seconds": 3600.0,
        "oldest": T0,
    }
    assert view["history"] == [
        {
            "start": T0,
            "partitions": [
                {
                    "partition": 0,
                    "consumed": {"read": 0.0, "write": 4.0},
                    "throttled": {"read": 0, "write": 6},
                    "items": 1,
                    "bytes": view["partitions"][0]["bytes"],
                }
            ],
        }
    ]
    assert partitions_view(ctx, st, (clock.now() - 900, clock.now()))["history"] == []  # fifteen minutes: none


def test_counts_before_the_partitions_are_replaced_are_kept() -> None:
    ctx, clock = make_ctx()
    td = create(ctx, "replaced", 4, 4)
    spend_burst(ctx, td)
    outcomes(lambda: put(ctx, td, {"pk": {"S": "k"}}), 6)
    clock.advance(1)
    st = ctx.capacity.find("replaced")
    ctx.capacity.set_as_if(st, 4)  # new lanes for four partitions, within the same bucket
    view = partitions_view(ctx, st, (T0, clock.now()))
    (bucket,) = view["history"]
    assert sum(p["consumed"]["write"] for p in bucket["partitions"]) == 4.0
    assert sum(p["throttled"]["write"] for p in bucket["partitions"]) == 2


def test_top_keys_over_a_window_that_ended_in_the_past() -> None:
    minute = T0 + 40  # a whole minute of the clock (the counters keep minutes)
    counters = ContributorCounters("ACCESSED_AND_THROTTLED_KEYS")
    counters.record(minute + 10, b"early", None, 5.0, False)
    counters.record(minute + 70, b"late", None, 1.0, False)  # the next minute
    now = minute + 20 * 60
    assert keys(counters.top(now, 300, 10)) == []  # the last five minutes: nothing
    assert keys(counters.top(now, 3600, 10)) == [b"early", b"late"]
    assert keys(counters.top(now, 60, 10, until=minute + 60)) == [b"early"]  # the first minute only
    assert keys(counters.top(now, 2 * 3600, 10, until=minute + 130)) == [b"early", b"late"]  # no further than kept
    assert keys(counters.top(minute + 3660, 3600, 10)) == [b"late"]  # an hour on, the first minute is gone


def keys(tops: dict[str, list[tuple[bytes, Counts]]]) -> list[bytes]:
    return [key for key, _ in tops["accessed_partition_keys"]]
