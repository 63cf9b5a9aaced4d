"""The partition map: every worked example of the seeds, as formulas, as maps, and through the API."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from dynastore.app import build_context
from dynastore.config import Config
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
from dynastore.engine.context import Context
from dynastore.model.item_size import item_size
from dynastore.protocol import dispatch
from dynastore.storage import keycodec, keyspace
from dynastore.storage.catalog import Catalog
from dynastore.storage.itemcodec import encode_item
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

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


# ---------------------------------------------------------------- the same examples through the API


def make_ctx(**config: Any) -> tuple[Context, dict[str, Any]]:
    clock = ManualClock()
    cfg = Config(in_memory=True, clock=clock, **config)
    kv = MemoryKV()
    ctx = build_context(cfg, kv, Catalog.load(kv, cfg))
    return ctx, dispatch.bind(ctx)


def call(ops: dict[str, Any], op: str, **body: Any) -> Any:
    return ops[op].run(body)


def create(ops: dict[str, Any], name: str, read: int, write: int, **extra: Any) -> None:
    call(
        ops,
        "CreateTable",
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        **extra,
    )


def view(ctx: Context, name: str) -> list[tuple[float, float]]:
    st = ctx.capacity.find(name)
    return st.base.pmap.shares(st.base.read_units, st.base.write_units)


def test_api_update_table_to_8000_rcu_doubles() -> None:
    ctx, ops = make_ctx()
    create(ops, "seed", 5000, 2000)
    assert view(ctx, "seed") == [(1250.0, 500.0)] * 4
    call(
        ops,
        "UpdateTable",
        TableName="seed",
        ProvisionedThroughput={"ReadCapacityUnits": 8000, "WriteCapacityUnits": 2000},
    )
    assert view(ctx, "seed") == [(1000.0, 250.0)] * 8


def test_api_size_split_of_one_partition() -> None:
    ctx, ops = make_ctx(partition_size_limit=1000)
    create(ops, "fill", 5000, 2000)
    assert len(view(ctx, "fill")) == 4
    names = [
        n
        for n in (f"user{i}" for i in range(400))
        if int.from_bytes(keyspace.partition_hash(keycodec.encode_string(n)), "big") < HASH_SPACE // 4
    ][:12]
    for name in names:
        call(ops, "PutItem", TableName="fill", Item={"pk": {"S": name}, "v": {"S": "x" * 100}})
        if len(view(ctx, "fill")) == 5:
            break
    assert sorted(view(ctx, "fill"), reverse=True) == [(1250.0, 500.0)] * 3 + [(625.0, 250.0)] * 2
    st = ctx.capacity.find("fill")
    assert sum(p.bytes for p in st.base.pmap) == ctx.catalog.stats("fill")[1]
    assert all(p.bytes <= 1000 for p in st.base.pmap)


def test_api_bulk_load_then_200_wcu() -> None:
    ctx, ops = make_ctx()
    create(ops, "bulk", 1, 11000)
    assert [w for _, w in view(ctx, "bulk")] == [1000.0] * 11
    call(
        ops, "UpdateTable", TableName="bulk", ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 200}
    )
    assert len(view(ctx, "bulk")) == 11
    assert all(abs(w - 200 / 11) < 1e-9 for _, w in view(ctx, "bulk"))


def test_api_rebuild_from_size_65_units_is_7() -> None:
    ctx, ops = make_ctx(partition_size_limit=1000)
    create(ops, "restore", 1, 1000)
    total = 0
    i = 0
    while total <= 6000:
        item = {"pk": {"S": f"k{i:03d}"}, "v": {"S": "x" * 96}}
        call(ops, "PutItem", TableName="restore", Item=item)
        ctx.clock.advance(1)  # type: ignore[attr-defined]
        total += 2 + 4 + 1 + 96
        i += 1
    assert ctx.catalog.stats("restore")[1] == total  # 6,489 bytes at a 1,000-byte partition limit
    cap = ctx.capacity
    cap.rebuild(cap.find("restore"))
    assert len(view(ctx, "restore")) == 7


def test_map_survives_a_restart() -> None:
    ctx, ops = make_ctx(partition_size_limit=1000)
    create(ops, "keep", 5000, 2000)
    call(
        ops,
        "UpdateTable",
        TableName="keep",
        ProvisionedThroughput={"ReadCapacityUnits": 8000, "WriteCapacityUnits": 2000},
    )
    assert len(view(ctx, "keep")) == 8
    ctx.capacity.set_as_if(ctx.capacity.find("keep"), 3)
    kv = ctx.kv
    again = build_context(ctx.config, kv, Catalog.load(kv, ctx.config))
    st = again.capacity.find("keep")
    assert len(st.base.natural) == 8
    assert st.as_if == 3 and len(st.base.pmap) == 3


def test_table_behaves_as_if_it_held_n_partitions() -> None:
    ctx, ops = make_ctx()
    create(ops, "asif", 400, 400)
    assert len(view(ctx, "asif")) == 1
    cap = ctx.capacity
    cap.set_as_if(cap.find("asif"), 40)
    assert view(ctx, "asif") == [(10.0, 10.0)] * 40
    cap.set_as_if(cap.find("asif"), 0)
    assert len(view(ctx, "asif")) == 1


def test_as_if_through_the_reserved_tag() -> None:
    ctx, ops = make_ctx()
    create(ops, "tagged", 400, 400, Tags=[{"Key": "dynastore:partitions", "Value": "8"}])
    assert view(ctx, "tagged") == [(50.0, 50.0)] * 8


@pytest.mark.parametrize(("billing", "count"), [("PAY_PER_REQUEST", 8)])
def test_on_demand_tables_start_as_dynamodb_sizes_them(billing: str, count: int) -> None:
    ctx, ops = make_ctx()
    call(
        ops,
        "CreateTable",
        TableName="odt",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode=billing,
    )
    st = ctx.capacity.find("odt")
    assert len(st.base.pmap) == count  # 12,000 RRU + 4,000 WRU at once: ceil(4 + 4)
    assert (st.base.read_total.rate, st.base.write_total.rate) == (12000.0, 4000.0)
