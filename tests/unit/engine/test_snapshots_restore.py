"""Snapshots (engine/snapshots.py) and restores (engine/restore.py) on an in-memory dynastore: a snapshot is the
table as it was when it began whatever writes run while it reads; a restore loads every item, LSI and GSI entry
and the statistics, CREATING until done; a restore cut short leaves no table."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from dynastore.engine import restore, snapshots
from dynastore.engine.context import Context
from dynastore.engine.restore import abandon_unfinished, progress_of, restored_definition, start_restore
from dynastore.engine.snapshots import take_snapshot, take_snapshot_async
from dynastore.model.table_schema import ACTIVE, CREATING, KeyAttr, OnDemandThroughput, RestoreSummary, TableDef
from dynastore.storage import keyspace
from dynastore.storage.backup_files import BackupFiles
from dynastore.storage.itemcodec import decode_item
from dynastore.storage.kv import StorageCorruptionError
from dynastore.storage.lmdb_kv import LmdbKV
from tests.unit.engine.tables import PK, SK, create, gsi, item, lsi, make_ctx, put, restart

X = KeyAttr("x", "S")
Y = KeyAttr("y", "S")
SUMMARY = RestoreSummary("arn:backup", "arn:source", 1_700_000_000.0, True)


def indexed_table(ctx: Context, name: str = "src") -> TableDef:
    return create(
        ctx,
        name,
        range_key=SK,
        lsis=(lsi(ctx, "by_x", X, projection="ALL"),),
        gsis=(gsi(ctx, "by_y", Y, projection="KEYS_ONLY"),),
    )


def entries(ctx: Context, index_id: int) -> list[bytes]:
    prefix = keyspace.index_prefix(index_id)
    with ctx.kv.read() as txn:
        return [k for k, _ in txn.iter_range(prefix, keyspace.prefix_end(prefix))]


def test_a_snapshot_holds_every_item_as_stored() -> None:
    async def main() -> None:
        ctx, _ = make_ctx()
        table = indexed_table(ctx)
        put(ctx, table, [item("a", i, x=f"x{i}", y=f"y{i % 3}") for i in range(30)])
        snap = take_snapshot(ctx, "src")
        assert (snap.item_count, snap.table.name, snap.table.item_count) == (30, "src", 30)
        assert snap.seq == ctx.changelog.next_seq
        assert sorted(int(decode_item(v)["sk"]["N"]) for v in snap.items()) == list(range(30))
        assert snap.size_bytes == ctx.catalog.stats("src")[1]

    asyncio.run(main())


def test_writes_while_a_snapshot_reads_do_not_reach_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshots, "SNAPSHOT_CHUNK_ITEMS", 3)

    async def main() -> None:
        ctx, _ = make_ctx()
        table = create(ctx, "src", range_key=SK)
        put(ctx, table, [item("a", i, v="old") for i in range(40)])
        seq = ctx.changelog.next_seq
        taking = asyncio.ensure_future(take_snapshot_async(ctx, "src"))
        for i in range(40):  # a request between each chunk the snapshot reads
            await asyncio.sleep(0)
            put(ctx, table, [item("a", i, v="new"), item("b", i, v="new")])
        snap = await taking
        assert [decode_item(v)["v"]["S"] for v in snap.items()] == ["old"] * 40
        assert snap.seq == seq

    asyncio.run(main())


def test_a_restore_loads_items_indexes_and_statistics_then_turns_active() -> None:
    async def main() -> None:
        ctx, _ = make_ctx()
        source = indexed_table(ctx)
        put(ctx, source, [item("a", i, x=f"x{i}", y=f"y{i % 3}") for i in range(25)] + [item("b", 1)])
        snap = take_snapshot(ctx, "src")
        target = restored_definition(ctx, source, "dst")
        created = start_restore(ctx, target, snap.items, SUMMARY, total=snap.item_count)
        assert created.status == CREATING and created.restore is not None and created.restore.in_progress
        progress = progress_of(ctx, "dst")
        assert progress is not None and progress.total == 26
        await ctx.recovery.wait()
        done = ctx.catalog.with_live_stats(ctx.catalog.get("dst"))
        assert done.status == ACTIVE
        assert done.restore == RestoreSummary("arn:backup", "arn:source", SUMMARY.restored_at, False)
        assert (done.item_count, done.size_bytes) == ctx.catalog.stats("src")
        assert done.table_id != source.table_id
        assert len(entries(ctx, done.lsis[0].index_id)) == 25  # items without x are not in the LSI
        assert len(entries(ctx, done.gsis[0].index_id)) == 25
        assert (done.gsis[0].item_count, done.lsis[0].item_count) == (25, 25)
        assert progress_of(ctx, "dst") is None

    asyncio.run(main())


def test_a_restore_whose_items_fail_drops_its_table() -> None:
    def broken() -> list[bytes]:
        raise StorageCorruptionError("backup image is truncated")

    async def main() -> None:
        ctx, _ = make_ctx()
        source = create(ctx, "src")
        start_restore(ctx, restored_definition(ctx, source, "dst"), broken, SUMMARY)
        await ctx.recovery.wait()
        assert ctx.catalog.find("dst") is None

    asyncio.run(main())


def test_a_table_still_restoring_at_start_is_dropped() -> None:
    ctx, _ = make_ctx()
    source = create(ctx, "src")
    half = restored_definition(ctx, source, "dst")
    ctx.catalog.create(dataclasses.replace(half, restore=SUMMARY))
    again = restart(ctx)
    assert abandon_unfinished(again) == [f"{ctx.config.account_id}/{ctx.config.region}/dst"]
    assert again.catalog.find("dst") is None
    assert again.catalog.find("src") is not None


def test_chunks_are_small_transactions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(restore, "RESTORE_CHUNK_ITEMS", 4)

    async def main() -> None:
        ctx, _ = make_ctx()
        source = create(ctx, "src", range_key=SK)
        put(ctx, source, [item("a", i) for i in range(10)])
        snap = take_snapshot(ctx, "src")
        before = ctx.kv.commit_seq
        start_restore(ctx, restored_definition(ctx, source, "dst"), snap.items, SUMMARY)
        await ctx.recovery.wait()
        assert ctx.kv.commit_seq - before == 1 + 3 + 1  # create, three chunks, ACTIVE
        assert ctx.catalog.get("dst").status == ACTIVE

    asyncio.run(main())


def test_snapshots_on_disk_are_sealed_and_read_back(tmp_path: Path) -> None:
    async def main() -> None:
        store = LmdbKV(tmp_path / "db", map_size=1 << 26)
        ctx, _ = make_ctx(store, data_dir=tmp_path / "db")
        table = create(ctx, "src", hash_key=PK)
        put(ctx, table, [item(f"k{i}") for i in range(5)])
        snap = take_snapshot(ctx, "src", name="one")
        assert sorted(p.name for p in (tmp_path / "db" / "backups").iterdir()) == ["one.image"]
        files = BackupFiles.open(tmp_path / "db")
        assert files.read_header("one")["seq"] == snap.seq
        assert len(list(files.items("one"))) == 5
        store.close()

    asyncio.run(main())


def test_a_replica_restored_keeps_the_maxima_it_applied_as_its_own_settings() -> None:
    # A replica of a global table overriding the set's MaxReadRequestUnits (OnDemandThroughputOverride): the
    # restored table is no replica, so it holds them as its own on-demand throughput.
    ctx, _ = make_ctx()
    table = indexed_table(ctx)
    by_y = dataclasses.replace(table.gsis[0], on_demand=OnDemandThroughput(300, 200))
    source = dataclasses.replace(
        table, gsis=(by_y,), on_demand=OnDemandThroughput(500, 400), own_max_read=50, own_gsi_max_reads=(("by_y", 30),)
    )
    target = restored_definition(ctx, source, "dst")
    assert (target.own_max_read, target.own_gsi_max_reads) == (None, ())
    assert (target.on_demand, target.gsis[0].on_demand) == (OnDemandThroughput(50, 400), OnDemandThroughput(30, 200))
