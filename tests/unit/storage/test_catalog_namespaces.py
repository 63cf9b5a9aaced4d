"""The tables of namespaces other than the default survive a restart and kill -9, and the background work (GSI
propagation, TTL, purges) covers them."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.engine import indexes, ttl
from dynastore.security.caller import Caller
from dynastore.storage import keyspace
from dynastore.storage.catalog import Catalog
from tests.unit.api.operations import ANYONE, bound, call, make_ctx, user

OTHER = user("111111111111", "eu-west-1")
REPO = Path(__file__).resolve().parents[3]


def table(name: str = "Music", **extra: Any) -> dict[str, Any]:
    return {
        "TableName": name,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        **extra,
    }


def answer(ops: dict[str, Any], op: str, **body: Any) -> Any:
    out = call(ops, op, **body)
    return orjson.loads(out) if isinstance(out, bytes) else out


def run_as(app: Dynastore, caller: Caller, op: str, **body: Any) -> Any:
    out = bound(app.engine, caller, app.services)[op](body)
    return orjson.loads(out) if isinstance(out, bytes) else out


def test_another_namespace_s_tables_survive_a_restart(tmp_path: Path) -> None:
    config = Config(data_dir=tmp_path)
    app = Dynastore(config)
    try:
        run_as(app, ANYONE, "CreateTable", **table())
        run_as(app, OTHER, "CreateTable", **table())
        run_as(app, OTHER, "PutItem", TableName="Music", Item={"pk": {"S": "k"}, "g": {"S": "x"}})
        before = {
            c.arn: run_as(app, c, "DescribeTable", TableName="Music")["Table"]["TableId"] for c in (ANYONE, OTHER)
        }
    finally:
        app.close()
    app = Dynastore(config)
    try:
        assert run_as(app, OTHER, "ListTables")["TableNames"] == ["Music"]
        assert run_as(app, ANYONE, "ListTables")["TableNames"] == ["Music"]
        described = run_as(app, OTHER, "DescribeTable", TableName="Music")["Table"]
        assert described["TableArn"] == "arn:aws:dynamodb:eu-west-1:111111111111:table/Music"
        assert described["ItemCount"] == 1  # the statistics were saved at close
        after = {c.arn: run_as(app, c, "DescribeTable", TableName="Music")["Table"]["TableId"] for c in (ANYONE, OTHER)}
        assert after == before
        got = run_as(app, OTHER, "GetItem", TableName="Music", Key={"pk": {"S": "k"}})
        assert got["Item"]["g"] == {"S": "x"}
        assert "Item" not in run_as(app, ANYONE, "GetItem", TableName="Music", Key={"pk": {"S": "k"}})
        # ids handed out after the restart collide with no namespace's
        run_as(app, OTHER, "CreateTable", **table("Albums"))
        ids = [
            app.engine.in_namespace("111111111111", "eu-west-1").catalog.get(n).table_id for n in ("Music", "Albums")
        ]
        ids.append(app.catalog.get("Music").table_id)
        index_ids = [
            i for space in app.catalog.namespaces() for n in space.list_names() for i in space.get(n).index_ids()
        ]
        assert len(set(ids + index_ids)) == len(ids + index_ids)
    finally:
        app.close()


_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from dynastore.app import Dynastore
    from dynastore.config import Config
    from tests.unit.storage.test_catalog_namespaces import OTHER, run_as, table

    async def main() -> None:
        app = Dynastore(Config(data_dir=Path(sys.argv[1])))
        committer = app.start(asyncio.get_running_loop())
        run_as(app, OTHER, "CreateTable", **table())
        run_as(app, OTHER, "PutItem", TableName="Music", Item={"pk": {"S": "k"}, "g": {"S": "x"}})
        await committer.wait_durable(app.kv.commit_seq)
        print("acknowledged", flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
    """
)


