"""The engine's read calls, driven through typed requests: GetItem's lookup, a Query/Scan page, BatchGetItem and
transactional gets, each with its admission (docs/capacity.md), on tables built as TableDefs (tables.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import orjson
import pytest

from dynastore.engine import transactions
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.engine.item_reads import BatchGetRequest, GetItemRequest, batch_get, get_item
from dynastore.engine.key_spaces import IndexKeySpace, TableKeySpace
from dynastore.engine.keys import storage_key
from dynastore.engine.pages import PageRequest, read_page, read_range
from dynastore.errors import ProvisionedThroughputExceededException, TransactionCanceledException
from dynastore.limits import MAX_PAGE_BYTES
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import IndexDef, KeyAttr, TableDef
from dynastore.storage.kv import KV, ReadTxn
from tests.unit.engine.tables import SK, create, gsi, item, make_ctx, put, read_consumed, spend_burst


def make_context() -> Context:
    """Partitions of at most 60 RCU and 20 WCU, so a table's throughput maps to few, small partitions."""
    ctx, _ = make_ctx(partition_max_rcu=60, partition_max_wcu=20)
    return ctx


def make_table(ctx: Context, read: int | None = None, *, gsis: tuple[IndexDef, ...] = ()) -> TableDef:
    """Table "t" (pk S, sk N): on demand, or provisioned at ``read`` RCU and 20 WCU with its burst spent (a
    read past one second of its share is throttled)."""
    table = create(ctx, "t", read, None if read is None else 20, range_key=SK, gsis=gsis)
    if read is not None:
        spend_burst(ctx, table)
    return table


# ---------------------------------------------------------------- get_item


def test_get_item_of_a_missing_item_costs_the_minimum() -> None:
    ctx = make_context()
    table = make_table(ctx, 10)
    result = get_item(ctx, GetItemRequest(table, item("a", 1)))
    assert result.item_json is None
    assert result.half_units == 1  # half a unit, eventually consistent
    assert get_item(ctx, GetItemRequest(table, item("a", 1), consistent=True)).half_units == 2
    assert read_consumed(ctx, table) == 1.5


def test_get_item_gives_the_stored_json_and_the_decoded_item_at_its_exact_cost() -> None:
    ctx = make_context()
    table = make_table(ctx, 10)
    stored = item("a", 1, v="x" * 5000)
    put(ctx, table, [stored])
    result = get_item(ctx, GetItemRequest(table, item("a", 1), consistent=True))
    assert result.item_json is not None and bytes(result.item_json) == orjson.dumps(stored)
    assert result.item() == stored
    assert result.half_units == read_half_units(item_size(stored), consistent=True) == 4
    assert read_consumed(ctx, table) == 2


def test_get_item_refused_raises_and_takes_nothing() -> None:
    ctx = make_context()
    table = make_table(ctx, 2)  # one partition, 2 RCU left
    put(ctx, table, [item("a", 1, v="x" * 5000)])  # two units, strongly consistent
    get_item(ctx, GetItemRequest(table, item("a", 1), consistent=True))
    with pytest.raises(ProvisionedThroughputExceededException):
        get_item(ctx, GetItemRequest(table, item("a", 1), consistent=True))
    assert read_consumed(ctx, table) == 2


# ---------------------------------------------------------------- read_page


def _partition_page(ctx: Context, table: Any, pk: str, **options: Any) -> Any:
    space = TableKeySpace(table)
    prefix = space.partition_prefix(({"S": pk},))
    lo, hi = prefix, prefix + b"\xff"
    return read_page(ctx, PageRequest(space, lo, hi, admit_at=prefix, **options))


def test_a_page_stops_at_limit_and_is_settled_at_what_it_read() -> None:
    ctx = make_context()
    table = make_table(ctx, 10)
    items = [item("a", sk, v="x" * 1000) for sk in range(10)]
    put(ctx, table, items)
    page = _partition_page(ctx, table, "a", limit=3, consistent=True)
    assert [orjson.loads(bytes(raw)) for raw in page.items] == items[:3]
    assert (page.count, page.scanned_count) == (3, 3)
    assert page.last_key == {"pk": {"S": "a"}, "sk": {"N": "2"}}
    assert page.read_bytes == sum(item_size(it) for it in items[:3])
    assert read_consumed(ctx, table) == read_half_units(page.read_bytes, consistent=True) / 2 == 1


def test_a_page_ends_after_the_item_that_reaches_one_megabyte() -> None:
    ctx = make_context()
    table = make_table(ctx)
    items = [item("a", sk, v="x" * 300_000) for sk in range(5)]
    put(ctx, table, items)
    page = _partition_page(ctx, table, "a")
    sizes = [item_size(it) for it in items]
    assert sum(sizes[:3]) < MAX_PAGE_BYTES <= sum(sizes[:4])
    assert page.scanned_count == len(page.items) == 4
    assert page.last_key == {"pk": {"S": "a"}, "sk": {"N": "3"}}
    assert _partition_page(ctx, table, "b").last_key is None


