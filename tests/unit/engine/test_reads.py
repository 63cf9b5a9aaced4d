"""Key spaces, pages and BatchGetItem lookups: key ranges, pages (Limit, 1 MB, filters, direction), BatchGetItem
limits (memory and lmdb)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.item_reads import BatchGetRequest, read_batch
from dynastore.engine.key_spaces import TableKeySpace, TableSpaces, range_bounds
from dynastore.engine.keys import storage_key
from dynastore.engine.pages import PageRequest, condition_paths, read_range
from dynastore.expressions import ExpressionContext
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import KeyAttr, TableDef
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


def _context(kv: KV, range_type: str | None = "N") -> Context:
    """Table "t": partition key pk (S), sort key sk of ``range_type`` (none when None), on demand."""
    ctx, _ = tables.make_ctx(kv)
    tables.create(ctx, "t", range_key=None if range_type is None else KeyAttr("sk", range_type))
    return ctx


def _put(ctx: Context, table: TableDef, items: list[dict[str, Any]]) -> None:
    writes.execute_batch(ctx, [(table, storage_key(table, item), writes.PutPlan(item)) for item in items])


def _item(pk: str, sk: int, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"pk": {"S": pk}, "sk": {"N": str(sk)}}
    for name, value in extra.items():
        item[name] = {"S": value} if isinstance(value, str) else {"N": str(value)}
    return item


@pytest.fixture
def loaded(kv: KV) -> tuple[Context, TableDef]:
    ctx = _context(kv)
    table = ctx.catalog.get_active("t")
    _put(ctx, table, [_item(pk, sk, v=sk % 3) for pk in ("a", "b") for sk in range(10)])
    return ctx, table


def _page(ctx: Context, table: TableDef, pk: str, **options: Any) -> Any:
    space = TableKeySpace(table)
    lo, hi = range_bounds(space.partition_prefix(({"S": pk},)), "N", options.pop("op", None), options.pop("values", ()))
    with ctx.kv.read() as txn:
        return read_range(txn, PageRequest(space, lo, hi, **options))


def test_table_space_is_made_once_per_table_definition(loaded: tuple[Context, TableDef]) -> None:
    _, table = loaded
    spaces = TableSpaces()
    space = spaces.of(table)
    assert spaces.of(table) is space
    assert (space.hash_key, space.range_key, space.key_schema) == (
        table.key_schema.hash_key,
        table.key_schema.range_key,
        table.key_schema,
    )
    assert space.index is None
    changed = dataclasses.replace(table, item_count=table.item_count + 1)  # what a catalog change makes
    assert spaces.of(changed) is not space and spaces.of(changed).table is changed


def _sks(page: Any) -> list[int]:
    return [int(orjson.loads(item)["sk"]["N"]) for item in page.items]


class TestPages:
    def test_whole_partition_in_order(self, loaded: tuple[Context, TableDef]) -> None:
        page = _page(*loaded, "a")
        assert _sks(page) == list(range(10))
        assert (page.count, page.scanned_count, page.last_key) == (10, 10, None)

    def test_reverse(self, loaded: tuple[Context, TableDef]) -> None:
        assert _sks(_page(*loaded, "a", reverse=True)) == list(range(9, -1, -1))

    @pytest.mark.parametrize(
        ("op", "values", "expected"),
        [
            ("=", (4,), [4]),
            ("<", (4,), [0, 1, 2, 3]),
            ("<=", (4,), [0, 1, 2, 3, 4]),
            (">", (7,), [8, 9]),
            (">=", (7,), [7, 8, 9]),
            ("BETWEEN", (3, 5), [3, 4, 5]),
        ],
    )
    def test_sort_key_conditions(
        self, loaded: tuple[Context, TableDef], op: str, values: tuple[int, ...], expected: list[int]
    ) -> None:
        page = _page(*loaded, "a", op=op, values=tuple({"N": str(v)} for v in values))
        assert _sks(page) == expected

    def test_limit_counts_items_read_and_sets_last_key(self, loaded: tuple[Context, TableDef]) -> None:
        page = _page(*loaded, "a", limit=10)
        assert page.last_key == {"pk": {"S": "a"}, "sk": {"N": "9"}}  # Limit reached: a key even at the end
        exprs = ExpressionContext(None, {":v": {"N": "0"}})
        page = _page(*loaded, "a", limit=4, filter=exprs.condition("FilterExpression", "v = :v"))
        assert (_sks(page), page.count, page.scanned_count) == ([0, 3], 2, 4)
        assert page.last_key == {"pk": {"S": "a"}, "sk": {"N": "3"}}

    def test_count_only_and_projection(self, loaded: tuple[Context, TableDef]) -> None:
        page = _page(*loaded, "a", count_only=True)
        assert (page.items, page.count) == ([], 10)
        projection = ExpressionContext(None, None).projection("v")
        assert orjson.loads(_page(*loaded, "a", projection=projection).items[0]) == {"v": {"N": "0"}}

    def test_page_bytes_measured_before_filter(self, loaded: tuple[Context, TableDef]) -> None:
        ctx, table = loaded
        size = sum(item_size(_item("a", sk, v=sk % 3)) for sk in range(3))
        exprs = ExpressionContext(None, {":v": {"N": "7"}})
        page = _page(ctx, table, "a", page_bytes=size, filter=exprs.condition("FilterExpression", "v = :v"))
        assert (page.count, page.scanned_count, page.read_bytes) == (0, 3, size)
        assert page.last_key == {"pk": {"S": "a"}, "sk": {"N": "2"}}
        page = _page(ctx, table, "a", page_bytes=size - 1)  # the item that reaches the limit is the last
        assert page.scanned_count == 3

    def test_scan_segments_cover_table_once(self, loaded: tuple[Context, TableDef]) -> None:
        ctx, table = loaded
        space = TableKeySpace(table)
        seen: list[bytes] = []
        with ctx.kv.read() as txn:
            for segment in range(7):
                lo, hi = space.segment(segment, 7)
                seen += [bytes(item) for item in read_range(txn, PageRequest(space, lo, hi)).items]
        assert len(seen) == len(set(seen)) == 20

    def test_last_key_round_trips(self, loaded: tuple[Context, TableDef]) -> None:
        _, table = loaded
        space = TableKeySpace(table)
        for key in ({"pk": {"S": "x\x00y"}, "sk": {"N": "-1.5"}}, {"pk": {"S": "é"}, "sk": {"N": "1E+5"}}):
            assert space.last_key(space.start_key(key))["pk"] == key["pk"]


class TestBatchGet:
    def test_items_missing_keys_and_capacity(self, loaded: tuple[Context, TableDef]) -> None:
        ctx, table = loaded
        keys = (storage_key(table, _item("a", 1)), storage_key(table, _item("z", 1)))
        with ctx.kv.read() as txn:
            (result,) = read_batch(txn, [BatchGetRequest(table, keys, consistent=True)])
        assert len(result.items) == 1 and result.unprocessed == []
        assert result.half_units == 4  # each key rounded on its own: 1 unit found + 1 unit missing, consistent

    def test_response_limit_and_admit_leave_keys_unprocessed(self, loaded: tuple[Context, TableDef]) -> None:
        ctx, table = loaded
        keys = tuple(storage_key(table, _item("b", sk)) for sk in range(5))
        size = item_size(_item("b", 0, v=0)) + item_size(_item("b", 1, v=1))
        with ctx.kv.read() as txn:
            (result,) = read_batch(txn, [BatchGetRequest(table, keys)], response_bytes=size)
            assert (len(result.items), result.unprocessed) == (2, [2, 3, 4])
            (result,) = read_batch(txn, [BatchGetRequest(table, keys)], admit=lambda _table, key: key != keys[1])
            assert (len(result.items), result.unprocessed) == (4, [1])


_numbers = st.decimals(min_value=-(10**6), max_value=10**6, places=2, allow_nan=False, allow_infinity=False)
_ops = st.sampled_from(["=", "<", "<=", ">", ">=", "BETWEEN"])


@settings(max_examples=300, deadline=None)
@given(stored=st.lists(_numbers, max_size=12), op=_ops, a=_numbers, b=_numbers)
def test_range_bounds_match_the_predicate(stored: list[Decimal], op: str, a: Decimal, b: Decimal) -> None:
    """A key lies in range_bounds exactly when its sort key satisfies the condition."""
    low, high = min(a, b), max(a, b)
    prefix = b"I\x00\x00\x00\x01prefix"
    values = ({"N": str(low)}, {"N": str(high)}) if op == "BETWEEN" else ({"N": str(a)},)
    lo, hi = range_bounds(prefix, "N", op, values)
    predicate: Callable[[Decimal], bool] = {
        "=": lambda x: x == a,
        "<": lambda x: x < a,
        "<=": lambda x: x <= a,
        ">": lambda x: x > a,
        ">=": lambda x: x >= a,
        "BETWEEN": lambda x: low <= x <= high,
    }[op]
    for x in stored:
        key = prefix + encode_value("N", str(x))
        assert (lo <= key < hi) == predicate(x)


@settings(max_examples=300, deadline=None)
@given(stored=st.lists(st.text(max_size=6), max_size=12), stem=st.text(max_size=3))
def test_begins_with_bounds(stored: list[str], stem: str) -> None:
    prefix = b"I\x00\x00\x00\x01p"
    lo, hi = range_bounds(prefix, "S", "begins_with", ({"S": stem},))
    for x in stored:
        key = prefix + encode_value("S", x)
        assert (lo <= key < hi) == x.startswith(stem)


def test_condition_paths_in_source_order() -> None:
    exprs = ExpressionContext({"#n": "name"}, {":v": {"N": "1"}, ":w": {"S": "x"}})
    condition = exprs.condition("FilterExpression", "a.b = :v AND (size(#n) > :v OR contains(l[0], :w))")
    assert condition_paths(condition) == [("a", "b"), ("name",), ("l", 0)]
