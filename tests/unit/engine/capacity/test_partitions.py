"""The partition map (engine/capacity/partitions.py): every worked example of the seeds as formulas and maps,
and measuring and splitting stored data."""

from __future__ import annotations

from fractions import Fraction

from dynastore.engine.capacity.partitions import (
    HASH_SPACE,
    PartitionLimits,
    PartitionMap,
    grow_for_throughput,
    initial_partition_count,
    measure,
    partition_of_key,
    partitions_for_size,
    partitions_for_throughput,
    split_point,
)
from dynastore.model.item_size import item_size
from dynastore.storage import keycodec, keyspace
from dynastore.storage.itemcodec import encode_item
from dynastore.storage.memory_kv import MemoryKV

GB = 1024**3
DDB = PartitionLimits(10 * GB, 3000, 1000)


def shares(pmap: PartitionMap, read: int, write: int) -> list[tuple[float, float]]:
    return pmap.shares(read, write)


# ---------------------------------------------------------------- formulas (seed 000 / 002 / 003)


def test_7500_rcu_3000_wcu_is_6_partitions() -> None:
    assert partitions_for_throughput(7500, 3000, DDB) == 6


def test_65_gb_is_7_partitions() -> None:
    assert partitions_for_size(65 * GB, DDB) == 7
    assert initial_partition_count(1, 1, 65 * GB, DDB) == 7  # max(capacity formula, storage formula)


def test_guide_1000_rcu_500_wcu_is_one_partition_and_1000_1000_is_two() -> None:
    assert partitions_for_throughput(1000, 500, DDB) == 1
    pmap = PartitionMap.even(partitions_for_throughput(1000, 1000, DDB))
    assert shares(pmap, 1000, 1000) == [(500.0, 500.0), (500.0, 500.0)]


def test_small_tables_have_one_partition() -> None:
    assert partitions_for_throughput(2999, 1, DDB) == 1
    assert partitions_for_throughput(1, 999, DDB) == 1


def test_5000_2000_is_4_partitions_of_1250_500_then_8000_rcu_doubles_to_8_of_1000_250() -> None:
    pmap = PartitionMap.even(partitions_for_throughput(5000, 2000, DDB))
    assert shares(pmap, 5000, 2000) == [(1250.0, 500.0)] * 4
    assert partitions_for_throughput(8000, 2000, DDB) == 5  # the formula's 4.67 -> 5 ...
    assert grow_for_throughput(pmap, 8000, 2000, DDB) == 1  # ... but the partitions double
    assert len(pmap) == 8
    assert shares(pmap, 8000, 2000) == [(1000.0, 250.0)] * 8


def test_one_of_four_filling_up_splits_into_two_halves() -> None:
    pmap = PartitionMap.even(4)
    pmap.split(1)
    assert len(pmap) == 5
    got = sorted(shares(pmap, 5000, 2000), reverse=True)
    assert got == [(1250.0, 500.0)] * 3 + [(625.0, 250.0)] * 2
    assert sum(p.weight for p in pmap) == 1
    # the other partitions are untouched
    assert [(p.lo, p.hi) for p in pmap][:1] == [(0, HASH_SPACE // 4)]


def test_bulk_load_11000_wcu_is_11_partitions_then_200_wcu_about_20_each() -> None:
    count = initial_partition_count(1, 11000, 20 * GB, DDB)
    assert count == 11
    pmap = PartitionMap.even(count)
    assert {round(w) for _, w in shares(pmap, 1, 11000)} == {1000}
    assert grow_for_throughput(pmap, 1, 200, DDB) == 0  # partitions never merge
    assert len(pmap) == 11
    per_partition = [w for _, w in shares(pmap, 1, 200)]
    assert all(abs(w - 200 / 11) < 1e-9 for w in per_partition)  # ~18.2, "around 20"


def test_lowering_throughput_never_merges() -> None:
    pmap = PartitionMap.even(partitions_for_throughput(7500, 3000, DDB))
    grow_for_throughput(pmap, 10, 10, DDB)
    assert len(pmap) == 6


def test_doubling_repeats_until_enough() -> None:
    pmap = PartitionMap.even(1)
    assert grow_for_throughput(pmap, 1, 3500, DDB) == 2
    assert len(pmap) == 4


def test_map_covers_the_hash_space_and_finds_keys() -> None:
    pmap = PartitionMap.even(6)
    assert pmap.partitions[0].lo == 0 and pmap.partitions[-1].hi == HASH_SPACE
    for a, b in zip(pmap.partitions, pmap.partitions[1:], strict=False):
        assert a.hi == b.lo
    assert pmap.index_of(0) == 0 and pmap.index_of(HASH_SPACE - 1) == 5
    key = keyspace.item_key(7, keycodec.encode_string("x"), None)
    assert partition_of_key(key) == int.from_bytes(keyspace.partition_hash(keycodec.encode_string("x")), "big")
    assert partition_of_key(keyspace.table_prefix(7)) == 0
    for head in (b"\x00\x00\x00\x01", b"\x80\x00\x00\x00", b"\xff\xfe\xfd\xfc"):  # every byte, in order
        assert partition_of_key(b"I\x00\x00\x00\x07" + head + b"rest") == int.from_bytes(head, "big")


def test_record_round_trip() -> None:
    pmap = PartitionMap.even(3)
    pmap.split(2)
    again = PartitionMap.from_record(pmap.to_record())
    assert [(p.lo, p.hi, p.weight) for p in again] == [(p.lo, p.hi, p.weight) for p in pmap]
    assert again.partitions[-1].weight == Fraction(1, 6)


# ---------------------------------------------------------------- measuring and splitting stored data


def _store(kv: MemoryKV, table_id: int, names: list[str], size: int = 100) -> None:
    with kv.write() as txn:
        for name in names:
            item = {"pk": {"S": name}, "v": {"S": "x" * size}}
            txn.put(keyspace.item_key(table_id, keycodec.encode_string(name), None), encode_item(item, item_size(item)))


def test_measure_and_median_split_point() -> None:
    kv = MemoryKV()
    _store(kv, 3, [f"k{i}" for i in range(40)])
    pmap = PartitionMap.even(1)
    measure(kv, keyspace.table_prefix(3), pmap)
    assert pmap.partitions[0].items == 40
    assert pmap.partitions[0].bytes == sum(2 + 1 + len(f"k{i}") + 100 for i in range(40))
    at = split_point(kv, keyspace.table_prefix(3), pmap.partitions[0])
    assert at is not None
    left, right = pmap.split(0, at)
    measure(kv, keyspace.table_prefix(3), pmap)
    assert left.items + right.items == 40
    assert abs(left.bytes - right.bytes) <= 2 * 110  # halves, up to one item either way


def test_one_item_collection_cannot_split() -> None:
    kv = MemoryKV()
    _store(kv, 4, ["same"])
    pmap = PartitionMap.even(1)
    assert split_point(kv, keyspace.table_prefix(4), pmap.partitions[0]) is None


def test_bounds_are_a_new_list_whenever_the_partitions_change() -> None:
    """Stream shards keep the bounds they matched and test them by identity: a split must never change them in
    place."""
    pmap = PartitionMap.even(2)
    before = pmap.bounds
    assert before == [0, HASH_SPACE // 2]
    pmap.split(1)
    assert pmap.bounds is not before and before == [0, HASH_SPACE // 2]
    assert pmap.bounds == [0, HASH_SPACE // 2, HASH_SPACE // 4 * 3]