def test_another_namespace_s_table_survives_kill_9(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, env=env, cwd=REPO, text=True
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "acknowledged"
    finally:
        writer.send_signal(signal.SIGKILL)  # no clean shutdown: the acknowledged writes must be in the store
        writer.wait(30)
        if writer.stdout is not None:
            writer.stdout.close()
    app = Dynastore(Config(data_dir=tmp_path))
    try:
        assert run_as(app, OTHER, "ListTables")["TableNames"] == ["Music"]
        assert run_as(app, ANYONE, "ListTables")["TableNames"] == []
        got = run_as(app, OTHER, "GetItem", TableName="Music", Key={"pk": {"S": "k"}})
        assert got["Item"] == {"pk": {"S": "k"}, "g": {"S": "x"}}
    finally:
        app.close()


def test_gsi_propagation_counts_each_namespace_s_index() -> None:
    ctx, _, _ = make_ctx()
    default, other = bound(ctx, ANYONE), bound(ctx, OTHER)
    call(default, "CreateTable", **table())
    call(other, "CreateTable", **table())
    for key in ("a", "b"):
        call(other, "PutItem", TableName="Music", Item={"pk": {"S": key}, "g": {"S": "x"}})
    indexes.propagate(ctx)
    found = answer(other, "Query", TableName="Music", IndexName="by_g", KeyConditionExpression="g = :g",
                   ExpressionAttributeValues={":g": {"S": "x"}})  # fmt: skip
    assert found["Count"] == 2

    def index_count(ops: dict[str, Any]) -> int:
        return int(call(ops, "DescribeTable", TableName="Music")["Table"]["GlobalSecondaryIndexes"][0]["ItemCount"])

    assert (index_count(default), index_count(other)) == (0, 2)


def test_ttl_and_purges_cover_every_namespace() -> None:
    ctx, _, clock = make_ctx()
    other = bound(ctx, OTHER)
    call(other, "CreateTable", **table())
    call(
        other, "UpdateTimeToLive", TableName="Music", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"}
    )
    gone = str(int(clock.now()) - 10)
    call(other, "PutItem", TableName="Music", Item={"pk": {"S": "old"}, "exp": {"N": gone}})
    ttl.sweep(ctx)  # the server's maintenance runs on the default namespace's context
    assert answer(other, "GetItem", TableName="Music", Key={"pk": {"S": "old"}}) == {}
    call(other, "PutItem", TableName="Music", Item={"pk": {"S": "kept"}})
    table_id = ctx.in_namespace(OTHER.account_id, OTHER.region).catalog.get("Music").table_id
    call(other, "DeleteTable", TableName="Music")
    ctx.catalog.maintain()
    prefix = keyspace.table_prefix(table_id)
    with ctx.kv.read() as txn:
        assert list(txn.iter_range(prefix, keyspace.prefix_end(prefix))) == []
        assert txn.get(keyspace.meta_key("@111111111111/eu-west-1/Music")) is None
    call(other, "CreateTable", **table())
    assert answer(other, "Scan", TableName="Music")["Count"] == 0


def test_reload_keeps_every_namespace_s_catalog_object() -> None:
    ctx, _, _ = make_ctx()
    call(bound(ctx, OTHER), "CreateTable", **table())
    space = ctx.in_namespace(OTHER.account_id, OTHER.region).catalog
    ctx.catalog.reload()
    assert ctx.catalog.namespace_of(OTHER.account_id, OTHER.region) is space
    assert space.list_names() == ["Music"]


def test_the_admin_partitions_endpoint_takes_a_namespace(tmp_path: Path) -> None:
    app = Dynastore(Config(in_memory=True))
    try:
        run_as(app, OTHER, "CreateTable", **table())
        handle = app.protocol.handle
        plain = handle("GET", {}, b"", path="/dynastore/partitions/Music")
        assert plain.status == 404  # the default namespace has no such table
        query = "/dynastore/partitions/Music?account=111111111111&region=eu-west-1"
        assert handle("GET", {}, b"", path=query).status == 200
        arn = "arn%3Aaws%3Adynamodb%3Aeu-west-1%3A111111111111%3Atable%2FMusic"
        assert handle("GET", {}, b"", path=f"/dynastore/partitions/{arn}").status == 200
    finally:
        app.close()


def test_a_gsi_added_in_another_namespace_is_backfilled() -> None:
    ctx, _, _ = make_ctx(gsi_backfill_chunk=1)
    other = bound(ctx, OTHER)
    plain = table()
    del plain["GlobalSecondaryIndexes"]
    call(other, "CreateTable", **{**plain, "AttributeDefinitions": plain["AttributeDefinitions"][:1]})
    for key in ("a", "b", "c"):
        call(other, "PutItem", TableName="Music", Item={"pk": {"S": key}, "g": {"S": "x"}})
    call(
        other,
        "UpdateTable",
        TableName="Music",
        AttributeDefinitions=plain["AttributeDefinitions"],
        GlobalSecondaryIndexUpdates=[{"Create": table()["GlobalSecondaryIndexes"][0]}],
    )
    for _ in range(10):  # the server's maintenance loop, on the default namespace's context
        if not indexes.maintain(ctx):
            break
    index = call(other, "DescribeTable", TableName="Music")["Table"]["GlobalSecondaryIndexes"][0]
    assert (index["IndexStatus"], index.get("Backfilling", False), index["ItemCount"]) == ("ACTIVE", False, 3)
    assert index["IndexArn"] == "arn:aws:dynamodb:eu-west-1:111111111111:table/Music/index/by_g"
    found = answer(other, "Query", TableName="Music", IndexName="by_g", KeyConditionExpression="g = :g",
                   ExpressionAttributeValues={":g": {"S": "x"}})  # fmt: skip
    assert found["Count"] == 3


def test_a_new_default_namespace_adopts_its_tables_recorded_as_another_s() -> None:
    ctx, _, _ = make_ctx()
    call(bound(ctx, OTHER), "CreateTable", **table())
    call(bound(ctx, OTHER), "CreateTable", **table("Albums"))
    call(bound(ctx, ANYONE), "CreateTable", **table("Albums"))  # the old default's; the new default's too
    moved = Config(in_memory=True, clock=ctx.config.clock, account_id=OTHER.account_id, region=OTHER.region)
    catalog = Catalog.load(ctx.kv, moved)  # the server restarted with OTHER's account and region as its own
    assert catalog.scope == "" and catalog.list_names() == ["Albums", "Music"]
    assert catalog.get("Albums").table_id == ctx.catalog.get("Albums").table_id  # the record without a namespace
    catalog.update("Music", lambda td: dataclasses.replace(td, tags=(("k", "v"),)))
    with ctx.kv.read() as txn:
        assert txn.get(keyspace.meta_key("@111111111111/eu-west-1/Music")) is None
        assert orjson.loads(txn.get(keyspace.meta_key("Music")) or b"{}")["kind"] == "table"
    again = Catalog.load(ctx.kv, moved)
    assert again.list_names() == ["Albums", "Music"] and again.get("Music").tags == (("k", "v"),)
    again.delete("Music")
    assert Catalog.load(ctx.kv, moved).list_names() == ["Albums"]
