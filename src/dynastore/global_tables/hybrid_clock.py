"""A hybrid logical clock: the timestamps last writer wins compares (docs/design.md "Global tables").

A stamp is one integer, ``(wall_ms << 16) | counter``: the wall time in milliseconds from the injectable clock and
a counter that orders the stamps given within one millisecond, or while the wall clock is behind a stamp already
given or received (a clock stepped back, or a region whose clock runs ahead). Every stamp ``now`` gives is
strictly greater than every stamp it gave or ``observe``-d before, so a write's stamp is later than that of every
write it could have seen, whatever the skew between the regions' clocks.
"""

from __future__ import annotations

import threading

from dynastore.util.clock import Clock

__all__ = ["COUNTER_BITS", "HybridClock", "stamp_wall_ms"]

COUNTER_BITS = 16
_COUNTER_MASK = (1 << COUNTER_BITS) - 1


def stamp_wall_ms(stamp: int) -> int:
    """The wall-clock part of ``stamp`` (milliseconds since the epoch)."""
    return stamp >> COUNTER_BITS


class HybridClock:
    """Stamps for one server (thread-safe). A counter overflowing its 16 bits carries into the milliseconds: the
    stamps still grow, running slightly ahead of the wall clock until it catches up."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._last = 0
        self._lock = threading.Lock()

    def now(self) -> int:
        """A stamp greater than every stamp given or observed so far."""
        wall = int(self._clock.now() * 1000) << COUNTER_BITS
        with self._lock:
            stamp = wall if wall > self._last else self._last + 1
            self._last = stamp
            return stamp

    def observe(self, stamp: int) -> None:
        """A stamp received from another region: the stamps given from now on exceed it."""
        with self._lock:
            if stamp > self._last:
                self._last = stamp

    @property
    def last(self) -> int:
        """The greatest stamp given or observed."""
        return self._last
