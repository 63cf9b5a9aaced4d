"""Time as an injectable dependency, so TTL, lifecycles, token buckets and idempotency windows are testable."""

from __future__ import annotations

import time
from typing import Final, Protocol

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
_system_time: Final = time.time


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
