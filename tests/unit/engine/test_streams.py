"""engine/streams.py on a ManualClock: identifiers, listing and describing streams, iterators, reading records,
expiry, trimming, ended streams, and what a stream reader sees of each change."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dynastore.engine import changelog, retention, streams, tables
from dynastore.engine.context import Context
from dynastore.errors import (
    ExpiredIteratorException,
    ResourceNotFoundException,
    TrimmedDataAccessException,
    ValidationException,
)
from dynastore.limits import STREAM_RETENTION_SECONDS, STREAM_SHARD_ROLLOVER_SECONDS
from dynastore.model.table_schema import KeySchema, StreamSpec, TableDef
from dynastore.storage.itemcodec import encode_item
from dynastore.util.clock import ManualClock
from tests.unit.engine import tables as builder

LABEL = "2023-11-14T22:13:20.000"  # the ManualClock's start (T0), as a stream label


def streamed(ctx: Context, name: str = "tbl", view_type: str = "NEW_AND_OLD_IMAGES") -> tuple[TableDef, str]:
    """A provisioned table (one partition, one shard) with a stream: (table, stream ARN)."""
    table = builder.create(ctx, name, 5, 5, stream=StreamSpec(True, view_type, LABEL))
    ctx.capacity.state(table)  # its partitions, as admitting a write would load them
    return table, f"arn:aws:dynamodb:{ctx.config.region}:{ctx.config.account_id}:table/{name}/stream/{LABEL}"


def only_shard(ctx: Context, arn: str) -> str:
    (shard,) = streams.describe_stream(ctx, arn, 100, None).shards
    return shard.shard_id


def read_all(ctx: Context, arn: str, shard: str) -> list[streams.StreamChange]:
    iterator = streams.get_shard_iterator(ctx, arn, shard, "TRIM_HORIZON", None)
    return streams.get_records(ctx, iterator, 1000).changes


def test_identifiers_compare_in_order() -> None:
    numbers = [streams.sequence_number(seq) for seq in (0, 9, 10, 12345)]
    assert all(len(n) == 21 and n.isdigit() for n in numbers)
    assert numbers == sorted(numbers) and [int(n) for n in numbers] == sorted(int(n) for n in numbers)


def test_describe_lists_the_shards_before_the_first_change() -> None:
    ctx, _ = builder.make_ctx()
    table, arn = streamed(ctx)
    view = streams.describe_stream(ctx, arn, 100, None)
    assert (view.status, view.view_type, view.table_name, view.label) == ("ENABLED", "NEW_AND_OLD_IMAGES", "tbl", LABEL)
    assert view.key_schema == table.key_schema
    assert view.created_at == builder.T0
    (shard,) = view.shards
    assert shard.shard_id == f"shardId-{int(builder.T0 * 1000):020d}-00000001"
    assert (shard.parent_shard_id, shard.ending) == (None, None)


def test_records_in_order_with_their_images() -> None:
    ctx, _ = builder.make_ctx()
    table, arn = streamed(ctx)
    builder.put(ctx, table, [builder.item("a", v="1")])
    builder.put(ctx, table, [builder.item("a", v="2")])
    insert, modify = read_all(ctx, arn, only_shard(ctx, arn))
    assert (insert.event_name, modify.event_name) == ("INSERT", "MODIFY")
    assert insert.seq < modify.seq
    assert modify.keys == {"pk": {"S": "a"}}
    assert modify.old_image == builder.item("a", v="1") and modify.new_image == builder.item("a", v="2")
    assert insert.old_image is None


@pytest.mark.parametrize(
    ("view_type", "new", "old"),
    [("KEYS_ONLY", False, False), ("NEW_IMAGE", True, False), ("OLD_IMAGE", False, True),
     ("NEW_AND_OLD_IMAGES", True, True)],
)  # fmt: skip
def test_decode_change_shows_what_the_view_type_shows(view_type: str, new: bool, old: bool) -> None:
    schema = KeySchema(builder.PK)
    before, after = builder.item("a", v="1"), builder.item("a", v="22")
    record = changelog.ChangeRecord(
        7, 100.5, 1, 1, changelog.MODIFY, False, b"k", encode_item(before, 5), encode_item(after, 6), []
    )
    change = streams.decode_change(schema, view_type, record)
    assert change is not None
    assert (change.new_image is not None, change.old_image is not None) == (new, old)
    assert change.keys == {"pk": {"S": "a"}}
    assert change.size_bytes == 3 + (6 if new else 0) + (5 if old else 0)
    removed = changelog.ChangeRecord(8, 1.0, 1, 1, changelog.REMOVE, True, b"k", encode_item(before, 5), None, [])
    gone = streams.decode_change(schema, view_type, removed)
    assert gone is not None and gone.keys == {"pk": {"S": "a"}} and gone.new_image is None and gone.by_service


@pytest.mark.parametrize("view_type", ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"])
def test_an_overwrite_left_for_the_reader_to_compare_is_dropped_when_the_item_is_the_same(view_type: str) -> None:
    schema = KeySchema(builder.PK)
    before = {"pk": {"S": "a"}, "n": {"N": "1"}, "s": {"SS": ["x", "y"]}}
    same = {"s": {"SS": ["y", "x"]}, "n": {"N": "1.0"}, "pk": {"S": "a"}}  # other bytes, the same item
    other = {"pk": {"S": "a"}, "n": {"N": "2"}, "s": {"SS": ["x", "y"]}}

    def record(new: dict[str, Any], maybe_unchanged: bool) -> changelog.ChangeRecord:
        old_raw, new_raw = encode_item(before, 8), encode_item(new, 8)
        return changelog.ChangeRecord(
            9, 1.0, 1, 1, changelog.MODIFY, False, b"k", old_raw, new_raw, [], maybe_unchanged=maybe_unchanged
        )

    assert streams.decode_change(schema, view_type, record(same, True)) is None
    changed = streams.decode_change(schema, view_type, record(other, True))
    assert changed is not None and changed.event_name == "MODIFY" and changed.keys == {"pk": {"S": "a"}}
    # A record the write already compared is shown as it is.
    assert streams.decode_change(schema, view_type, record(same, False)) is not None


def test_iterator_positions() -> None:
    ctx, _ = builder.make_ctx()
    table, arn = streamed(ctx)
    shard = only_shard(ctx, arn)
    builder.put(ctx, table, [builder.item(k) for k in "abc"])
    changes = read_all(ctx, arn, shard)
    second = streams.sequence_number(changes[1].seq)

    def keys(kind: str, seq: str | None = None) -> list[str]:
        iterator = streams.get_shard_iterator(ctx, arn, shard, kind, seq)
        return [c.keys["pk"]["S"] for c in streams.get_records(ctx, iterator, 1000).changes]

    assert keys("AT_SEQUENCE_NUMBER", second) == ["b", "c"]
    assert keys("AFTER_SEQUENCE_NUMBER", second) == ["c"]
    assert keys("LATEST") == []
    page = streams.get_records(ctx, streams.get_shard_iterator(ctx, arn, shard, "TRIM_HORIZON", None), 2)
    assert len(page.changes) == 2 and page.next_iterator is not None
    assert [c.keys["pk"]["S"] for c in streams.get_records(ctx, page.next_iterator, 2).changes] == ["c"]


def test_iterator_errors() -> None:
    ctx, clock = builder.make_ctx()
    _, arn = streamed(ctx)
    shard = only_shard(ctx, arn)
    with pytest.raises(ValidationException, match="Invalid ShardIterator"):
        streams.get_records(ctx, "nonsense", 10)
    iterator = streams.get_shard_iterator(ctx, arn, shard, "TRIM_HORIZON", None)
    with pytest.raises(ValidationException, match="Invalid ShardIterator"):
        streams.get_records(ctx, iterator.replace("|1|", "|1|A"), 10)
    with pytest.raises(ResourceNotFoundException, match="Shard does not exist"):
        streams.get_shard_iterator(ctx, arn, shard[:-1] + "9", "LATEST", None)
    with pytest.raises(ValidationException, match="AT_TIMESTAMP"):
        streams.get_shard_iterator(ctx, arn, shard, "AT_TIMESTAMP", None)
    with pytest.raises(ValidationException, match="Invalid StreamArn"):
        streams.describe_stream(ctx, arn + "/more", 100, None)
    with pytest.raises(ResourceNotFoundException, match="Stream: .* not found"):
        streams.describe_stream(ctx, arn.replace("table/tbl/", "table/other/"), 100, None)
    clock.advance(15 * 60 + 1)
    with pytest.raises(ExpiredIteratorException, match="tolerated delay of 900000 milliseconds"):
        streams.get_records(ctx, iterator, 10)


def test_a_disabled_stream_stays_readable_then_goes(clock_ctx: tuple[Context, ManualClock]) -> None:
    ctx, clock = clock_ctx
    table, arn = streamed(ctx)
    builder.put(ctx, table, [builder.item("a")])
    tables.update(ctx, "tbl", lambda td: dataclasses.replace(td, stream=StreamSpec(False, None, LABEL)))
    view = streams.describe_stream(ctx, arn, 100, None)
    assert (view.status, view.view_type) == ("DISABLED", "NEW_AND_OLD_IMAGES")
    (shard,) = view.shards
    assert shard.ending is not None
    page = streams.get_records(ctx, streams.get_shard_iterator(ctx, arn, shard.shard_id, "TRIM_HORIZON", None), 10)
    assert [c.event_name for c in page.changes] == ["INSERT"]
    assert page.next_iterator is None  # a closed shard read to its end
    assert [s.arn for s in streams.list_streams(ctx, "tbl", 100, None)[0]] == [arn]
    clock.advance(STREAM_RETENTION_SECONDS)
    assert streams.list_streams(ctx, None, 100, None) == ([], None)


def test_trimmed_records() -> None:
    ctx, clock = builder.make_ctx()
    table, arn = streamed(ctx)
    shard = only_shard(ctx, arn)
    builder.put(ctx, table, [builder.item("a")])
    (first,) = read_all(ctx, arn, shard)
    clock.advance(STREAM_RETENTION_SECONDS - 10)
    early = streams.get_shard_iterator(ctx, arn, shard, "TRIM_HORIZON", None)
    clock.advance(20)
    retention.trim(ctx)
    with pytest.raises(TrimmedDataAccessException):
        streams.get_records(ctx, early, 10)
    with pytest.raises(TrimmedDataAccessException):
        streams.get_shard_iterator(ctx, arn, shard, "AT_SEQUENCE_NUMBER", streams.sequence_number(first.seq))
    assert read_all(ctx, arn, shard) == []
    assert builder.restart(ctx).changelog.trimmed_through == first.seq  # kept across a restart


def test_list_streams_pages_in_arn_order() -> None:
    ctx, _ = builder.make_ctx()
    arns = [streamed(ctx, name)[1] for name in ("ccc", "aaa", "bbb")]
    builder.create(ctx, "plain")
    page, last = streams.list_streams(ctx, None, 2, None)
    assert [s.arn for s in page] == sorted(arns)[:2] and last == sorted(arns)[1]
    rest, last = streams.list_streams(ctx, None, 2, last)
    assert [s.arn for s in rest] == sorted(arns)[2:] and last is None
    with pytest.raises(ResourceNotFoundException, match="Table: nope not found"):
        streams.list_streams(ctx, "nope", 10, None)


@pytest.fixture
def clock_ctx() -> tuple[Context, ManualClock]:
    return builder.make_ctx()


def test_a_deleted_table_s_streams_stay_readable_for_the_retention_period() -> None:
    ctx, clock = builder.make_ctx()
    table, arn = streamed(ctx)
    builder.put(ctx, table, [builder.item("a")])
    tables.delete(ctx, "tbl")
    ctx.catalog.maintain()  # the deletion completes
    assert ctx.catalog.find("tbl") is None
    ctx = builder.restart(ctx)  # what is kept is in the store
    view = streams.describe_stream(ctx, arn, 100, None)
    assert (view.status, view.table_name) == ("DISABLED", "tbl")
    (shard,) = view.shards
    assert [c.event_name for c in read_all(ctx, arn, shard.shard_id)] == ["INSERT"]
    later = "2023-11-14T22:13:21.000"
    again = builder.create(ctx, "tbl", 5, 5, stream=StreamSpec(True, "KEYS_ONLY", later))
    assert again.table_id != table.table_id  # a new table of the same name: both tables' streams are listed
    listed = [(s.arn, s.label) for s in streams.list_streams(ctx, "tbl", 100, None)[0]]
    assert listed == [(arn, LABEL), (arn.replace(LABEL, later), later)]
    assert streams.describe_stream(ctx, arn, 100, None).status == "DISABLED"
    clock.advance(STREAM_RETENTION_SECONDS)
    retention.trim(ctx)
    assert ctx.shards.deleted_tables() == []
    assert builder.restart(ctx).shards.deleted_tables() == []


def test_an_idle_shard_s_iterator_keeps_up_with_the_log() -> None:
    """Polling an idle shard for more than a day while another table's records are trimmed is no trimmed read."""
    ctx, clock = builder.make_ctx()
    _, arn = streamed(ctx)
    shard = only_shard(ctx, arn)
    busy = builder.create(ctx, "busy", 5, 5, stream=StreamSpec(True, "KEYS_ONLY", LABEL))
    ctx.capacity.state(busy)
    iterator = streams.get_shard_iterator(ctx, arn, shard, "LATEST", None)
    for step in range(26 * 6):  # every 10 minutes for 26 hours, a change of the busy table each hour
        if step % 6 == 0:
            builder.put(ctx, busy, [builder.item(f"k{step}")])
        clock.advance(600)
        retention.trim(ctx)
        page = streams.get_records(ctx, iterator, 1000)
        assert page.changes == [] and page.next_iterator is not None
        iterator = page.next_iterator
    assert ctx.changelog.trimmed_through >= 0  # the busy table's first records were trimmed


