"""The capacity model of a dynastore (engine/capacity/state.py): partitions sized from a table's throughput
and data, splits as items arrive, the as-if count, and the state kept across a restart. Tables are built as
typed definitions (tables.py)."""

from __future__ import annotations

import dataclasses

from dynastore.engine import tables, writes
from dynastore.engine.capacity.partitions import HASH_SPACE
from dynastore.engine.context import Context
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import ProvisionedThroughput, TableDef
from dynastore.model.values import Item
from dynastore.storage import keycodec, keyspace
from tests.unit.engine.tables import create, key_of, make_ctx, restart


def view(ctx: Context, name: str) -> list[tuple[float, float]]:
    st = ctx.capacity.find(name)
    return st.base.pmap.shares(st.base.read_units, st.base.write_units)


def put(ctx: Context, td: TableDef, item: Item) -> None:
    writes.perform(ctx, td, key_of(td, item["pk"]["S"]), writes.PutPlan(item, size=item_size(item)))


def test_size_split_of_one_partition() -> None:
    ctx, _ = make_ctx(partition_size_limit=1000)
    td = create(ctx, "fill", 5000, 2000)
    assert len(view(ctx, "fill")) == 4
    names = [
        n
        for n in (f"user{i}" for i in range(400))
        if int.from_bytes(keyspace.partition_hash(keycodec.encode_string(n)), "big") < HASH_SPACE // 4
    ][:12]
    for name in names:
        put(ctx, td, {"pk": {"S": name}, "v": {"S": "x" * 100}})
        if len(view(ctx, "fill")) == 5:
            break
    assert sorted(view(ctx, "fill"), reverse=True) == [(1250.0, 500.0)] * 3 + [(625.0, 250.0)] * 2
    st = ctx.capacity.find("fill")
    assert sum(p.bytes for p in st.base.pmap) == ctx.catalog.stats("fill")[1]
    assert all(p.bytes <= 1000 for p in st.base.pmap)


def test_rebuild_from_size_65_units_is_7() -> None:
    ctx, clock = make_ctx(partition_size_limit=1000)
    td = create(ctx, "restore", 1, 1000)
    total = 0
    i = 0
    while total <= 6000:
        put(ctx, td, {"pk": {"S": f"k{i:03d}"}, "v": {"S": "x" * 96}})
        clock.advance(1)
        total += 2 + 4 + 1 + 96
        i += 1
    assert ctx.catalog.stats("restore")[1] == total  # 6,489 bytes at a 1,000-byte partition limit
    cap = ctx.capacity
    cap.rebuild(cap.find("restore"))
    assert len(view(ctx, "restore")) == 7


def test_a_throughput_increase_doubles_the_partitions() -> None:
    ctx, _ = make_ctx()
    create(ctx, "seed", 5000, 2000)
    assert view(ctx, "seed") == [(1250.0, 500.0)] * 4
    tables.update(ctx, "seed", lambda td: dataclasses.replace(td, throughput=ProvisionedThroughput(8000, 2000)))
    assert view(ctx, "seed") == [(1000.0, 250.0)] * 8


def test_map_survives_a_restart() -> None:
    ctx, _ = make_ctx(partition_size_limit=1000)
    create(ctx, "keep", 5000, 2000)
    tables.update(ctx, "keep", lambda td: dataclasses.replace(td, throughput=ProvisionedThroughput(8000, 2000)))
    assert len(view(ctx, "keep")) == 8
    ctx.capacity.set_as_if(ctx.capacity.find("keep"), 3)
    again = restart(ctx)
    st = again.capacity.find("keep")
    assert len(st.base.natural) == 8
    assert st.as_if == 3 and len(st.base.pmap) == 3


def test_table_behaves_as_if_it_held_n_partitions() -> None:
    ctx, _ = make_ctx()
    create(ctx, "asif", 400, 400)
    assert len(view(ctx, "asif")) == 1
    cap = ctx.capacity
    cap.set_as_if(cap.find("asif"), 40)
    assert view(ctx, "asif") == [(10.0, 10.0)] * 40
    cap.set_as_if(cap.find("asif"), 0)
    assert len(view(ctx, "asif")) == 1


def test_as_if_through_the_reserved_tag() -> None:
    ctx, _ = make_ctx()
    create(ctx, "tagged", 400, 400, tags=(("dynastore:partitions", "8"),))
    assert view(ctx, "tagged") == [(50.0, 50.0)] * 8


def test_on_demand_tables_start_as_dynamodb_sizes_them() -> None:
    ctx, _ = make_ctx()
    create(ctx, "odt")
    st = ctx.capacity.find("odt")
    assert len(st.base.pmap) == 8  # 12,000 RRU + 4,000 WRU at once: ceil(4 + 4)
    assert (st.base.read_total.rate, st.base.write_total.rate) == (12000.0, 4000.0)
