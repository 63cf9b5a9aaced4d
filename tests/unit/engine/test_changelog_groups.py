"""The changes of one write transaction of several items (BatchWriteItem, TransactWriteItems) are stored as one
change log record, a group (engine/changelog.py ``ChangeLog.group``): each change keeps its own sequence number,
and every reader (``read``, ``read_shard``, GSI propagation, trimming, the next sequence number after a restart)
sees the changes one by one, as if each were a record of its own."""

from __future__ import annotations

import pytest

from dynastore.engine import changelog, indexes, retention, streams, writes
from dynastore.engine.changelog import INSERT, MODIFY, ChangeRecord
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.limits import STREAM_RETENTION_SECONDS
from dynastore.model.table_schema import KeyAttr, StreamSpec, TableDef
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item
from tests.unit.engine import tables as builder
from tests.unit.engine.test_changelog_consumers import Archive
from tests.unit.engine.test_streams import only_shard, streamed


def _stored(ctx: Context) -> list[tuple[int, bytes]]:
    """The change log as stored: (sequence number of the key, value)."""
    prefix = keyspace.change_prefix()
    with ctx.kv.read() as txn:
        return [(changelog.seq_of(k), v) for k, v in txn.iter_range(prefix, keyspace.prefix_end(prefix))]


def _batch(ctx: Context, table: TableDef, names: list[str], **extra: str) -> None:
    builder.put(ctx, table, [builder.item(name, None, **extra) for name in names])


def _followed(ctx: Context, name: str = "t", **kwargs: object) -> TableDef:
    table = builder.create(ctx, name, **kwargs)  # type: ignore[arg-type]
    ctx.changelog.register(Archive(name))
    return table


def test_a_batch_is_one_stored_record_and_read_change_by_change() -> None:
    ctx, _ = builder.make_ctx()
    table = _followed(ctx)
    builder.put(ctx, table, [builder.item("solo")])  # one item: a plain record
    _batch(ctx, table, ["a", "b", "c", "d"])
    stored = _stored(ctx)
    assert [seq for seq, _ in stored] == [0, 1]
    assert not changelog.is_group(stored[0][1]) and changelog.is_group(stored[1][1])
    assert changelog.last_seq_of(*stored[1]) == 4
    records = ctx.changelog.read(-1, 100)
    assert [r.seq for r in records] == [0, 1, 2, 3, 4]
    assert [decode_item(r.new)["pk"]["S"] for r in records if r.new is not None] == ["solo", "a", "b", "c", "d"]
    assert {r.event for r in records} == {INSERT}
    assert [r.seq for r in ctx.changelog.read(2, 100)] == [3, 4]  # from inside the group
    assert [r.seq for r in ctx.changelog.read(0, 2)] == [1, 2]  # a limit inside the group
    assert ctx.changelog.next_seq == 5


def test_the_next_sequence_number_after_a_restart_follows_the_last_change_of_a_group() -> None:
    ctx, _ = builder.make_ctx()
    table = _followed(ctx)
    _batch(ctx, table, ["a", "b", "c"])
    again = builder.restart(ctx)
    assert again.changelog.next_seq == 3
    again.changelog.register(Archive("t"))
    builder.put(again, table, [builder.item("d")])
    assert [r.seq for r in again.changelog.read(-1, 100)] == [0, 1, 2, 3]


def test_a_group_left_by_an_error_is_dropped_with_its_transaction() -> None:
    ctx, _ = builder.make_ctx()
    table = _followed(ctx)
    with pytest.raises(RuntimeError), ctx.kv.write() as txn, ctx.changelog.group(txn):
        for name in ("a", "b"):
            it = builder.item(name)
            writes.apply_in(ctx, txn, table, storage_key(table, it), writes.PutPlan(it))
        raise RuntimeError("taken back")
    assert _stored(ctx) == []
    _batch(ctx, table, ["c", "d"])
    assert [decode_item(r.new)["pk"]["S"] for r in ctx.changelog.read(-1, 100) if r.new is not None] == ["c", "d"]


def test_a_group_inside_a_group_adds_to_the_outer_one() -> None:
    ctx, _ = builder.make_ctx()
    table = _followed(ctx)
    with ctx.kv.write() as txn, ctx.changelog.group(txn):
        for name in ("a", "b"):
            with ctx.changelog.group(txn):
                it = builder.item(name)
                writes.apply_in(ctx, txn, table, storage_key(table, it), writes.PutPlan(it))
    (stored,) = _stored(ctx)
    assert changelog.last_seq_of(*stored) == stored[0] + 1


def test_a_stream_reads_a_group_s_changes_in_pages_and_after_a_restart() -> None:
    ctx, _ = builder.make_ctx()
    table, arn = streamed(ctx)
    _batch(ctx, table, ["a", "b", "c", "d", "e"])
    _batch(ctx, table, ["a", "b"], v="2")
    shard = only_shard(ctx, arn)
    for reader in (ctx, builder.restart(ctx)):  # the shard index rebuilt from the stored groups
        iterator: str | None = streams.get_shard_iterator(reader, arn, shard, "TRIM_HORIZON", None)
        seen: list[tuple[str, str]] = []
        while iterator is not None:
            page = streams.get_records(reader, iterator, 3)
            if not page.changes:
                break
            seen += [(c.event_name, str(c.keys["pk"]["S"])) for c in page.changes]
            iterator = page.next_iterator
        assert seen == [("INSERT", n) for n in "abcde"] + [("MODIFY", "a"), ("MODIFY", "b")]