def test_a_shard_rollover_made_by_a_write_taken_back_is_not_kept() -> None:
    ctx, clock = builder.make_ctx()
    table, arn = streamed(ctx)
    builder.put(ctx, table, [builder.item("a")])
    clock.advance(STREAM_SHARD_ROLLOVER_SECONDS)
    with pytest.raises(RuntimeError), ctx.kv.write() as txn:  # the first change after the shard's four hours
        ctx.shards.shard_for(txn, table, builder.key_of(table, "b"), ctx.changelog.next_seq, clock.now())
        raise RuntimeError("taken back, as a cancelled transaction is after its first item")
    assert len(streams.describe_stream(ctx, arn, 100, None).shards) == 1  # the store's map: no rollover happened
    builder.put(ctx, table, [builder.item("b")])  # this one rolls the shard over
    parent, child = streams.describe_stream(ctx, arn, 100, None).shards
    assert child.parent_shard_id == parent.shard_id
    assert [change.keys for change in read_all(ctx, arn, child.shard_id)] == [{"pk": {"S": "b"}}]
    again = builder.restart(ctx)  # the map a restart reads is the one the records were placed by
    assert [s.shard_id for s in streams.describe_stream(again, arn, 100, None).shards] == [
        parent.shard_id,
        child.shard_id,
    ]
    assert [change.keys for change in read_all(again, arn, child.shard_id)] == [{"pk": {"S": "b"}}]
