"""The change log serves any consumer: one registered from outside the engine (here, the test) receives the changes
of the tables it follows, with the images it asks for, keeps its checkpoint through the log and holds back
trimming until it advances."""

from __future__ import annotations

import orjson

from dynastore.engine import indexes, retention, writes
from dynastore.engine.changelog import (
    IMAGES,
    KEYS_ONLY,
    MODIFY,
    NO_EVENT,
    NOT_FOLLOWED,
    REMOVE,
    ChangeRecord,
    decode_record,
    encode_record,
)
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.limits import STREAM_RETENTION_SECONDS
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import KeyAttr, StreamSpec, TableDef
from dynastore.model.values import Item
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item
from tests.unit.engine.tables import create, gsi, item, make_ctx, restart

STREAM = StreamSpec(True, "NEW_AND_OLD_IMAGES", "2023-11-14T22:13:20.000")


class Archive:
    """A consumer following one table by name, holding every record past its position until it advances."""

    def __init__(self, table_name: str, need: int = IMAGES) -> None:
        self.name = "archive"
        self.table_name = table_name
        self.wanted = need
        self.position = -1  # the sequence number of the last record read and kept elsewhere

    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.consumer_record_key(self.name)

    def need(self, table: TableDef) -> int:
        return self.wanted if table.name == self.table_name else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        return record.seq > self.position

    def read(self, ctx: Context, table: TableDef, limit: int = 100) -> list[ChangeRecord]:
        return ctx.changelog.read(self.position, limit, {table.table_id})

    def advance(self, ctx: Context, through: int) -> None:
        self.position = through
        ctx.changelog.save_checkpoint(self, orjson.dumps({"position": through}))


def _put(ctx: Context, table: TableDef, it: Item) -> None:
    writes.execute(ctx, table, storage_key(table, it), writes.PutPlan(it, size=item_size(it)))


def _delete(ctx: Context, table: TableDef, it: Item) -> None:
    writes.execute(ctx, table, storage_key(table, it), writes.DeletePlan())


def _log_size(ctx: Context) -> int:
    prefix = keyspace.change_prefix()
    with ctx.kv.read() as txn:
        return sum(1 for _ in txn.iter_range(prefix, keyspace.prefix_end(prefix)))


def test_a_registered_consumer_receives_the_changes_of_its_table_with_images() -> None:
    ctx, _ = make_ctx()
    followed, other = create(ctx, "followed"), create(ctx, "other")
    _put(ctx, followed, item("before"))  # no consumer follows the table yet: not logged
    assert ctx.changelog.next_seq == 0
    archive = Archive("followed")
    ctx.changelog.register(archive)
    _put(ctx, followed, item("a", x="1"))
    _put(ctx, followed, item("a", x="1"))  # the same item: no change, no record
    _put(ctx, followed, item("a", x="2"))
    _delete(ctx, followed, item("a"))
    _put(ctx, other, item("elsewhere"))  # a table it does not follow: not logged
    records = archive.read(ctx, followed)
    assert [r.event_name for r in records] == ["INSERT", "MODIFY", "REMOVE"]
    insert, modify, remove = records
    assert insert.old is None and insert.new is not None and decode_item(insert.new) == item("a", x="1")
    assert modify.old is not None and decode_item(modify.old) == item("a", x="1")
    assert modify.new is not None and decode_item(modify.new) == item("a", x="2")
    assert remove.old is not None and remove.new is None
    assert [r.seq for r in ctx.changelog.read(-1, 100)] == [r.seq for r in records]  # nothing else was logged
    assert [r.shard for r in records] == [0, 0, 0]  # in no stream


def test_a_keys_only_consumer_gets_no_images_unless_another_consumer_needs_them() -> None:
    ctx, _ = make_ctx()
    plain, streamed = create(ctx, "plain"), create(ctx, "streamed", stream=STREAM)
    ctx.changelog.register(Archive("plain", KEYS_ONLY))
    _put(ctx, plain, item("a"))
    (record,) = ctx.changelog.read(-1, 10, {plain.table_id})
    assert (record.event_name, record.old, record.new) == ("INSERT", None, None)
    assert record.key == storage_key(plain, item("a"))
    ctx.changelog.unregister(ctx.changelog.consumers[-1])
    ctx.changelog.register(Archive("streamed", KEYS_ONLY))
    _put(ctx, streamed, item("b"))
    (record,) = ctx.changelog.read(-1, 10, {streamed.table_id})
    assert record.new is not None and decode_item(record.new) == item("b")  # the stream needs the images


