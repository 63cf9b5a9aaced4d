"""engine/changelog.py and engine/stream_shards.py: changes logged with the item, shards following partitions,
GSI changes applied once, retention, sequence numbers that never go back."""

from __future__ import annotations

import dataclasses

from dynastore.engine import indexes, retention, streams, tables, writes
from dynastore.engine.capacity.partitions import PartitionMap
from dynastore.engine.changelog import ChangeRecord
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.expressions import ExpressionContext
from dynastore.limits import STREAM_RETENTION_SECONDS, STREAM_SHARD_ROLLOVER_SECONDS
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import KeyAttr, StreamSpec, TableDef
from dynastore.model.values import Item
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item, encode_item
from dynastore.storage.memory_kv import MemoryKV
from tests.unit.engine.tables import create, gsi, item, make_ctx, restart

STREAM = StreamSpec(True, "NEW_AND_OLD_IMAGES", "2026-11-23T00:00:00.000")


def _put(ctx: Context, table: TableDef, it: Item) -> None:
    writes.execute(ctx, table, storage_key(table, it), writes.PutPlan(it, size=item_size(it)))


def _logged(ctx: Context, table: TableDef) -> list[ChangeRecord]:
    out: list[ChangeRecord] = []
    shards = ctx.shards.of(table.table_id)
    for shard in sorted(shards.shards, key=lambda s: s.number):  # parents before their children
        out.extend(ctx.changelog.read_shard(table.table_id, shard.number, -1, 10_000).records)
    return out


def _records(ctx: Context, table: TableDef) -> list[ChangeRecord]:
    """The records a stream reader shows: an overwrite that left the item as it was is dropped when read."""
    return [r for r in _logged(ctx, table) if streams.decode_change(table.key_schema, "KEYS_ONLY", r) is not None]


def test_each_change_is_logged_with_its_images_and_an_unchanged_write_is_not() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, stream=STREAM)
    _put(ctx, table, item("a", x="1"))
    _put(ctx, table, item("a", x="1"))  # the same item: no change, no record
    _put(ctx, table, item("a", x="2"))
    update = ExpressionContext(None, {":v": {"S": "2"}}).update("SET x = :v")  # sets what is there already
    writes.execute(ctx, table, storage_key(table, item("a")), writes.UpdatePlan(item("a"), update))
    writes.execute(ctx, table, storage_key(table, item("a")), writes.DeletePlan())
    writes.execute(ctx, table, storage_key(table, item("b")), writes.DeletePlan())  # nothing there: no record
    records = _records(ctx, table)
    assert [r.event_name for r in records] == ["INSERT", "MODIFY", "REMOVE"]
    assert [r.seq for r in records] == sorted(r.seq for r in records)
    insert, modify, remove = records
    assert insert.old is None and insert.new is not None and decode_item(insert.new) == item("a", x="1")
    assert modify.old is not None and modify.new is not None
    assert decode_item(modify.old) == item("a", x="1") and decode_item(modify.new) == item("a", x="2")
    assert remove.new is None and remove.old is not None and not remove.by_service
    assert {r.key for r in records} == {storage_key(table, item("a"))}


def test_an_overwrite_with_the_same_values_written_otherwise_is_no_change() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, stream=STREAM)
    first: Item = {"pk": {"S": "a"}, "n": {"N": "1"}, "s": {"SS": ["x", "y"]}, "b": {"B": "AQ=="}}
    _put(ctx, table, first)
    # Other bytes, the same values: attributes in another order, a set reordered, a number and a binary spelled
    # otherwise.
    reordered: Item = {"b": {"B": "AQ"}, "s": {"SS": ["y", "x"]}, "n": {"N": "1.0"}, "pk": {"S": "a"}}
    _put(ctx, table, reordered)
    _put(ctx, table, first | {"n": {"N": "2"}})
    assert [r.event_name for r in _records(ctx, table)] == ["INSERT", "MODIFY"]
    # The write did not decode the stored item to tell: its record is logged for the reader to compare.
    assert [(r.event_name, r.maybe_unchanged) for r in _logged(ctx, table)] == [
        ("INSERT", False), ("MODIFY", True), ("MODIFY", True)
    ]  # fmt: skip


