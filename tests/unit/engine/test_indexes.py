"""engine.indexes and engine.changelog: entries, sparse indexes, key checks, LSI writes in the item's
transaction, GSI changes in the durable change log, backfills, index write units, item collections and statistics."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dynastore.engine import indexes, writes
from dynastore.engine import tables as engine_tables
from dynastore.engine.changelog import MODIFY, decode_record, encode_record
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key, table_item_key
from dynastore.errors import ItemCollectionSizeLimitExceededException, ValidationException
from dynastore.model.table_schema import (
    ACTIVE,
    CREATING,
    UPDATING,
    IndexDef,
    KeyAttr,
    KeySchema,
    Projection,
    ProvisionedThroughput,
    TableDef,
)
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item
from dynastore.storage.kv import KV
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock
from tests.unit.engine import tables

Item = dict[str, Any]


def make_ctx(kv: KV | None = None, **config: Any) -> Context:
    ctx, _ = tables.make_ctx(kv, **config)
    return ctx


def create_indexed(ctx: Context, name: str = "t") -> TableDef:
    """pk/sk table; LSI "by_n" (pk, n) KEYS_ONLY; GSI "by_g" (g) ALL; GSI "by_h" (h, n) INCLUDE [x]."""
    n = KeyAttr("n", "N")
    return tables.create(
        ctx,
        name,
        range_key=KeyAttr("sk", "S"),
        lsis=(tables.lsi(ctx, "by_n", n),),
        gsis=(
            tables.gsi(ctx, "by_g", KeyAttr("g", "S"), projection="ALL"),
            tables.gsi(ctx, "by_h", KeyAttr("h", "S"), range_key=n, projection="INCLUDE", non_key=("x",)),
        ),
    )


@pytest.fixture
def ctx() -> Context:
    return make_ctx()


@pytest.fixture
def table(ctx: Context) -> TableDef:
    return create_indexed(ctx)


def put(ctx: Context, table: TableDef, item: Item) -> writes.WriteResult:
    return writes.execute(ctx, table, storage_key(table, item), writes.PutPlan(item))


def delete(ctx: Context, table: TableDef, key: Item) -> writes.WriteResult:
    return writes.execute(ctx, table, storage_key(table, key), writes.DeletePlan())


def settle(ctx: Context) -> None:
    while indexes.maintain(ctx):
        pass


def index_items(ctx: Context, index: IndexDef) -> list[Item]:
    prefix = keyspace.index_prefix(index.index_id)
    with ctx.kv.read() as txn:
        return [decode_item(raw) for _, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix))]


def expected_index(ctx: Context, table: TableDef, index: IndexDef) -> list[Item]:
    """The index computed from scratch from the table's items."""
    prefix = keyspace.table_prefix(table.table_id)
    entries = []
    with ctx.kv.read() as txn:
        for _, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix)):
            entry = indexes.entry_for(table, index, decode_item(raw))
            if entry is not None:
                entries.append(entry)
    return [decode_item(value) for _, value in sorted(entries)]