def test_stream_reads_pick_a_group_s_changes_shard_by_shard() -> None:
    ctx, _ = builder.make_ctx()
    table = builder.create(ctx, "s", stream=StreamSpec(True, "NEW_AND_OLD_IMAGES", "2023-11-14T22:13:20.000"))
    names = [f"k{i}" for i in range(40)]
    _batch(ctx, table, names[:25])
    _batch(ctx, table, names[25:])
    by_shard: dict[int, list[ChangeRecord]] = {}
    for record in ctx.changelog.read(-1, 100):
        by_shard.setdefault(record.shard, []).append(record)
    for shard, records in by_shard.items():
        read = ctx.changelog.read_shard(table.table_id, shard, -1, 100)
        assert [r.seq for r in read.records] == [r.seq for r in records]
        assert [r.new for r in read.records] == [r.new for r in records]
        later = ctx.changelog.read_shard(table.table_id, shard, records[0].seq, 100)
        assert [r.seq for r in later.records] == [r.seq for r in records[1:]]


def test_gsi_propagation_applies_every_change_of_a_group_and_then_removes_it() -> None:
    ctx, _ = builder.make_ctx()
    table = builder.create(ctx, "g", gsis=(builder.gsi(ctx, "by_g", KeyAttr("g", "S")),))
    _batch(ctx, table, ["a", "b", "c"], g="x")
    ((seq, raw),) = _stored(ctx)
    assert changelog.is_group(raw)
    with ctx.kv.read() as txn:
        assert txn.get(keyspace.gsi_pending_key(seq)) == b""  # one mark, under the group's key
    assert not indexes.propagate(ctx)
    assert _stored(ctx) == []  # no other consumer follows the table
    assert ctx.propagation.applied_through == seq
    (index,) = table.gsis
    prefix = keyspace.index_prefix(index.index_id)
    with ctx.kv.read() as txn:
        assert sum(1 for _ in txn.iter_range(prefix, keyspace.prefix_end(prefix))) == 3  # every change applied


def test_a_group_is_trimmed_when_none_of_its_changes_is_held() -> None:
    ctx, clock = builder.make_ctx()
    table = _followed(ctx)
    archive = ctx.changelog.consumers[-1]
    assert isinstance(archive, Archive)
    _batch(ctx, table, ["a", "b", "c"])
    clock.advance(STREAM_RETENTION_SECONDS + 60)
    archive.advance(ctx, 1)  # the group's last change is still held
    retention.trim(ctx)
    assert len(_stored(ctx)) == 1 and ctx.changelog.trimmed_through == -1
    archive.advance(ctx, 2)
    retention.trim(ctx)
    assert _stored(ctx) == [] and ctx.changelog.trimmed_through == 2


def test_group_records_encode_and_decode() -> None:
    first = changelog.encode_record(1.0, 7, 3, INSERT, False, b"k1", None, b"n1", [])
    second = changelog.encode_record(2.0, 7, 4, MODIFY, True, b"k2", b"o2", b"n2", [(b"X", None)], kept=True)
    raw = changelog.encode_group([first, second])
    assert changelog.is_group(raw) and not changelog.is_group(first)
    assert changelog.group_members(raw) == [first, second]
    assert changelog.last_seq_of(10, raw) == 11 and changelog.last_seq_of(10, first) == 10
    one, two = changelog.decode_records(10, raw)
    assert (one.seq, one.shard, one.key, one.new, one.event) == (10, 3, b"k1", b"n1", INSERT)
    assert (two.seq, two.shard, two.old, two.gsi) == (11, 4, b"o2", [(b"X", None)])
    assert (two.kept, two.by_service, two.event) == (True, True, MODIFY)
    assert [r.seq for r in changelog.decode_records(5, first)] == [5]


_CHANGES: list[dict[str, object]] = [
    {"at": 1.0, "table_id": 7, "shard": 3, "event": INSERT, "by_service": False, "key": b"k1", "old": None,
     "new": b"n1", "gsi": []},
    {"at": 2.0, "table_id": 7, "shard": 4, "event": MODIFY, "by_service": True, "key": b"k2", "old": b"o2",
     "new": b"n2", "gsi": [(b"X1", None), (b"X2", b"entry")], "kept": True, "maybe_unchanged": True},
    {"at": 3.0, "table_id": 8, "shard": 0, "event": changelog.REMOVE, "by_service": False, "key": b"k3",
     "old": b"o3", "new": None, "gsi": [(b"X3", b"")]},
]  # fmt: skip


@pytest.mark.parametrize("count", [1, 2, 3])
def test_a_group_is_stored_exactly_as_its_changes_encoded_one_by_one_and_grouped(count: int) -> None:
    """The open group gathers its changes' pieces and joins them once; what it stores must be what encoding each
    change and then the group gives (one change alone: the change's own record)."""
    ctx, _ = builder.make_ctx()
    changes = _CHANGES[:count]
    with ctx.kv.write() as txn, ctx.changelog.group(txn):
        for change in changes:
            ctx.changelog.append(txn, **change)  # type: ignore[arg-type]
    records = [changelog.encode_record(**change) for change in changes]  # type: ignore[arg-type]
    expected = records[0] if count == 1 else changelog.encode_group(records)
    assert _stored(ctx) == [(0, expected)]