def test_an_overwrite_is_a_change_when_a_string_differs_and_not_when_only_its_bytes_do() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, stream=STREAM)
    first: Item = {"pk": {"S": "a"}, "t": {"S": 'caf\u00e9 "q"'}, "m": {"M": {"u": {"S": "v"}}}, "n": {"N": "1"}}
    _put(ctx, table, first)
    # The same strings in other bytes (attributes reordered, a number spelled otherwise): no change.
    _put(ctx, table, {"n": {"N": "1.0"}, "m": {"M": {"u": {"S": "v"}}}, "t": first["t"], "pk": {"S": "a"}})
    # A string added beside the same string inside a map: a change.
    _put(ctx, table, {"pk": {"S": "a"}, "t": first["t"], "m": {"M": {"u": {"S": "v"}}}, "u": {"S": "v"}})
    _put(ctx, table, {"pk": {"S": "a"}, "t": {"S": "other"}, "m": {"M": {"u": {"S": "v"}}}, "u": {"S": "v"}})
    records = _records(ctx, table)
    assert [r.event_name for r in records] == ["INSERT", "MODIFY", "MODIFY"]
    assert records[-1].old is not None and decode_item(records[-1].old)["t"] == first["t"]


def test_an_overwrite_logs_the_stored_bytes_without_decoding_them_for_the_write() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, stream=STREAM)
    key = storage_key(table, item("a"))
    _put(ctx, table, item("a", x="1"))
    with ctx.kv.read() as txn:
        stored = txn.get(key)
    new = item("a", x="2")
    result = writes.execute(ctx, table, key, writes.PutPlan(new, size=item_size(new)))
    # A plain overwrite does not need the old item: the stream's old image is the stored value as it was.
    assert result.old is None and result.existed
    modify = _records(ctx, table)[-1]
    assert modify.event_name == "MODIFY" and modify.old == stored
    assert modify.new == encode_item(new, item_size(new))
    third = item("a", x="3")
    returned = writes.execute(ctx, table, key, writes.PutPlan(third, size=item_size(third), return_old=True))
    assert returned.old == new  # asked for: decoded as before


def test_a_table_without_stream_or_gsi_logs_nothing() -> None:
    ctx, _ = make_ctx()
    table = create(ctx)
    _put(ctx, table, item("a"))
    with ctx.kv.read() as txn:
        assert list(txn.iter_range(keyspace.change_prefix(), keyspace.prefix_end(keyspace.change_prefix()))) == []
    assert ctx.changelog.next_seq == 0


def test_ttl_deletions_are_marked_as_the_service_s() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, stream=STREAM)
    _put(ctx, table, item("a"))
    writes.execute(ctx.as_service(), table, storage_key(table, item("a")), writes.DeletePlan())
    assert [(r.event_name, r.by_service) for r in _records(ctx, table)] == [("INSERT", False), ("REMOVE", True)]


def test_a_gsi_only_change_keeps_no_images_and_is_dropped_once_applied() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, gsis=(gsi(ctx, "by_g", KeyAttr("g", "S")),))
    _put(ctx, table, item("a", g="x"))
    propagation = ctx.propagation
    assert propagation.has_pending() and propagation.last_added == 0
    with ctx.kv.read() as txn:
        raw = txn.get(keyspace.change_key(0))
    assert raw is not None
    while indexes.propagate(ctx):
        pass
    assert not propagation.has_pending() and propagation.applied_through == 0
    with ctx.kv.read() as txn:
        assert txn.get(keyspace.change_key(0)) is None  # no stream keeps it