def test_trimming_waits_for_the_slowest_consumer_and_follows_it_as_it_advances() -> None:
    ctx, clock = make_ctx()
    table = create(ctx, "followed")
    archive = Archive("followed")
    ctx.changelog.register(archive)
    for name in ("a", "b", "c"):
        _put(ctx, table, item(name))
    clock.advance(STREAM_RETENTION_SECONDS + 60)  # every retention period has passed
    retention.trim(ctx)
    assert _log_size(ctx) == 3 and ctx.changelog.trimmed_through == -1  # the archive read none of them
    first, second, _ = archive.read(ctx, table)
    archive.advance(ctx, second.seq)
    retention.trim(ctx)
    assert _log_size(ctx) == 1 and ctx.changelog.trimmed_through == second.seq
    assert [r.seq for r in archive.read(ctx, table)] == [second.seq + 1]
    archive.advance(ctx, second.seq + 1)
    retention.trim(ctx)
    assert _log_size(ctx) == 0 and first.seq < second.seq


def test_a_stream_still_holds_its_records_for_the_retention_period_after_the_consumer_advanced() -> None:
    ctx, clock = make_ctx()
    table = create(ctx, "followed", stream=STREAM)
    archive = Archive("followed")
    ctx.changelog.register(archive)
    _put(ctx, table, item("a"))
    (record,) = archive.read(ctx, table)
    assert record.shard != 0  # placed in the stream's shard, logged once for both consumers
    archive.advance(ctx, record.seq)
    retention.trim(ctx)
    assert _log_size(ctx) == 1  # the stream keeps it 24 hours
    clock.advance(STREAM_RETENTION_SECONDS + 1)
    retention.trim(ctx)
    assert _log_size(ctx) == 0


def test_a_record_with_gsi_changes_stays_for_the_consumer_once_applied() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, "followed", gsis=(gsi(ctx, "by_g", KeyAttr("g", "S")),))
    archive = Archive("followed")
    ctx.changelog.register(archive)
    _put(ctx, table, item("a", g="x"))
    assert not indexes.propagate(ctx)
    assert not ctx.changelog.has_pending()
    (record,) = archive.read(ctx, table)  # GSI propagation is done with it; the archive is not
    assert record.gsi and record.new is not None
    archive.advance(ctx, record.seq)
    retention.trim(ctx)
    assert _log_size(ctx) == 0


def test_the_checkpoint_is_kept_through_the_log_across_a_restart() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, "followed")
    archive = Archive("followed")
    ctx.changelog.register(archive)
    assert ctx.changelog.load_checkpoint(archive) is None
    _put(ctx, table, item("a"))
    (record,) = archive.read(ctx, table)
    archive.advance(ctx, record.seq)
    again = restart(ctx)
    saved = again.changelog.load_checkpoint(Archive("followed"))
    assert saved is not None and orjson.loads(saved) == {"position": record.seq}
    with ctx.kv.read() as txn:
        assert txn.get(keyspace.consumer_record_key("archive")) == saved


def test_consumer_names_are_unique_and_the_engine_s_own_are_registered() -> None:
    ctx, _ = make_ctx()
    assert [c.name for c in ctx.changelog.consumers] == ["gsi-propagation", "streams", "point-in-time"]
    ctx.changelog.register(Archive("t"))
    try:
        ctx.changelog.register(Archive("u"))
    except ValueError as e:
        assert "archive" in str(e)
    else:
        raise AssertionError("a second consumer of the same name was registered")


def test_records_of_earlier_versions_keep_their_meaning() -> None:
    # Before consumers, a record was kept past its GSI application exactly when it was in a stream shard; such
    # records carry no flag and still are.
    in_shard = decode_record(5, encode_record(1.0, 7, 3, MODIFY, False, b"k", b"o", b"n", []))
    gsi_only = decode_record(6, encode_record(1.0, 7, 0, NO_EVENT, False, b"k", None, None, [(b"X", None)]))
    assert (in_shard.kept, in_shard.event, in_shard.by_service) == (True, MODIFY, False)
    assert (gsi_only.kept, gsi_only.event) == (False, NO_EVENT)
    flagged = decode_record(7, encode_record(1.0, 7, 0, REMOVE, True, b"k", b"o", None, [], kept=True))
    assert (flagged.kept, flagged.event, flagged.by_service, flagged.shard) == (True, REMOVE, True, 0)


class Retaining(Archive):
    """A consumer that needs its table's records for a retention period of its own (a point-in-time archive)."""

    def __init__(self, table_name: str, seconds: float) -> None:
        super().__init__(table_name)
        self.seconds = seconds
        self.table_id = -1

    def holds(self, record: ChangeRecord, now: float) -> bool:
        return record.table_id == self.table_id and record.at > now - self.seconds


def test_trimming_follows_a_consumer_s_retention_period_for_its_table() -> None:
    ctx, clock = make_ctx()
    table = create(ctx, "followed")
    kept = Retaining("followed", 2 * STREAM_RETENTION_SECONDS)
    kept.table_id = table.table_id
    ctx.changelog.register(kept)
    _put(ctx, table, item("a"))
    clock.advance(STREAM_RETENTION_SECONDS + 60)
    retention.trim(ctx)
    assert _log_size(ctx) == 1  # past the streams' 24 hours, within its own 48
    clock.advance(STREAM_RETENTION_SECONDS)
    retention.trim(ctx)
    assert _log_size(ctx) == 0
