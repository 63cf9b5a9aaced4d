"""Every key a working store holds is one of the layout's kinds: written by the operations themselves, so a
record kind added without a tag of its own (or with a tag another kind already uses) fails here."""

from __future__ import annotations

import asyncio
from typing import Any

from dynastore.app import build_context, build_replicator
from dynastore.config import Config
from dynastore.engine import indexes, retention
from dynastore.engine.changelog import NOT_FOLLOWED, ChangeRecord
from dynastore.engine.context import Context
from dynastore.engine.transfer_jobs import ExportJob, save_job
from dynastore.limits import STREAM_RETENTION_SECONDS
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace as ks
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.triggers.delivery import delivery_for
from dynastore.triggers.runner import TriggerRunner
from dynastore.triggers.spec import TriggerSpec
from dynastore.util.clock import ManualClock
from tests.unit.api.operations import bound

_ALL = {"ProjectionType": "ALL"}


def _attr(name: str) -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": "S"}


def _key(hash_name: str, range_name: str | None = None) -> list[dict[str, str]]:
    schema = [{"AttributeName": hash_name, "KeyType": "HASH"}]
    if range_name is not None:
        schema.append({"AttributeName": range_name, "KeyType": "RANGE"})
    return schema


def _item(pk: str, sk: str, **more: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}, **{k: {"S": v} for k, v in more.items()}}


def _keys(kv: MemoryKV) -> list[bytes]:
    with kv.read() as txn:
        return [key for key, _ in txn.iter_range(b"", b"\xff")]


def _deliver_stream(ctx: Context, table: str) -> None:
    async def ignore(event: dict[str, Any]) -> None:
        pass

    spec = TriggerSpec(name="follow", table=table, handler=ignore)
    asyncio.run(TriggerRunner(spec, ctx, delivery_for(spec)).step())


class _Archive:
    """A change log consumer of the kind a host registers (engine/changelog.py ``Consumer``)."""

    name = "archive"
    checkpoint_key = ks.consumer_record_key(name)

    def need(self, table: TableDef) -> int:
        return NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        return False


def _running_export() -> ExportJob:
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/tbl"
    return ExportJob(
        arn=arn + "/export/01700000000000-0123abcd",
        table_arn=arn,
        table_id="00000000-0000-0000-0000-000000000000",
        table_name="tbl",
        account_id="000000000000",
        region="us-east-1",
        export_time=0.0,
        start_time=0.0,
        client_token="token",
        bucket="bucket",
        bucket_owner=None,
        prefix=None,
        sse_algorithm=None,
        sse_kms_key_id=None,
        export_format="DYNAMODB_JSON",
        export_type="FULL_EXPORT",
    )


def _every_kind_of_record() -> tuple[Context, list[bytes]]:
    """A store that has held every kind of record: what it held mid-way and at the end."""
    clock = ManualClock()
    config = Config(
        in_memory=True,
        clock=clock,
        create_table_delay=0,
        update_table_delay=0,
        delete_table_delay=0,
        gsi_backfill_chunk=1,
    )
    kv = MemoryKV()
    ctx = build_context(config, kv, Catalog.load(kv, config))
    replicator = build_replicator(ctx, config)  # global tables: the versions of the items of "gone"
    ops = bound(ctx)
    ops["CreateTable"](
        {
            "TableName": "tbl",
            "KeySchema": _key("pk", "sk"),
            "AttributeDefinitions": [_attr("pk"), _attr("sk"), _attr("a")],
            "BillingMode": "PAY_PER_REQUEST",
            "LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": _key("pk", "a"), "Projection": _ALL}],
            "GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": _key("a"), "Projection": _ALL}],
        }
    )
    ops["CreateTable"](
        {
            "TableName": "gone",
            "KeySchema": _key("pk", "sk"),
            "AttributeDefinitions": [_attr("pk"), _attr("sk")],
            "BillingMode": "PAY_PER_REQUEST",
            "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        }
    )
    ops["UpdateTable"]({"TableName": "gone", "ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}]})
    asyncio.run(replicator.step())
    for i in range(3):
        ops["PutItem"]({"TableName": "tbl", "Item": _item("p", str(i), a="x", b="z")})
        ops["PutItem"]({"TableName": "gone", "Item": _item("p", str(i))})
    ops["TransactWriteItems"](
        {"ClientRequestToken": "token", "TransactItems": [{"Put": {"TableName": "tbl", "Item": _item("q", "1")}}]}
    )
    _deliver_stream(ctx, "gone")  # a trigger's checkpoint
    ctx.changelog.save_checkpoint(_Archive(), b"{}")  # any other change log consumer's checkpoint
    save_job(ctx, _running_export())  # an export's record, and its marker while it runs
    seen = _keys(kv)  # GSI changes are still waiting here
    ops["UpdateTable"](
        {
            "TableName": "tbl",
            "AttributeDefinitions": [_attr("b")],
            "GlobalSecondaryIndexUpdates": [
                {"Create": {"IndexName": "gsi2", "KeySchema": _key("b"), "Projection": _ALL}}
            ],
        }
    )
    ops["DeleteTable"]({"TableName": "gone"})
    asyncio.run(replicator.step())  # its replica leaves the set, and the replicator holds none of its records
    clock.advance(120)
    ctx.catalog.maintain(max_keys=1)  # the deleted table is queued for purging, one key purged
    indexes.maintain(ctx)  # the new GSI's backfill copies one item and leaves its cursor
    seen += _keys(kv)
    while indexes.propagate(ctx):
        pass
    clock.advance(STREAM_RETENTION_SECONDS)
    retention.trim(ctx)  # the stream's records pass their retention: trimmed, the next sequence number saved
    return ctx, seen + _keys(kv)


def test_every_key_has_exactly_one_tag_and_every_tag_is_used() -> None:
    _ctx, keys = _every_kind_of_record()
    used: set[bytes] = set()
    for key in keys:
        tags = [tag for tag in ks.ALL_TAGS if key.startswith(tag)]
        assert len(tags) == 1, f"{key!r} is under {tags}"
        used.add(tags[0])
    # Shard index keys are written by earlier versions only (tests/unit/engine/test_shard_index.py trims one).
    assert used == set(ks.ALL_TAGS) - {ks.SHARD_RECORD_TAG}


def test_catalog_records_are_tables_or_reserved_names() -> None:
    ctx, keys = _every_kind_of_record()
    names = {key[len(ks.META_TAG) :].decode() for key in keys if key.startswith(ks.META_TAG)}
    reserved = {n for n in names if n in ks.RESERVED_RECORD_NAMES or n.startswith(ks.RESERVED_RECORD_PREFIXES)}
    # the tables' own records (gone's until it was dropped), and its replica's in another region's namespace
    assert names - reserved == {"tbl", "gone", "@000000000000/us-west-2/gone"}
    assert ctx.catalog.list_names() == ["tbl"]
    # every reserved record kind was written, so a rename on either side would show here
    assert set(ks.RESERVED_RECORD_NAMES) <= reserved
    for prefix in ks.RESERVED_RECORD_PREFIXES:
        assert any(n.startswith(prefix) for n in reserved), prefix
