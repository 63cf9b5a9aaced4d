"""One read budget per partition across a cluster's nodes (replication/read_budget.py): a follower reports what
its reads consumed, the leader charges it and answers the partitions under pressure, the follower holds its
buckets to the leader's."""

from __future__ import annotations

from dynastore.engine.capacity import admission
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.errors import ProvisionedThroughputExceededException
from dynastore.model.table_schema import TableDef
from dynastore.replication import read_budget
from tests.unit.engine.tables import create, key_of, make_ctx

EVENTUAL = read_half_units(0, consistent=False)  # half a unit


def admitted(ctx: Context, td: TableDef, count: int) -> int:
    key = key_of(td, "a")
    done = 0
    for _ in range(count):
        try:
            admission.admit_read(ctx, td, key, EVENTUAL)
        except ProvisionedThroughputExceededException:
            break
        done += 1
    return done


def test_a_follower_reports_each_unit_once() -> None:
    follower, _ = make_ctx()
    td = create(follower, "small", 2, 3)
    seen: read_budget.Seen = {}
    assert read_budget.consumed_since(follower.capacity, seen) == []
    assert admitted(follower, td, 10) == 10
    report = read_budget.consumed_since(follower.capacity, seen)
    assert [(e["table"], e["index"], e["units"]) for e in report] == [(td.table_id, "", 5.0)]
    assert read_budget.consumed_since(follower.capacity, seen) == []  # nothing new since


def test_reads_a_follower_served_spend_the_leaders_budget_and_throttle_the_follower() -> None:
    leader, leader_clock = make_ctx()
    follower, _ = make_ctx()
    leader_td, follower_td = create(leader, "small", 2, 3), create(follower, "small", 2, 3)
    seen: read_budget.Seen = {}
    # The follower spends the partition's whole budget (a second of 2 units plus 300 seconds of burst credit).
    assert admitted(follower, follower_td, 2000) == 1204
    pressure = read_budget.charge_reads(
        leader.capacity, read_budget.consumed_since(follower.capacity, seen), leader_clock.now()
    )
    assert [(p["table"], p["index"]) for p in pressure] == [(leader_td.table_id, "")]
    assert admitted(leader, leader_td, 10) == 0  # the leader's own reads of the partition are throttled too
    # A second follower that served nothing yet is held to the leader's buckets.
    other, other_clock = make_ctx()
    other_td = create(other, "small", 2, 3)
    assert admitted(other, other_td, 1) == 1
    read_budget.apply_pressure(other.capacity, pressure, other_clock.now())
    assert admitted(other, other_td, 10) == 0
    other_clock.advance(1)  # a second later the partition's share is back: 2 units, 4 eventual reads
    assert admitted(other, other_td, 10) == 4


def test_a_partition_not_under_pressure_is_not_reported() -> None:
    leader, clock = make_ctx()
    follower, _ = make_ctx()
    create(leader, "small", 2, 3)
    follower_td = create(follower, "small", 2, 3)
    admitted(follower, follower_td, 4)
    seen: read_budget.Seen = {}
    report = read_budget.consumed_since(follower.capacity, seen)
    assert read_budget.charge_reads(leader.capacity, report, clock.now()) == []  # burst credit left


def test_reports_of_a_table_deleted_since_are_dropped() -> None:
    leader, clock = make_ctx()
    report = [{"table": 999, "index": "", "lo": 0, "units": 5.0}]
    assert read_budget.charge_reads(leader.capacity, report, clock.now()) == []
