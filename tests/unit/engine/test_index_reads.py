"""Key spaces and pages on secondary indexes: the index KeySpace (partitions, multi-attribute keys, segments,
start and last-evaluated keys) and LSI table fetches. Index entries are seeded with ``indexes.entry_for``, the
layout the write side stores (memory and lmdb)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.indexes import entry_for
from dynastore.engine.key_spaces import IndexKeySpace, range_bounds
from dynastore.engine.keys import storage_key
from dynastore.engine.pages import PageRequest, TableFetch, read_range
from dynastore.expressions import ExpressionContext
from dynastore.model.table_schema import IndexDef, KeyAttr, KeySchema, TableDef
from dynastore.storage.keycodec import encode_value
from dynastore.storage.kv import KV
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.memory_kv import MemoryKV
from tests.unit.engine import tables


@pytest.fixture(params=["memory", "lmdb"])
def kv(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KV]:
    store: KV = MemoryKV() if request.param == "memory" else LmdbKV(tmp_path / "db")
    yield store
    store.close()


def _table(kv: KV) -> tuple[Context, TableDef]:
    """pk (S) / sk (N); LSI "by_lsk" (pk, lsk) KEYS_ONLY; GSI "by_g" (g, gs N) INCLUDE [v]; GSI "multi" of
    partition attributes t, r and sort attributes rd (N), m, projecting ALL."""
    ctx, _ = tables.make_ctx(kv)
    multi = KeySchema(
        KeyAttr("t", "S"), KeyAttr("rd", "N"), more_hash=(KeyAttr("r", "S"),), more_range=(KeyAttr("m", "S"),)
    )
    table = tables.create(
        ctx,
        "t",
        range_key=tables.SK,
        lsis=(tables.lsi(ctx, "by_lsk", KeyAttr("lsk", "S")),),
        gsis=(
            tables.gsi(
                ctx, "by_g", KeyAttr("g", "S"), range_key=KeyAttr("gs", "N"), projection="INCLUDE", non_key=("v",)
            ),
            tables.gsi(ctx, "multi", multi, projection="ALL"),
        ),
    )
    return ctx, table


def _seed(ctx: Context, table: TableDef, items: list[dict[str, Any]]) -> None:
    """The items, and their entries in every index (as the write side stores them)."""
    writes.execute_batch(ctx, [(table, storage_key(table, item), writes.PutPlan(item)) for item in items])
    with ctx.kv.write() as txn:
        for item in items:
            for index in (*table.lsis, *table.gsis):
                entry = entry_for(table, index, item)
                if entry is not None:
                    txn.put(*entry)


def _index(table: TableDef, name: str) -> IndexDef:
    index = table.index(name)
    assert index is not None
    return index


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def _read(ctx: Context, req: PageRequest) -> tuple[list[dict[str, Any]], Any]:
    with ctx.kv.read() as txn:
        page = read_range(txn, req)
    return [orjson.loads(item) for item in page.items], page


def test_gsi_partition_in_index_sort_order_with_duplicate_keys(kv: KV) -> None:
    ctx, table = _table(kv)
    items = [
        {"pk": _s("a"), "sk": _n(1), "g": _s("x"), "gs": _n(5), "v": _s("one"), "w": _s("not projected")},
        {"pk": _s("b"), "sk": _n(1), "g": _s("x"), "gs": _n(2), "v": _s("two")},
        {"pk": _s("c"), "sk": _n(1), "g": _s("x"), "gs": _n(5)},  # same index key as the first: both kept
        {"pk": _s("d"), "sk": _n(1), "g": _s("y"), "gs": _n(1)},
        {"pk": _s("e"), "sk": _n(1), "v": _s("sparse: no g")},
    ]
    _seed(ctx, table, items)
    space = IndexKeySpace(table, _index(table, "by_g"))
    lo, hi = range_bounds(space.partition_prefix((_s("x"),)), "S", None, ())
    got, page = _read(ctx, PageRequest(space, lo, hi))
    assert [(i["pk"]["S"], i["gs"]["N"]) for i in got] == [("b", "2"), ("a", "5"), ("c", "5")]
    assert got[1] == {"pk": _s("a"), "sk": _n(1), "g": _s("x"), "gs": _n(5), "v": _s("one")}  # INCLUDE v only
    assert page.last_key is None


def test_index_pages_resume_from_the_last_evaluated_key(kv: KV) -> None:
    ctx, table = _table(kv)
    _seed(ctx, table, [{"pk": _s(f"p{i}"), "sk": _n(i), "g": _s("x"), "gs": _n(i % 3)} for i in range(7)])
    space = IndexKeySpace(table, _index(table, "by_g"))
    lo, hi = range_bounds(space.partition_prefix((_s("x"),)), "S", None, ())
    seen: list[str] = []
    keys: list[dict[str, Any]] = []
    start = lo
    while True:
        got, page = _read(ctx, PageRequest(space, start, hi, limit=3))
        seen += [i["pk"]["S"] for i in got]
        if page.last_key is None:
            break
        keys.append(page.last_key)
        start = space.start_key(page.last_key) + b"\x00"
    assert sorted(seen) == [f"p{i}" for i in range(7)] and len(seen) == 7
    assert keys[0] == {"g": _s("x"), "gs": _n(0), "pk": _s("p6"), "sk": _n(6)}  # index key, then table key


def test_multi_attribute_key_partition_and_sort_prefix(kv: KV) -> None:
    ctx, table = _table(kv)
    rows = [
        ("T1", "EU", 1, "a"),
        ("T1", "EU", 1, "b"),
        ("T1", "EU", 2, "a"),
        ("T1", "US", 1, "a"),
        ("T2", "EU", 1, "a"),
    ]
    _seed(
        ctx,
        table,
        [
            {"pk": _s(f"p{i}"), "sk": _n(i), "t": _s(t), "r": _s(r), "rd": _n(rd), "m": _s(m)}
            for i, (t, r, rd, m) in enumerate(rows)
        ],
    )
    space = IndexKeySpace(table, _index(table, "multi"))
    prefix = space.partition_prefix((_s("T1"), _s("EU")))
    got, _ = _read(ctx, PageRequest(space, *range_bounds(prefix, "S", None, ())))
    assert [(i["rd"]["N"], i["m"]["S"]) for i in got] == [("1", "a"), ("1", "b"), ("2", "a")]
    stem = prefix + encode_value("N", "1")  # rd = 1 AND m > "a"
    got, _ = _read(ctx, PageRequest(space, *range_bounds(stem, "S", ">", (_s("a"),))))
    assert [i["pk"]["S"] for i in got] == ["p1"]
    last = space.last_key(space.start_key(got[0]))
    assert last == {"t": _s("T1"), "r": _s("EU"), "rd": _n(1), "m": _s("b"), "pk": _s("p1"), "sk": _n(1)}


def test_index_scan_segments_cover_the_index_once(kv: KV) -> None:
    ctx, table = _table(kv)
    _seed(ctx, table, [{"pk": _s(f"p{i}"), "sk": _n(i), "g": _s(f"g{i % 9}"), "gs": _n(i)} for i in range(40)])
    space = IndexKeySpace(table, _index(table, "by_g"))
    whole, _ = _read(ctx, PageRequest(space, *space.segment(0, 1)))
    parts: list[dict[str, Any]] = []
    for segment in range(4):
        got, _ = _read(ctx, PageRequest(space, *space.segment(segment, 4)))
        parts += got
    assert len(whole) == 40 and parts == whole


def test_table_key_of_an_entry_is_the_item_key(kv: KV) -> None:
    ctx, table = _table(kv)
    item = {"pk": _s("a"), "sk": _n(7), "lsk": _s("l"), "g": _s("x"), "gs": _n(1)}
    for name in ("by_lsk", "by_g"):
        index = _index(table, name)
        entry = entry_for(table, index, item)
        assert entry is not None
        assert IndexKeySpace(table, index).table_key(entry[0]) == storage_key(table, item)


def test_lsi_fetch_charges_each_table_item_on_its_own(kv: KV) -> None:
    """The seeds' example: four ~200-byte items; the KEYS_ONLY entries cost 0.5 together, fetching the items
    from the table 0.5 each (eventually consistent), 2.5 in all."""
    ctx, table = _table(kv)
    _seed(ctx, table, [{"pk": _s("one"), "sk": _n(i), "lsk": _s(f"l{i}"), "data": _s("x" * 180)} for i in range(4)])
    space = IndexKeySpace(table, _index(table, "by_lsk"))
    bounds = range_bounds(space.partition_prefix((_s("one"),)), "S", None, ())
    projected, page = _read(ctx, PageRequest(space, *bounds))
    assert projected[0] == {"pk": _s("one"), "sk": _n(0), "lsk": _s("l0")}
    assert (page.read_bytes < 4096, page.fetch_half_units) == (True, 0)
    fetch = TableFetch(space, for_filter=False, consistent=False)
    full, page = _read(ctx, PageRequest(space, *bounds, fetch=fetch))
    assert full[0]["data"] == _s("x" * 180) and len(full) == 4
    assert page.fetch_half_units == 4  # 4 x 0.5 units


def test_lsi_fetch_for_a_filter_on_unprojected_attributes(kv: KV) -> None:
    ctx, table = _table(kv)
    _seed(ctx, table, [{"pk": _s("a"), "sk": _n(i), "lsk": _s(f"l{i}"), "w": _n(i)} for i in range(5)])
    space = IndexKeySpace(table, _index(table, "by_lsk"))
    exprs = ExpressionContext(None, {":w": _n(3)})
    filt = exprs.condition("FilterExpression", "w >= :w")
    bounds = range_bounds(space.partition_prefix((_s("a"),)), "S", None, ())
    fetch = TableFetch(space, for_filter=True, consistent=True)
    got, page = _read(ctx, PageRequest(space, *bounds, filter=filt, fetch=fetch))
    assert [i["w"] for i in got] == [_n(3), _n(4)]
    assert (page.count, page.scanned_count, page.fetch_half_units) == (2, 5, 10)  # every entry read was fetched
