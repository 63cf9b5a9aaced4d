"""Contributor Insights counters: the most accessed and most throttled keys of a table or index.

DynamoDB publishes four CloudWatch rules per enabled table or GSI: most accessed partition keys (PKC), most
throttled partition keys (PKT) and, with a sort key, the same for partition + sort key pairs (SKC, SKT).
Access is counted in ``ConsumedThroughputUnits`` = 3 x write units + read units; throttling in requests.
CloudWatch is not there, so the counters are kept here in one-minute buckets over
``CONTRIBUTOR_WINDOW_SECONDS`` and reported through the extension endpoint and ``dynastore partitions``.
Counters are in memory; whether insights are enabled is persisted (admission.py).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from dynastore.limits import CONTRIBUTOR_WINDOW_SECONDS

__all__ = ["ContributorCounters", "Counts"]

_MINUTE = 60.0


@dataclass(slots=True)
class Counts:
    consumed: float = 0.0  # ConsumedThroughputUnits
    throttled: int = 0


@dataclass(slots=True)
class _Minute:
    start: float
    partition_keys: dict[bytes, Counts] = field(default_factory=dict)
    item_keys: dict[bytes, Counts] = field(default_factory=dict)


class ContributorCounters:
    """Per-key counters of one table or index, keyed by the encoded partition key (and sort key)."""

    __slots__ = ("mode", "_minutes")

    def __init__(self, mode: str) -> None:
        self.mode = mode  # ACCESSED_AND_THROTTLED_KEYS | THROTTLED_KEYS
        self._minutes: deque[_Minute] = deque()

    def record(self, now: float, partition_key: bytes, item_key: bytes | None, units: float, throttled: bool) -> None:
        if not throttled and self.mode == "THROTTLED_KEYS":
            return
        minute = self._minute(now)
        for table, key in ((minute.partition_keys, partition_key), (minute.item_keys, item_key)):
            if key is None:
                continue
            counts = table.get(key)
            if counts is None:
                counts = table[key] = Counts()
            if throttled:
                counts.throttled += 1
            else:
                counts.consumed += units

    def top(
        self, now: float, window: float, limit: int, *, until: float | None = None
    ) -> dict[str, list[tuple[bytes, Counts]]]:
        """The top ``limit`` keys of each rule over the ``window`` seconds up to ``until`` (None: up to ``now``),
        no further back than the counters reach; a minute counts when it overlaps the window."""
        end = now if until is None or until >= now else until
        since = max(end - window, now - CONTRIBUTOR_WINDOW_SECONDS)
        totals: dict[str, dict[bytes, Counts]] = {"partition_keys": {}, "item_keys": {}}
        for minute in self._minutes:
            if minute.start + _MINUTE <= since or (end < now and minute.start >= end):
                continue
            for name, source in (("partition_keys", minute.partition_keys), ("item_keys", minute.item_keys)):
                target = totals[name]
                for key, counts in source.items():
                    total = target.get(key)
                    if total is None:
                        total = target[key] = Counts()
                    total.consumed += counts.consumed
                    total.throttled += counts.throttled
        out: dict[str, list[tuple[bytes, Counts]]] = {}
        for name, per_key in totals.items():
            accessed = sorted((kv for kv in per_key.items() if kv[1].consumed), key=lambda kv: -kv[1].consumed)
            throttled = sorted((kv for kv in per_key.items() if kv[1].throttled), key=lambda kv: -kv[1].throttled)
            out[f"accessed_{name}"] = accessed[:limit]
            out[f"throttled_{name}"] = throttled[:limit]
        return out

    def _minute(self, now: float) -> _Minute:
        minutes = self._minutes
        if minutes and now < minutes[-1].start + _MINUTE:
            return minutes[-1]
        start = now - (now % _MINUTE)
        minute = _Minute(start)
        minutes.append(minute)
        while minutes and minutes[0].start + _MINUTE <= now - CONTRIBUTOR_WINDOW_SECONDS:
            minutes.popleft()
        return minute