def test_shards_follow_partitions_split_and_roll_over() -> None:
    ctx, clock = make_ctx()
    table = create(ctx, read=5, write=5, stream=STREAM)  # one partition
    names = [f"k{i}" for i in range(40)]
    for name in names[:20]:
        _put(ctx, table, item(name))
    first = ctx.shards.of(table.table_id)
    assert [(s.number, s.parent, s.lo, s.hi) for s in first.shards] == [(1, 0, 0, 1 << 32)]
    # The partition splits in two (as a size split or a throughput increase makes it): the next change closes
    # the shard, and two children cover its halves.
    ctx.capacity.state(table).base.natural = PartitionMap.even(2)
    for name in names[20:]:
        _put(ctx, table, item(name))
    shards = ctx.shards.of(table.table_id).shards
    parent = shards[0]
    children = [s for s in shards if s.parent == parent.number]
    assert parent.last_seq == 19 and [(c.lo, c.hi) for c in children] == [(0, 1 << 31), (1 << 31, 1 << 32)]
    records = _records(ctx, table)
    assert sorted(decode_item(r.new)["pk"]["S"] for r in records if r.new) == sorted(names)
    assert len({r.seq for r in records}) == 40
    clock.advance(STREAM_SHARD_ROLLOVER_SECONDS)
    _put(ctx, table, item(names[0], x="later"))
    rolled = [s for s in ctx.shards.of(table.table_id).shards if s.parent in {c.number for c in children}]
    assert len(rolled) == 1 and rolled[0].is_open


def test_a_shard_closes_when_its_partition_splits_in_place() -> None:
    """A write checks its shard against the partition map by identity of the map's bounds, so a split inside the
    same map (as a size split makes it) must still close the shard that the writes before it matched."""
    ctx, _ = make_ctx()
    table = create(ctx, read=5, write=5, stream=STREAM)  # one partition
    for name in ("a", "b"):
        _put(ctx, table, item(name))
    ctx.capacity.state(table).base.natural.split(0)
    _put(ctx, table, item("c"))
    shards = ctx.shards.of(table.table_id).shards
    assert [(s.number, s.parent, s.lo, s.hi, s.last_seq) for s in shards] == [
        (1, 0, 0, 1 << 32, 1),
        (2, 1, 0, 1 << 31, None),
        (3, 1, 1 << 31, 1 << 32, None),
    ]


def test_disabling_closes_the_shards_and_a_new_stream_opens_new_ones() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, stream=STREAM)
    _put(ctx, table, item("a"))
    tables.update(ctx, table.name, lambda td: dataclasses.replace(td, stream=StreamSpec(False, None, STREAM.label)))
    shards = ctx.shards.of(table.table_id)
    assert shards.open == [] and {s.last_seq for s in shards.shards} == {0}
    relabelled = StreamSpec(True, "KEYS_ONLY", "2026-11-24T00:00:00.000")
    table = tables.update(ctx, table.name, lambda td: dataclasses.replace(td, stream=relabelled))
    _put(ctx, table, item("b"))
    labels = [s.label for s in ctx.shards.of(table.table_id).shards]
    assert list(dict.fromkeys(labels)) == [STREAM.label, relabelled.label]
    assert all(s.label == relabelled.label for s in ctx.shards.of(table.table_id).open)


def test_retention_trims_old_records_and_sequence_numbers_never_go_back() -> None:
    kv = MemoryKV()
    ctx, clock = make_ctx(kv)
    table = create(ctx, stream=STREAM)
    for name in ("a", "b", "c"):
        _put(ctx, table, item(name))
    clock.advance(STREAM_RETENTION_SECONDS - 1)
    retention.trim(ctx)
    assert len(_records(ctx, table)) == 3  # not old enough yet
    clock.advance(1)
    retention.trim(ctx)
    assert _records(ctx, table) == []
    again = restart(ctx)  # the log is empty: the next number comes from the saved high-water mark
    assert again.changelog.next_seq == 3


def test_an_earlier_version_s_backlog_record_is_still_applied() -> None:
    ctx, _ = make_ctx()
    by_g = gsi(ctx, "by_g", KeyAttr("g", "S"), projection="ALL")
    table = create(ctx, gsis=(by_g,))
    entry = b"X" + by_g.index_id.to_bytes(4, "big") + b"\x00\x00\x00\x01entry"
    value = encode_item(item("a", g="x"), item_size(item("a", g="x")))
    legacy = bytes(8) + len(entry).to_bytes(2, "big") + entry + len(value).to_bytes(4, "big") + value
    with ctx.kv.write() as txn:
        txn.put(keyspace.gsi_pending_key(5), legacy)
    while indexes.propagate(ctx):
        pass
    with ctx.kv.read() as txn:
        assert txn.get(entry) == value and txn.get(keyspace.gsi_pending_key(5)) is None
    assert table.gsis[0].name == "by_g"