def test_a_throttled_page_raises_before_reading() -> None:
    ctx = make_context()
    table = make_table(ctx, 1)
    put(ctx, table, [item("a", sk, v="x" * 4000) for sk in range(3)])
    page = _partition_page(ctx, table, "a")  # admitted at half a unit, settled at 1.5
    assert read_consumed(ctx, table) == 1.5
    with pytest.raises(ProvisionedThroughputExceededException):
        _partition_page(ctx, table, "a")
    assert read_consumed(ctx, table) == 1.5
    assert page.scanned_count == 3


def test_a_gsi_page_first_applies_the_writes_acknowledged_before_it() -> None:
    ctx = make_context()
    index = gsi(ctx, "by_g", KeyAttr("g", "S"), range_key=SK, projection="ALL")
    table = make_table(ctx, gsis=(index,))
    put(ctx, table, [item("a", sk, g="red") for sk in range(3)])
    backlog = ctx.propagation
    assert backlog.applied_through < backlog.last_added  # the GSI updates wait in the backlog
    space = IndexKeySpace(table, table.gsis[0])
    prefix = space.partition_prefix(({"S": "red"},))
    request = PageRequest(space, prefix, prefix + b"\xff", admit_at=prefix)
    with ctx.kv.read() as txn:
        assert read_range(txn, request).items == []
    page = read_page(ctx, request)
    assert [orjson.loads(bytes(raw))["sk"] for raw in page.items] == [{"N": "0"}, {"N": "1"}, {"N": "2"}]
    assert backlog.applied_through == backlog.last_added


# ---------------------------------------------------------------- batch_get


def test_batch_get_leaves_refused_keys_unprocessed_and_raises_when_none_was_read() -> None:
    ctx = make_context()
    table = make_table(ctx, 2)
    put(ctx, table, [item("a", sk, v="x" * 5000) for sk in range(3)])  # two units each, strongly consistent
    keys = tuple(storage_key(table, item("a", sk)) for sk in range(3))
    (result,) = batch_get(ctx, [BatchGetRequest(table, keys, consistent=True)])
    assert len(result.items) == 1 and result.unprocessed == [1, 2]
    assert result.half_units == 4
    assert read_consumed(ctx, table) == 2
    with pytest.raises(ProvisionedThroughputExceededException):
        batch_get(ctx, [BatchGetRequest(table, keys[1:], consistent=True)])
    assert read_consumed(ctx, table) == 2


class _CountingTxn:
    def __init__(self, txn: ReadTxn, counter: _CountingKV) -> None:
        self.txn = txn
        self.counter = counter

    def get(self, key: bytes) -> bytes | None:
        self.counter.gets += 1
        return self.txn.get(key)

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        return self.txn.iter_range(lo, hi, reverse=reverse)


class _CountingKV:
    """The store's reads, counting the lookups."""

    def __init__(self, kv: KV) -> None:
        self.kv = kv
        self.gets = 0

    @contextmanager
    def read(self) -> Iterator[ReadTxn]:
        with self.kv.read() as txn:
            yield _CountingTxn(txn, self)


def test_batch_get_looks_each_item_up_once_and_gives_back_keys_past_the_response_limit() -> None:
    ctx = make_context()
    table = make_table(ctx, 3)  # one partition of 3 RCU
    put(ctx, table, [item("a", sk, v="x" * 5000) for sk in range(3)])
    keys = tuple(storage_key(table, item("a", sk)) for sk in range(3))
    counting = _CountingKV(ctx.kv)
    ctx.kv = cast(KV, counting)
    (result,) = batch_get(ctx, [BatchGetRequest(table, keys)], response_bytes=11_000)  # room for two items
    assert counting.gets == 3
    assert result.unprocessed == [2]
    assert read_consumed(ctx, table) == 2  # three keys of one unit admitted, the one left unprocessed given back


# ---------------------------------------------------------------- transactional gets


def test_transactional_gets_are_admitted_at_twice_a_consistent_read() -> None:
    ctx = make_context()
    table = make_table(ctx, 40)
    stored = item("a", 1, v="x" * 5000)
    put(ctx, table, [stored])
    actions = [transactions.GetAction(table, storage_key(table, item("a", sk))) for sk in (1, 2)]
    present, missing = transactions.execute_get(ctx, actions)
    assert (present.item, present.half_units) == (stored, 8)
    assert (missing.item, missing.half_units) == (None, 4)
    assert read_consumed(ctx, table) == 6


def test_a_refused_transactional_get_cancels_and_gives_back_the_others() -> None:
    ctx = make_context()
    table = make_table(ctx, 3)  # one partition, 3 RCU left
    put(ctx, table, [item("a", 1, v="x" * 1000)])
    actions = [transactions.GetAction(table, storage_key(table, item("a", sk))) for sk in (1, 2)]
    with pytest.raises(TransactionCanceledException) as info:
        transactions.execute_get(ctx, actions)  # two units each: the second finds one left
    codes = [reason["Code"] for reason in info.value.extra["CancellationReasons"]]
    assert codes == ["None", "ProvisionedThroughputExceeded"]
    assert read_consumed(ctx, table) == 0
