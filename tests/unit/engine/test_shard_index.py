"""engine/shard_index.py, and the change log reading stream shards through it: one key a streamed write, shards
read from the log alone after a restart, a large log indexed over several reads, trimming, and the index keys
of an earlier version deleted with their records."""

from __future__ import annotations

import dataclasses

import pytest

from dynastore.engine import changelog, retention, streams, tables, writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.engine.shard_index import ShardIndex
from dynastore.limits import STREAM_RETENTION_SECONDS
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import StreamSpec, TableDef
from dynastore.model.values import Item
from dynastore.storage import keyspace
from dynastore.storage.memory_kv import MemoryKV
from tests.unit.engine.tables import create, item, make_ctx, restart

LABEL = "2023-11-14T22:13:20.000"  # the ManualClock's start, as a stream label
STREAM = StreamSpec(True, "NEW_AND_OLD_IMAGES", LABEL)


def _put(ctx: Context, table: TableDef, it: Item) -> None:
    writes.execute(ctx, table, storage_key(table, it), writes.PutPlan(it, size=item_size(it)))


def _keys_under(ctx: Context, tag: bytes) -> list[bytes]:
    with ctx.kv.read() as txn:
        return [key for key, _ in txn.iter_range(tag, keyspace.prefix_end(tag))]


def _arn(ctx: Context, name: str) -> str:
    return f"arn:aws:dynamodb:{ctx.config.region}:{ctx.config.account_id}:table/{name}/stream/{LABEL}"


def _read_pages(ctx: Context, arn: str, want: int | None = None, limit: int = 1000) -> tuple[list[str], int, bool]:
    """The pages of the stream's only shard from its start until ``want`` items' changes were read (None: until the
    shard ends): the items' keys, how many pages it took, and whether the shard ended (no next iterator)."""
    (shard,) = streams.describe_stream(ctx, arn, 100, None).shards
    iterator: str | None = streams.get_shard_iterator(ctx, arn, shard.shard_id, "TRIM_HORIZON", None)
    keys: list[str] = []
    pages = 0
    while iterator is not None and pages < 100 and (want is None or len(keys) < want):
        page = streams.get_records(ctx, iterator, limit)
        keys += [c.keys["pk"]["S"] for c in page.changes]
        iterator = page.next_iterator
        pages += 1
    return keys, pages, iterator is None


def test_the_index_lists_each_shard_s_records_in_order_and_forgets_trimmed_ones() -> None:
    index = ShardIndex()
    for seq, (table_id, shard) in enumerate([(1, 1), (1, 2), (2, 1), (1, 1), (1, 1), (1, 2)]):
        index.add(table_id, shard, seq)
    assert index.after(1, 1, -1, 10) == [0, 3, 4]
    assert index.after(1, 1, 0, 1) == [3] and index.after(1, 1, 4, 10) == []
    assert index.after(3, 1, -1, 10) == [] and len(index) == 6
    index.forget_through(3)
    assert index.after(1, 1, -1, 10) == [4] and index.after(2, 1, -1, 10) == [] and len(index) == 2


def test_a_streamed_write_stores_its_record_alone() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, "tbl", 5, 5, stream=STREAM)
    for name in ("a", "b", "c"):
        _put(ctx, table, item(name))
    assert len(_keys_under(ctx, keyspace.CHANGE_TAG)) == 3
    assert _keys_under(ctx, keyspace.SHARD_RECORD_TAG) == []
    assert _read_pages(ctx, _arn(ctx, table.name), 3) == (["a", "b", "c"], 1, False)


def test_a_restarted_dynastore_finds_each_shard_s_records_in_the_log() -> None:
    kv = MemoryKV()
    ctx, _ = make_ctx(kv)
    table = create(ctx, "tbl", 5, 5, stream=STREAM)
    other = create(ctx, "other", 5, 5, stream=STREAM)
    for i in range(10):
        _put(ctx, table, item(f"t{i}"))
        _put(ctx, other, item(f"o{i}"))
    again = restart(ctx)
    assert _read_pages(again, _arn(again, table.name), 10) == ([f"t{i}" for i in range(10)], 1, False)
    assert _read_pages(again, _arn(again, "other"), 10) == ([f"o{i}" for i in range(10)], 1, False)


def test_a_large_log_is_indexed_over_several_reads_and_no_record_is_missed(monkeypatch: pytest.MonkeyPatch) -> None:
    kv = MemoryKV()
    ctx, _ = make_ctx(kv)
    table = create(ctx, "tbl", 5, 5, stream=STREAM)
    other = create(ctx, "other", 5, 5, stream=STREAM)
    for i in range(30):
        _put(ctx, other, item(f"o{i}"))  # records of another table first: the early reads find none of ours
        _put(ctx, table, item(f"t{i:02}"))
    monkeypatch.setattr(changelog, "INDEX_RECORDS_PER_READ", 7)
    again = restart(ctx)
    keys, pages, ended = _read_pages(again, _arn(again, table.name), 30)
    assert keys == [f"t{i:02}" for i in range(30)] and not ended
    assert pages >= 60 // 7  # each read indexed at most 7 records of the log
    # Closed by disabling the stream, the shard ends once read to its last record, however many reads that takes.
    tables.update(again, table.name, lambda td: dataclasses.replace(td, stream=StreamSpec(False, None, LABEL)))
    later = restart(again)
    keys, pages, ended = _read_pages(later, _arn(later, table.name), limit=4)
    assert keys == [f"t{i:02}" for i in range(30)] and ended and pages >= 60 // 7


def test_trimming_drops_the_index_entries_and_an_earlier_version_s_index_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx, clock = make_ctx()
    table = create(ctx, "tbl", 5, 5, stream=STREAM)
    for name in ("a", "b", "c"):
        _put(ctx, table, item(name))
    assert _read_pages(ctx, _arn(ctx, table.name), 3) == (["a", "b", "c"], 1, False)
    # What an earlier version stored: the record without the flag that says no index key was written, and the key.
    (first_key, *_) = _keys_under(ctx, keyspace.CHANGE_TAG)
    seq = changelog.seq_of(first_key)
    with ctx.kv.write() as txn:
        raw = txn.get(first_key)
        assert raw is not None
        txn.put(first_key, bytes([raw[0] & ~0x20]) + raw[1:])
        txn.put(keyspace.shard_record_key(table.table_id, 1, seq), b"")
    clock.advance(STREAM_RETENTION_SECONDS)
    retention.trim(ctx)
    assert _keys_under(ctx, keyspace.CHANGE_TAG) == [] and _keys_under(ctx, keyspace.SHARD_RECORD_TAG) == []
    assert ctx.changelog.indexed_records == 0