ITEM = {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": "5"}, "g": {"S": "G"}, "h": {"S": "H"}, "x": {"S": "y"}}


# ---------------------------------------------------------------------------------------------- entries


def test_entry_projects_keys_only_include_and_all(table: TableDef) -> None:
    lsi, by_g, by_h = table.lsis[0], table.gsis[0], table.gsis[1]
    item = {**ITEM, "other": {"S": "z"}}
    for index, names in (
        (lsi, {"pk", "sk", "n"}),
        (by_g, set(item)),
        (by_h, {"pk", "sk", "h", "n", "x"}),
    ):
        entry = indexes.entry_for(table, index, item)
        assert entry is not None
        assert set(decode_item(entry[1])) == names


def test_entry_key_orders_by_index_key_then_table_key_and_maps_back(table: TableDef) -> None:
    by_h = table.gsis[1]
    low = indexes.entry_for(table, by_h, {**ITEM, "sk": {"S": "9"}, "n": {"N": "1"}})
    high = indexes.entry_for(table, by_h, {**ITEM, "sk": {"S": "0"}, "n": {"N": "2"}})
    assert low is not None and high is not None
    assert low[0] < high[0]
    assert table_item_key(table, by_h, low[0]) == storage_key(table, {"pk": ITEM["pk"], "sk": {"S": "9"}})


def test_sparse_item_has_no_entry(table: TableDef) -> None:
    assert indexes.entry_for(table, table.gsis[1], {"pk": {"S": "a"}, "sk": {"S": "1"}, "h": {"S": "H"}}) is None


# ---------------------------------------------------------------------------------------------- writes


def test_lsi_entry_is_written_with_the_item_and_gsi_after_propagation(ctx: Context, table: TableDef) -> None:
    put(ctx, table, ITEM)
    assert index_items(ctx, table.lsis[0]) == [{"pk": ITEM["pk"], "sk": ITEM["sk"], "n": ITEM["n"]}]
    assert index_items(ctx, table.gsis[0]) == []  # eventually consistent: still in the backlog
    settle(ctx)
    assert index_items(ctx, table.gsis[0]) == [ITEM]


def test_key_change_moves_the_entry_and_delete_removes_it(ctx: Context, table: TableDef) -> None:
    put(ctx, table, ITEM)
    put(ctx, table, {**ITEM, "g": {"S": "G2"}, "n": {"N": "6"}})
    settle(ctx)
    assert [e["g"] for e in index_items(ctx, table.gsis[0])] == [{"S": "G2"}]
    assert [e["n"] for e in index_items(ctx, table.lsis[0])] == [{"N": "6"}]
    delete(ctx, table, {"pk": ITEM["pk"], "sk": ITEM["sk"]})
    settle(ctx)
    assert all(index_items(ctx, index) == [] for index in table.lsis + table.gsis)


def test_gsi_keys_need_not_be_unique(ctx: Context, table: TableDef) -> None:
    put(ctx, table, ITEM)
    put(ctx, table, {**ITEM, "sk": {"S": "2"}})
    settle(ctx)
    assert len(index_items(ctx, table.gsis[0])) == 2


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            {"g": {"N": "1"}},
            "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N "
            "IndexName: by_g",
        ),
        (
            {"n": {"S": "1"}},  # keys two indexes: the first by name is named
            "One or more parameter values were invalid: Type mismatch for Index Key n Expected: N Actual: S "
            "IndexName: by_h",
        ),
        (
            {"h": {"S": ""}},
            "One or more parameter values are not valid. A value specified for a secondary index key is not "
            "supported. The AttributeValue for a key attribute cannot contain an empty string value. "
            "IndexName: by_h, IndexKey: h",
        ),
    ],
)
def test_bad_index_key_is_refused_and_nothing_written(ctx: Context, table: TableDef, attrs: Item, message: str) -> None:
    with pytest.raises(ValidationException) as info:
        put(ctx, table, {**ITEM, **attrs})
    assert info.value.message == message
    with ctx.kv.read() as txn:
        assert txn.get(storage_key(table, ITEM)) is None
    assert not ctx.propagation.has_pending()


def test_empty_index_key_from_an_update_has_the_update_text(ctx: Context, table: TableDef) -> None:
    from dynastore.expressions import ExpressionContext

    exprs = ExpressionContext(None, {":e": {"S": ""}})
    update = exprs.update("SET g = :e")
    key = {"pk": ITEM["pk"], "sk": ITEM["sk"]}
    with pytest.raises(ValidationException) as info:
        writes.execute(ctx, table, storage_key(table, key), writes.UpdatePlan(key, update))
    assert info.value.message == (
        "One or more parameter values are not valid. The update expression attempted to update a secondary index "
        "key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty "
        "string value."
    )


def half_units(result: writes.WriteResult) -> dict[str, int]:
    assert result.index is not None
    return {index.name: units for index, units in result.index.units}


