"""Time as an injectable dependency, so TTL, lifecycles, token buckets and idempotency windows are testable."""

from __future__ import annotations

from time import time as _system_time  # imported by name: compiled code then skips a module look-up a call
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class SystemClock:
    def now(self) -> float:
        return _system_time()


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds
