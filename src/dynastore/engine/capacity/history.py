"""The recent history of every partition's use and throttles: what the partition view shows after the fact.

Per table, one *bucket* per ``PARTITION_HISTORY_BUCKET_SECONDS`` of the server's clock (``config.clock``, so
tests drive it), kept ``PARTITION_HISTORY_SECONDS``: in each, per partition of the table and of each GSI, the
capacity units it consumed and the requests it throttled, reads and writes, and its item count and size at the
bucket's end. Memory only (a restart starts afresh, as the token buckets do); only buckets and partitions that
saw use are stored, so an idle table costs nothing.

Nothing is added on the request path: every lane (buckets.Lane) already counts what it consumed and throttled
since it was made. A bucket takes the difference of those counters since the previous bucket (the lane's
``marks``). Admission compares the clock with ``due`` before it touches a lane; once the clock has reached the
end of the open bucket, :meth:`PartitionHistory.capture` closes it first, so everything counted between two
captures happened within the bucket it lands in. A lane about to be replaced (the partition map rebuilt) is
captured first, so its counts are not lost.

Rows are keyed by the partition's first hash (``lo``) and the resource (``""``: the table, else the GSI's
name). Partitions only split, and a left child keeps its parent's ``lo``: a row of any bucket falls in exactly
one partition of today's map (:func:`window_of`), even across splits and "as if N partitions".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from dynastore.engine.capacity.buckets import Lane
from dynastore.engine.capacity.partitions import PartitionMap
from dynastore.limits import PARTITION_HISTORY_BUCKET_SECONDS, PARTITION_HISTORY_SECONDS

__all__ = ["Bucket", "PartitionHistory", "Row", "Usage", "window_of"]


@dataclass(slots=True)
class Row:
    """One partition in one bucket: units consumed and requests throttled (reads, writes), items and bytes."""

    read: float = 0.0
    write: float = 0.0
    read_throttled: int = 0
    write_throttled: int = 0
    items: int = 0
    bytes: int = 0

    def has_use(self) -> bool:
        return bool(self.read or self.write or self.read_throttled or self.write_throttled)


@dataclass(slots=True)
class Bucket:
    """``step`` seconds from ``start``: rows keyed by (resource, partition's first hash)."""

    start: float
    rows: dict[tuple[str, int], Row] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """What a resource's partitions (by partition of today's map) did in one bucket."""

    start: float
    rows: dict[int, Row]


class PartitionHistory:
    """The buckets of one table (and its GSIs); see the module docstring."""

    __slots__ = ("step", "keep", "closed", "open", "due")

    def __init__(
        self, step: float = PARTITION_HISTORY_BUCKET_SECONDS, reach: float = PARTITION_HISTORY_SECONDS
    ) -> None:
        self.step = float(step)
        self.keep = max(1, int(reach // step))  # closed buckets kept (720: one hour of 5 s)
        self.closed: deque[Bucket] = deque(maxlen=self.keep)
        self.open: Bucket | None = None
        self.due = float("-inf")  # the clock time at which the open bucket must be closed (none yet: at once)

    def capture(self, now: float, resources: Iterable[tuple[str, PartitionMap, list[Lane], list[Lane]]]) -> None:
        """Take every lane's counts since the last capture into the open bucket (closing it once ``now`` has
        passed its end) and open the bucket of ``now``. ``resources``: (name, partition map, read lanes, write
        lanes) of the table and each GSI."""
        listed = list(resources)
        bucket = self.open
        if bucket is not None and now >= bucket.start + self.step:
            _take(bucket, listed)  # counted before now, so within the bucket that is ending
            if bucket.rows:
                self.closed.append(bucket)  # the deque's bound drops the oldest
            self._forget(now)
            bucket = None
        if bucket is None:
            bucket = self.open = Bucket(now - now % self.step)
            self.due = bucket.start + self.step
        _take(bucket, listed)

    def buckets(self, since: float, until: float) -> Iterator[Bucket]:
        """The buckets that saw use and overlap ``[since, until)``, oldest first (the open one included)."""
        for bucket in (*self.closed, *([] if self.open is None else [self.open])):
            if bucket.start < until and bucket.start + self.step > since and bucket.rows:
                yield bucket

    def oldest(self) -> float | None:
        """The start of the oldest bucket kept (None: nothing yet)."""
        if self.closed:
            return self.closed[0].start
        return None if self.open is None else self.open.start

    def _forget(self, now: float) -> None:
        """Drop the buckets that ended more than the reach ago (idle spells store no bucket, so the deque's bound
        alone would keep an old busy spell)."""
        horizon = now - self.keep * self.step
        closed = self.closed
        while closed and closed[0].start + self.step <= horizon:
            closed.popleft()


def _take(bucket: Bucket, resources: list[tuple[str, PartitionMap, list[Lane], list[Lane]]]) -> None:
    for name, pmap, reads, writes in resources:
        for p, read, write in zip(pmap.partitions, reads, writes, strict=False):
            read_units, read_throttled = read.take_marks()
            write_units, write_throttled = write.take_marks()
            if not (read_units or write_units or read_throttled or write_throttled):
                continue
            row = bucket.rows.get((name, p.lo))
            if row is None:
                row = bucket.rows[(name, p.lo)] = Row()
            row.read += read_units
            row.write += write_units
            row.read_throttled += read_throttled
            row.write_throttled += write_throttled
            row.items, row.bytes = p.items, p.bytes


def window_of(history: PartitionHistory, name: str, pmap: PartitionMap, since: float, until: float) -> list[Usage]:
    """Resource ``name``'s buckets in ``[since, until)``, their rows summed per partition of ``pmap`` (today's)."""
    out = []
    for bucket in history.buckets(since, until):
        rows: dict[int, Row] = {}
        for (resource, lo), row in bucket.rows.items():
            if resource != name:
                continue
            index = pmap.index_of(lo)
            into = rows.get(index)
            if into is None:
                rows[index] = Row(row.read, row.write, row.read_throttled, row.write_throttled, row.items, row.bytes)
                continue
            into.read += row.read
            into.write += row.write
            into.read_throttled += row.read_throttled
            into.write_throttled += row.write_throttled
            into.items += row.items
            into.bytes += row.bytes
        if rows:
            out.append(Usage(bucket.start, dict(sorted(rows.items()))))
    return out