def test_index_write_units_follow_dynamodb(ctx: Context, table: TableDef) -> None:
    assert half_units(put(ctx, table, ITEM)) == {"by_n": 2, "by_g": 2, "by_h": 2}  # one write each
    # an unprojected attribute of by_h and by_n changes: only ALL's by_g is written
    assert half_units(put(ctx, table, {**ITEM, "other": {"S": "1"}})) == {"by_g": 2}
    # by_h's projected x changes: one write; by_g too
    assert half_units(put(ctx, table, {**ITEM, "other": {"S": "1"}, "x": {"S": "new"}})) == {"by_g": 2, "by_h": 2}
    # the key of by_g moves: delete + put
    assert half_units(put(ctx, table, {**ITEM, "other": {"S": "1"}, "x": {"S": "new"}, "g": {"S": "Q"}})) == {"by_g": 4}
    # g disappears (one delete); nothing else changes
    assert half_units(put(ctx, table, {**ITEM, "other": {"S": "1"}, "x": {"S": "new"}, "g": {"S": "Q"}} | {})) == {}
    no_g = {k: v for k, v in ITEM.items() if k != "g"} | {"other": {"S": "1"}, "x": {"S": "new"}}
    assert half_units(put(ctx, table, no_g)) == {"by_g": 2}
    # an item in no index before or after costs the indexes nothing
    bare = {"pk": {"S": "b"}, "sk": {"S": "1"}}
    assert half_units(put(ctx, table, bare)) == {}


def test_large_projection_costs_more_units(ctx: Context, table: TableDef) -> None:
    big = {**ITEM, "x": {"S": "v" * 3000}}
    units = half_units(put(ctx, table, big))
    assert units == {"by_g": 2 * 3, "by_h": 2 * 3, "by_n": 2}  # 3 KB of x: three write units


# ---------------------------------------------------------------------------------------------- statistics


def test_index_statistics_count_entries(ctx: Context, table: TableDef) -> None:
    put(ctx, table, ITEM)
    put(ctx, table, {"pk": {"S": "b"}, "sk": {"S": "1"}, "g": {"S": "G"}})
    settle(ctx)
    assert ctx.catalog.index_stats("t", table.lsis[0].index_id)[0] == 1
    assert ctx.catalog.index_stats("t", table.gsis[0].index_id)[0] == 2
    live = ctx.catalog.with_live_stats(ctx.catalog.get("t"))
    assert {i.name: i.item_count for i in live.gsis} == {"by_g": 2, "by_h": 1}
    assert {i.name: i.size_bytes for i in live.lsis} == {"by_n": 2 + 1 + 2 + 1 + 1 + 2}  # pk "a", sk "1", n 5


# ---------------------------------------------------------------------------------------------- item collections


def test_item_collection_metrics_and_limit() -> None:
    ctx = make_ctx(item_collection_size_limit=200)
    table = create_indexed(ctx)
    result = put(ctx, table, {**ITEM, "x": {"S": "v" * 100}})
    assert result.index is not None and result.index.collection_key == {"pk": {"S": "a"}}
    assert result.index.collection_size > 100
    with pytest.raises(ItemCollectionSizeLimitExceededException):
        put(ctx, table, {**ITEM, "sk": {"S": "2"}, "x": {"S": "v" * 100}})
    put(ctx, table, {"pk": {"S": "other"}, "sk": {"S": "2"}, "x": {"S": "v" * 100}})  # another collection
    shrunk = put(ctx, table, {**ITEM, "x": {"S": "v"}})  # shrinking is allowed
    assert shrunk.index is not None and shrunk.index.collection_size < result.index.collection_size


# ---------------------------------------------------------------------------------------------- backlog


def test_change_record_round_trip() -> None:
    changes: list[tuple[bytes, bytes | None]] = [(b"X\x00\x01k", b"value"), (b"X\x00\x02z", None)]
    raw = encode_record(12.5, 7, 3, MODIFY, True, b"I\x00key", b"old", None, changes)
    record = decode_record(42, raw)
    assert (record.seq, record.at, record.table_id, record.shard, record.event_name, record.by_service) == (
        42,
        12.5,
        7,
        3,
        "MODIFY",
        True,
    )
    assert (record.key, record.old, record.new, record.gsi) == (b"I\x00key", b"old", None, changes)


