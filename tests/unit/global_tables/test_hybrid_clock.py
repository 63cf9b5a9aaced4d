"""The hybrid logical clock: stamps only grow, whatever the wall clock does, and exceed every stamp observed."""

from __future__ import annotations

from dynastore.global_tables.hybrid_clock import COUNTER_BITS, HybridClock, stamp_wall_ms
from dynastore.util.clock import ManualClock

T0 = 1_700_000_000.0


def test_a_stamp_is_the_wall_time_in_milliseconds_then_a_counter() -> None:
    clock = HybridClock(ManualClock(T0))
    first = clock.now()
    assert stamp_wall_ms(first) == int(T0 * 1000)
    assert first & ((1 << COUNTER_BITS) - 1) == 0


def test_stamps_within_one_millisecond_count_up() -> None:
    clock = HybridClock(ManualClock(T0))
    stamps = [clock.now() for _ in range(5)]
    assert stamps == [stamps[0] + n for n in range(5)]


def test_a_wall_clock_moving_forward_gives_its_time_again() -> None:
    wall = ManualClock(T0)
    clock = HybridClock(wall)
    clock.now()
    wall.advance(0.010)
    assert clock.now() == int((T0 + 0.010) * 1000) << COUNTER_BITS


def test_a_wall_clock_stepped_back_never_makes_a_stamp_go_back() -> None:
    wall = ManualClock(T0)
    clock = HybridClock(wall)
    before = clock.now()
    wall.advance(-30)  # the operating system's clock was corrected backwards
    after = [clock.now() for _ in range(3)]
    assert after == [before + 1, before + 2, before + 3]
    wall.advance(31)  # once the wall clock passes the last stamp, its time is used again
    assert stamp_wall_ms(clock.now()) == int((T0 + 1) * 1000)


def test_an_observed_stamp_from_a_clock_running_ahead_is_exceeded() -> None:
    here = HybridClock(ManualClock(T0))
    ahead = HybridClock(ManualClock(T0 + 5))  # another region's clock, 5 s fast
    remote = ahead.now()
    here.observe(remote)
    assert here.now() > remote
    assert here.last > remote


def test_observing_an_older_stamp_changes_nothing() -> None:
    wall = ManualClock(T0)
    clock = HybridClock(wall)
    latest = clock.now()
    clock.observe(latest - 1000)
    assert clock.now() == latest + 1


def test_a_counter_overflow_carries_into_the_milliseconds() -> None:
    clock = HybridClock(ManualClock(T0))
    first = clock.now()
    for _ in range(1 << COUNTER_BITS):
        last = clock.now()
    assert stamp_wall_ms(last) == stamp_wall_ms(first) + 1
    assert last > first
