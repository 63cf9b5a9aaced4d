"""The progress of long work (engine/progress.py): the registry's view and its log lines, driven by a ManualClock,
and the long jobs that report through it (GSI backfills, TTL sweeps, partition splits)."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from dynastore.engine import indexes, ttl, writes
from dynastore.engine import tables as engine_tables
from dynastore.engine.capacity.partitions import HASH_SPACE
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.engine.progress import BACKFILL, REPORT_EVERY, SPLIT, TTL_SWEEP, Jobs
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import CREATING, IndexDef, KeyAttr, KeySchema, Projection, TtlSpec
from dynastore.storage import keycodec, keyspace
from dynastore.util.clock import ManualClock
from tests.unit.engine import tables

T0 = 1_700_000_000.0


@pytest.fixture
def lines(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="dynastore")
    return caplog


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "dynastore"]


# ---------------------------------------------------------------------------------------------- the registry


def test_a_job_logs_its_start_its_progress_every_few_seconds_and_its_end(lines: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(T0)
    jobs = Jobs(clock)
    job = jobs.start(BACKFILL, 7, "orders", index="by_status", total=1000)
    assert messages(lines) == ["GSI backfill of orders/by_status started: 1000 items"]
    clock.advance(2)
    job.done += 200
    jobs.report()  # not yet REPORT_EVERY seconds
    assert len(messages(lines)) == 1
    clock.advance(REPORT_EVERY - 2)
    job.done += 200
    jobs.report()
    assert messages(lines)[-1] == (
        "GSI backfill of orders/by_status: 400 of 1000 items (40.0%), 80 items/s, about 8 s left"
    )
    jobs.report()  # no second line at the same time
    assert len(messages(lines)) == 2
    clock.advance(7.5)
    job.done = 1000
    jobs.finish(job)
    assert messages(lines)[-1] == "GSI backfill of orders/by_status finished: 1000 items in 12.5 s (80 items/s)"
    assert jobs.view() == {"now": T0 + 12.5, "jobs": []}


def test_the_view_reports_rate_and_estimated_end() -> None:
    clock = ManualClock(T0)
    jobs = Jobs(clock)
    job = jobs.start(BACKFILL, 7, "orders", index="by_status", total=1000, account="123456789012", region="us-east-1")
    assert jobs.view()["jobs"][0]["rate"] is None  # no time has passed: no estimate yet
    clock.advance(10)
    job.done = 250
    assert jobs.view() == {
        "now": T0 + 10,
        "jobs": [
            {
                "kind": "gsi_backfill",
                "account": "123456789012",
                "region": "us-east-1",
                "table": "orders",
                "index": "by_status",
                "done": 250,
                "total": 1000,
                "unit": "items",
                "percent": 25.0,
                "started": T0,
                "rate": 25.0,
                "seconds_left": 30.0,
                "estimated_end": T0 + 40,
            }
        ],
    }


def test_an_unknown_total_has_no_estimate(lines: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(T0)
    jobs = Jobs(clock)
    job = jobs.start("export", "arn", "orders")
    clock.advance(REPORT_EVERY)
    job.done = 50
    jobs.report()
    shown = jobs.view()["jobs"][0]
    assert (shown["total"], shown["percent"], shown["rate"], shown["estimated_end"]) == (None, None, 10.0, None)
    assert messages(lines) == ["export of orders started: total unknown", "export of orders: 50 items, 10 items/s"]


def test_a_failure_ends_with_a_warning(lines: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(T0)
    jobs = Jobs(clock)
    job = jobs.start("restore", "r", "copy", total=10)
    job.done = 4
    clock.advance(1)
    jobs.finish(job, "the disk is full")
    record = lines.records[-1]
    assert (record.levelno, record.getMessage()) == (
        logging.WARNING,
        "restore of copy failed after 4 items in 1.0 s: the disk is full",
    )


def test_a_quiet_job_is_neither_logged_nor_shown_until_announced(lines: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(T0)
    jobs = Jobs(clock)
    job = jobs.start(TTL_SWEEP, 1, "sessions", total=10, quiet=True)
    clock.advance(REPORT_EVERY)
    jobs.report()
    assert jobs.view()["jobs"] == [] and messages(lines) == []
    jobs.announce(job)
    assert [j["kind"] for j in jobs.view()["jobs"]] == ["ttl_sweep"]
    assert messages(lines) == ["TTL sweep of sessions started: 10 items"]


def test_jobs_whose_work_went_away_are_dropped(lines: pytest.LogCaptureFixture) -> None:
    jobs = Jobs(ManualClock(T0))
    jobs.start(BACKFILL, 1, "t", index="a")
    jobs.start(BACKFILL, 2, "t", index="b")
    jobs.drop_except(BACKFILL, [2])
    assert [j.index for j in jobs.running()] == ["b"]
    assert (
        messages(lines)[-1]
        == "GSI backfill of t/a failed after 0 items in 0.0 s: abandoned (its table or index is gone)"
    )


# ---------------------------------------------------------------------------------------------- the long jobs


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


def test_a_backfill_reports_items_read_of_the_tables_items(lines: pytest.LogCaptureFixture) -> None:
    ctx, clock = tables.make_ctx(gsi_backfill_chunk=4, gsi_backfill_interval=2.0)
    td = tables.create(ctx, "t")
    for i in range(10):
        item = {"pk": {"S": f"p{i}"}, "w": {"S": "w"}}
        writes.execute(ctx, td, storage_key(td, item), writes.PutPlan(item))
    add_gsi(ctx, "by_w", "w")
    progress = ctx.engine.progress
    indexes.maintain(ctx)
    shown = progress.view()["jobs"]
    assert [(j["kind"], j["table"], j["index"], j["done"], j["total"]) for j in shown] == [
        ("gsi_backfill", "t", "by_w", 4, 10)
    ]
    clock.advance(REPORT_EVERY)
    indexes.maintain(ctx)
    progress.report()
    assert shown[0]["started"] == tables.T0
    assert progress.view()["jobs"][0]["estimated_end"] == tables.T0 + 6.25  # 8 items in 5 s: 10 in 6.25
    clock.advance(2)
    indexes.maintain(ctx)
    assert progress.view()["jobs"] == []
    assert messages(lines) == [
        "GSI backfill of t/by_w started: 10 items",
        "GSI backfill of t/by_w: 8 of 10 items (80.0%), 2 items/s, about 1 s left",
        "GSI backfill of t/by_w finished: 10 items in 7.0 s (1 items/s)",
    ]


def test_a_deleted_index_ends_its_backfill_job() -> None:
    ctx, _ = tables.make_ctx(gsi_backfill_chunk=1, gsi_backfill_interval=60.0)
    td = tables.create(ctx, "t")
    for i in range(3):
        item = {"pk": {"S": f"p{i}"}, "w": {"S": "w"}}
        writes.execute(ctx, td, storage_key(td, item), writes.PutPlan(item))
    add_gsi(ctx, "by_w", "w")
    indexes.maintain(ctx)
    assert len(ctx.engine.progress.running(BACKFILL)) == 1
    engine_tables.update(ctx, "t", lambda t: replace(t, gsis=()))
    indexes.maintain(ctx)
    assert ctx.engine.progress.running() == []


def put_expiring(ctx: Context, count: int, expired: bool) -> None:
    td = ctx.catalog.get("ttl")
    at = str(int(tables.T0) - 1 if expired else int(tables.T0) + 3600)
    for i in range(count):
        item = {"pk": {"S": f"{expired}{i}"}, "exp": {"N": at}}
        writes.perform(ctx, td, storage_key(td, item), writes.PutPlan(item, size=item_size(item)))


def test_a_sweep_deleting_many_items_reports_its_round(
    lines: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ttl, "SWEEP_CHUNK", 10)
    monkeypatch.setattr(ttl, "REPORTED_DELETIONS", 5)
    ctx, _ = tables.make_ctx()
    tables.create(ctx, "ttl", ttl=TtlSpec("exp", True))
    put_expiring(ctx, 20, expired=True)
    put_expiring(ctx, 5, expired=False)
    assert ttl.sweep(ctx) is True
    shown = ctx.engine.progress.view()["jobs"]
    assert [(j["kind"], j["table"], j["done"], j["total"]) for j in shown] == [("ttl_sweep", "ttl", 10, 25)]
    assert 5 <= shown[0]["deleted"] <= 10  # the expired items among the first ten in key order
    while ttl.sweep(ctx):
        pass
    assert ctx.engine.progress.running() == []
    assert messages(lines) == [
        "TTL sweep of ttl started: 25 items",
        "TTL sweep of ttl finished: 25 items, 20 deleted in 0.0 s",
    ]


def test_a_sweep_deleting_little_is_not_reported(
    lines: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ttl, "SWEEP_CHUNK", 10)
    ctx, _ = tables.make_ctx()
    tables.create(ctx, "ttl", ttl=TtlSpec("exp", True))
    put_expiring(ctx, 3, expired=True)
    put_expiring(ctx, 20, expired=False)
    while ttl.sweep(ctx):
        assert ctx.engine.progress.view()["jobs"] == []
    assert ctx.engine.progress.running() == [] and messages(lines) == []


def test_a_size_split_logs_its_start_and_end(lines: pytest.LogCaptureFixture) -> None:
    ctx, _ = tables.make_ctx(partition_size_limit=1000)
    td = tables.create(ctx, "fill", 5000, 2000)
    names = [
        n
        for n in (f"user{i}" for i in range(400))
        if int.from_bytes(keyspace.partition_hash(keycodec.encode_string(n)), "big") < HASH_SPACE // 4
    ][:12]
    for name in names:
        item = {"pk": {"S": name}, "v": {"S": "x" * 100}}
        writes.perform(ctx, td, tables.key_of(td, name), writes.PutPlan(item, size=item_size(item)))
    split = [m for m in messages(lines) if m.startswith("partition split")]
    assert split[0].startswith("partition split of fill started: ")
    assert split[1].startswith("partition split of fill finished: ")
    assert not ctx.engine.progress.running(SPLIT)