def test_backlog_survives_a_restart_and_is_applied_once() -> None:
    kv = MemoryKV()
    ctx = make_ctx(kv)
    table = create_indexed(ctx)
    put(ctx, table, ITEM)
    put(ctx, table, {**ITEM, "g": {"S": "G2"}})
    # a new server on the same storage (the first one "crashed" before propagating)
    again = make_ctx(kv)
    table = again.catalog.get_active("t")
    put(again, table, {**ITEM, "sk": {"S": "2"}})  # sequence numbers continue after the stored records
    settle(again)
    assert sorted(e["g"]["S"] for e in index_items(again, table.gsis[0])) == ["G", "G2"]
    assert index_items(again, table.gsis[0]) == expected_index(again, table, table.gsis[0])


def test_a_gsi_read_catches_up_with_the_writes_before_it(ctx: Context, table: TableDef) -> None:
    backlog = ctx.propagation
    assert backlog.applied_through >= backlog.last_added  # nothing pending: catch_up is one comparison
    for i in range(5):
        put(ctx, table, {**ITEM, "sk": {"S": str(i)}})
    assert backlog.last_added > backlog.applied_through
    indexes.catch_up(ctx, budget=2)  # bounded: two records, then the read answers with what the index holds
    assert len(index_items(ctx, table.gsis[0])) == 2
    indexes.catch_up(ctx)
    assert backlog.applied_through == backlog.last_added
    assert index_items(ctx, table.gsis[0]) == expected_index(ctx, table, table.gsis[0])


def test_a_record_taken_back_with_its_write_is_settled_not_waited_for(ctx: Context, table: TableDef) -> None:
    backlog = ctx.propagation
    with pytest.raises(RuntimeError), ctx.kv.write() as txn:
        ctx.changelog.append(
            txn, at=0.0, table_id=table.table_id, shard=0, event=0, by_service=False, key=b"k", old=None, new=None,
            gsi=[(b"entry", None)],
        )  # fmt: skip
        raise RuntimeError("the write fails after its record was logged, as a cancelled transaction's does")
    assert backlog.waiting == 1 and backlog.last_added > backlog.applied_through
    indexes.catch_up(ctx)  # finds no mark for it: the record never was
    assert backlog.waiting == 0 and backlog.applied_through == backlog.last_added
    assert backlog.lag_summary()["applied"] == 0 and backlog.lag_summary()["samples"] == 0
    put(ctx, table, ITEM)
    settle(ctx)
    assert index_items(ctx, table.gsis[0]) == [ITEM]
    assert backlog.lag_summary()["applied"] == 1 and backlog.waiting == 0


def test_after_a_restart_reads_catch_up_with_the_records_left_behind() -> None:
    kv = MemoryKV()
    ctx = make_ctx(kv)
    table = create_indexed(ctx)
    put(ctx, table, ITEM)
    again = make_ctx(kv)  # the first server stopped before propagating
    table = again.catalog.get_active("t")
    indexes.catch_up(again)
    assert index_items(again, table.gsis[0]) == [ITEM]


def test_a_simulated_propagation_delay_is_not_caught_up() -> None:
    ctx = make_ctx(gsi_propagation_delay=10.0)
    table = create_indexed(ctx)
    put(ctx, table, ITEM)
    indexes.catch_up(ctx)
    assert index_items(ctx, table.gsis[0]) == []


def test_propagation_delay_holds_records_until_due() -> None:
    ctx = make_ctx(gsi_propagation_delay=10.0)
    table = create_indexed(ctx)
    put(ctx, table, ITEM)
    assert indexes.maintain(ctx) is True
    assert index_items(ctx, table.gsis[0]) == []
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    clock.advance(10.0)
    settle(ctx)
    assert index_items(ctx, table.gsis[0]) == [ITEM]


def test_changes_for_a_deleted_gsi_are_dropped(ctx: Context, table: TableDef) -> None:
    put(ctx, table, ITEM)
    engine_tables.update(ctx, "t", lambda td: replace(td, gsis=(replace(td.gsis[0], status="DELETING"), td.gsis[1])))
    settle(ctx)
    assert index_items(ctx, table.gsis[0]) == []
    assert len(index_items(ctx, table.gsis[1])) == 1


# ---------------------------------------------------------------------------------------------- backfill


