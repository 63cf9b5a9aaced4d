"""The partition map of a table or a global secondary index: hash ranges, throughput shares, item counts, sizes.

A partition owns a contiguous range ``[lo, hi)`` of the 4-byte partition hash that ``storage/keycodec.py``
puts after the table (or index) prefix of every key, so the partition of a key is ``bisect`` of
``key[5:9]``. Each partition also owns a *weight*, its fraction of the table's provisioned throughput
(the weights always sum to 1): a partition's share is ``weight x table throughput``.

The rules, from DynamoDB's documentation and the seeds (docs/capacity.md has the worked examples):

* a new table gets ``ceil(RCU / 3000 + WCU / 1000)`` partitions, at least ``ceil(size / 10 GB)``; equal
  hash ranges, equal weights (:func:`initial_partition_count`);
* a partition that passes the size limit splits in two at the hash where its data divides in half; each
  child takes half its parent's weight (so half its RCU and WCU), and no other partition changes
  (:meth:`PartitionMap.split`);
* raising throughput beyond what the partitions can serve doubles the partition count (every partition
  splits at the middle of its hash range) until it suffices (:func:`grow_for_throughput`);
* partitions never merge: lowering throughput leaves the same partitions with less each.

The 3000/1000 unit and 10 GB constants come from the server's configuration (test and what-if aids).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from dynastore.limits import PARTITION_SLACK_WRITE_UNITS
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import stored_size
from dynastore.storage.kv import KV

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
bisect_right: Final = bisect.bisect_right

__all__ = [
    "HASH_SPACE",
    "Partition",
    "PartitionLimits",
    "PartitionMap",
    "grow_for_throughput",
    "initial_partition_count",
    "item_sizes",
    "measure",
    "partition_of_key",
    "partitions_for_size",
    "partitions_for_throughput",
    "split_point",
]

HASH_SPACE = 1 << 32
# Above this many items a structural change estimates its children's sizes (halves) instead of measuring them.
MEASURE_MAX_ITEMS = 200_000


@dataclass(frozen=True, slots=True)
class PartitionLimits:
    """What one partition can hold and serve (DynamoDB: 10 GB, 3000 RCU, 1000 WCU)."""

    max_bytes: int
    max_rcu: int
    max_wcu: int


@dataclass(slots=True)
class Partition:
    lo: int  # first hash of the range
    hi: int  # one past the last hash
    weight: Fraction  # fraction of the table's (or index's) provisioned throughput
    items: int = 0
    bytes: int = 0

    def to_record(self) -> list[Any]:
        return [self.lo, self.hi, f"{self.weight.numerator}/{self.weight.denominator}", self.items, self.bytes]

    @classmethod
    def from_record(cls, rec: list[Any]) -> Partition:
        return cls(int(rec[0]), int(rec[1]), Fraction(rec[2]), int(rec[3]), int(rec[4]))


def partitions_for_throughput(read: int, write: int, limits: PartitionLimits) -> int:
    """``ceil(read / max_rcu + write / max_wcu)``, at least 1, in exact integer arithmetic.

    Throughput within one write unit of a partition boundary does not start a new partition: the Developer
    Guide gives a table of 11,000 WCU (and the minimum 1 RCU) 11 partitions.
    """
    numerator = read * limits.max_wcu + write * limits.max_rcu - PARTITION_SLACK_WRITE_UNITS * limits.max_rcu
    denominator = limits.max_rcu * limits.max_wcu
    return max(1, -(-max(0, numerator) // denominator))


def partitions_for_size(size_bytes: int, limits: PartitionLimits) -> int:
    return max(1, -(-size_bytes // limits.max_bytes))


def initial_partition_count(read: int, write: int, size_bytes: int, limits: PartitionLimits) -> int:
    """Partitions of a new (or restored) table: ``max(throughput formula, size formula)``."""
    return max(partitions_for_throughput(read, write, limits), partitions_for_size(size_bytes, limits))


def partition_of_key(key: bytes) -> int:
    """The partition hash of a storage key (or a key prefix that reaches the hash): the 4 bytes after the
    5-byte table or index prefix; a bare prefix means the start of the hash space. Read per write (admission,
    settlement, stream shards): four byte reads compile to native code, where ``int.from_bytes`` of a slice makes
    the slice and calls a method by name (about 1,000 instructions)."""
    if len(key) < 9:
        return 0
    return key[5] << 24 | key[6] << 16 | key[7] << 8 | key[8]


class PartitionMap:
    """The partitions of one table or index, sorted by hash range, covering the whole hash space."""

    __slots__ = ("partitions", "_los")

    def __init__(self, partitions: list[Partition]) -> None:
        self.partitions = partitions
        self._los = [p.lo for p in partitions]

    @classmethod
    def even(cls, count: int) -> PartitionMap:
        """``count`` partitions with equal hash ranges and equal weights."""
        bounds = [(i * HASH_SPACE) // count for i in range(count + 1)]
        weight = Fraction(1, count)
        return cls([Partition(bounds[i], bounds[i + 1], weight) for i in range(count)])

    def __len__(self) -> int:
        return len(self.partitions)

    def __iter__(self) -> Iterator[Partition]:
        return iter(self.partitions)

    def index_of(self, partition_hash: int) -> int:
        return bisect_right(self._los, partition_hash) - 1

    @property
    def bounds(self) -> list[int]:
        """The partitions' lower bounds: a new list whenever the partitions change (a split makes one, and so does
        a new map), never changed in place. Whoever keeps it knows by identity, without a search, that the
        partitions it checked something against are still the table's."""
        return self._los

    def split(self, index: int, at: int | None = None) -> tuple[Partition, Partition]:
        """Split partition ``index`` at hash ``at`` (default: the middle of its range) into two children with
        half its weight each; sizes are set by the caller (see :func:`measure`), here estimated as halves."""
        parent = self.partitions[index]
        mid = (parent.lo + parent.hi) // 2 if at is None else at
        if not parent.lo < mid < parent.hi:
            raise ValueError("split point outside the partition")
        half = parent.weight / 2
        left = Partition(parent.lo, mid, half, parent.items // 2, parent.bytes // 2)
        right = Partition(mid, parent.hi, half, parent.items - left.items, parent.bytes - left.bytes)
        self.partitions[index : index + 1] = [left, right]
        self._los = [p.lo for p in self.partitions]
        return left, right

    def double(self) -> None:
        """Every partition splits at the middle of its hash range."""
        for index in range(len(self.partitions) - 1, -1, -1):
            if self.partitions[index].hi - self.partitions[index].lo > 1:
                self.split(index)

    def shares(self, read: float, write: float) -> list[tuple[float, float]]:
        return [(float(p.weight) * read, float(p.weight) * write) for p in self.partitions]

    def to_record(self) -> list[list[Any]]:
        return [p.to_record() for p in self.partitions]

    @classmethod
    def from_record(cls, rec: list[list[Any]]) -> PartitionMap:
        return cls([Partition.from_record(r) for r in rec])


def grow_for_throughput(pmap: PartitionMap, read: int, write: int, limits: PartitionLimits) -> int:
    """Double the partition count until it can serve ``read``/``write``; returns how many doublings it took."""
    required = partitions_for_throughput(read, write, limits)
    doublings = 0
    while len(pmap) < required:
        pmap.double()
        doublings += 1
    return doublings


def item_sizes(kv: KV, prefix: bytes, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """(partition hash, item size) of every stored item in ``[lo, hi)`` of the hash space under ``prefix``."""
    start = prefix + lo.to_bytes(4, "big")
    end = prefix + hi.to_bytes(4, "big") if hi < HASH_SPACE else keyspace.prefix_end(prefix)
    with kv.read() as txn:
        for key, raw in txn.iter_range(start, end):
            yield partition_of_key(key), stored_size(raw)


def measure(kv: KV, prefix: bytes, pmap: PartitionMap) -> None:
    """Set every partition's item count and size from the stored items (one pass over the table)."""
    for p in pmap:
        p.items = 0
        p.bytes = 0
    parts = pmap.partitions
    for h, size in item_sizes(kv, prefix, 0, HASH_SPACE):
        p = parts[pmap.index_of(h)]
        p.items += 1
        p.bytes += size


def split_point(kv: KV, prefix: bytes, partition: Partition) -> int | None:
    """The hash at which ``partition``'s data divides in half by size (items of one partition key stay
    together); None if all its data has one partition hash."""
    per_hash: list[tuple[int, int]] = []
    for h, group in itertools.groupby(item_sizes(kv, prefix, partition.lo, partition.hi), key=lambda t: t[0]):
        per_hash.append((h, sum(size for _, size in group)))
    if len(per_hash) < 2:
        return None
    total = sum(size for _, size in per_hash)
    running = 0
    for i, (_h, size) in enumerate(per_hash):
        running += size
        if running * 2 >= total:
            # Split after this hash, unless everything else sits after it.
            return per_hash[min(i + 1, len(per_hash) - 1)][0]
    return per_hash[-1][0]  # pragma: no cover - the loop always returns