def add_gsi(ctx: Context, name: str, attr: str) -> IndexDef:
    index = IndexDef(
        name=name,
        kind="GSI",
        key_schema=KeySchema(KeyAttr(attr, "S")),
        projection=Projection("KEYS_ONLY"),
        index_id=ctx.catalog.next_table_id(),
        status=CREATING,
        backfilling=True,
        online=True,
    )
    engine_tables.update(ctx, "t", lambda td: replace(td, gsis=(*td.gsis, index)))
    return index


def test_backfill_copies_existing_items_in_chunks_while_writes_go_on() -> None:
    ctx = make_ctx(gsi_backfill_chunk=3)
    table = create_indexed(ctx)
    for i in range(10):
        put(ctx, table, {"pk": {"S": f"p{i}"}, "sk": {"S": "1"}, "w": {"S": f"w{i % 4}"}})
    index = add_gsi(ctx, "by_w", "w")
    assert indexes.maintain(ctx) is True  # one chunk copied, more to go
    table = ctx.catalog.get("t")
    put(ctx, table, {"pk": {"S": "new"}, "sk": {"S": "1"}, "w": {"S": "w9"}})  # maintained during the backfill
    delete(ctx, table, {"pk": {"S": "p0"}, "sk": {"S": "1"}})
    settle(ctx)
    table = ctx.catalog.get("t")
    done = table.index("by_w")
    assert done is not None and done.status == ACTIVE and not done.backfilling
    assert index_items(ctx, index) == expected_index(ctx, table, done)
    assert len(index_items(ctx, index)) == 10
    assert ctx.catalog.index_stats("t", index.index_id)[0] == 10


def test_backfill_resumes_from_its_stored_cursor() -> None:
    kv = MemoryKV()
    ctx = make_ctx(kv, gsi_backfill_chunk=4)
    table = create_indexed(ctx)
    for i in range(10):
        put(ctx, table, {"pk": {"S": f"p{i}"}, "sk": {"S": "1"}, "w": {"S": "w"}})
    index = add_gsi(ctx, "by_w", "w")
    indexes.maintain(ctx)
    copied = len(index_items(ctx, index))
    assert 0 < copied < 10
    again = make_ctx(kv, gsi_backfill_chunk=4)  # "crash": a new server on the same storage
    settle(again)
    table = again.catalog.get("t")
    assert len(index_items(again, index)) == 10
    assert index_items(again, index) == expected_index(again, table, index)


def test_backfill_waits_for_the_interval() -> None:
    ctx = make_ctx(gsi_backfill_chunk=1, gsi_backfill_interval=5.0)
    table = create_indexed(ctx)
    for i in range(2):
        put(ctx, table, {"pk": {"S": f"p{i}"}, "sk": {"S": "1"}, "w": {"S": "w"}})
    index = add_gsi(ctx, "by_w", "w")
    indexes.maintain(ctx)
    indexes.maintain(ctx)
    assert len(index_items(ctx, index)) == 1
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    clock.advance(5.0)
    indexes.maintain(ctx)
    assert len(index_items(ctx, index)) == 2


def test_copy_index_definition_gives_a_new_id_no_items_the_capacity_asked_last_and_the_state_asked() -> None:
    ctx = make_ctx()
    source = IndexDef(
        "by_g",
        "GSI",
        KeySchema(KeyAttr("g", "S")),
        Projection("ALL"),
        index_id=7,
        throughput=ProvisionedThroughput(5, 5),
        status=UPDATING,
        pending_throughput=ProvisionedThroughput(5, 9),
        item_count=3,
        size_bytes=120,
    )
    first = indexes.copy_index_definition(ctx, source, status=CREATING, backfilling=True, online=True)
    second = indexes.copy_index_definition(ctx, source, status=ACTIVE, backfilling=False, online=False)
    assert first.index_id not in (source.index_id, second.index_id)
    assert (first.status, first.backfilling, first.online) == (CREATING, True, True)
    assert (second.status, second.backfilling, second.online) == (ACTIVE, False, False)
    for copy in (first, second):
        assert (copy.throughput, copy.pending_throughput) == (ProvisionedThroughput(5, 9), None)
        assert (copy.item_count, copy.size_bytes) == (0, 0)
        assert (copy.name, copy.key_schema, copy.projection) == (source.name, source.key_schema, source.projection)
