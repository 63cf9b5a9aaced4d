"""The trigger runner driven round by round with a ManualClock: batching, the batching window, lineage order,
retries and their limits, bisection, the on-failure file, filters, starting positions and the checkpoint."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from dynastore.engine import changelog
from dynastore.engine.context import Context
from dynastore.limits import STREAM_SHARD_ROLLOVER_SECONDS
from dynastore.model.table_schema import StreamSpec, TableDef
from dynastore.triggers.checkpoints import Checkpoint
from dynastore.triggers.delivery import delivery_for
from dynastore.triggers.filters import FilterSet
from dynastore.triggers.runner import TriggerRunner
from dynastore.triggers.spec import TriggerSpec
from dynastore.util.clock import ManualClock
from tests.unit.engine.tables import create, item, make_ctx, put, restart


class Recorder:
    """A handler that remembers each batch's partition keys and fails on a record whose ``bad`` is set."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def __call__(self, event: dict[str, Any]) -> None:
        keys = [r["dynamodb"]["Keys"]["pk"]["S"] for r in event["Records"]]
        self.calls.append(keys)
        if any("bad" in r["dynamodb"].get("NewImage", {}) for r in event["Records"]):
            raise RuntimeError("a bad record")


def _saved_checkpoint(ctx: Context, runner: TriggerRunner) -> Checkpoint | None:
    """The checkpoint the change log keeps for the runner, as the next run reads it."""
    raw = ctx.changelog.load_checkpoint(runner)
    return None if raw is None else Checkpoint.from_record(raw)


def setup(**spec: Any) -> tuple[Context, ManualClock, TableDef, Recorder, TriggerRunner]:
    ctx, clock = make_ctx()
    table = create(ctx, "orders", 5, 5, stream=StreamSpec(True, "NEW_AND_OLD_IMAGES", "2026-01-01T00:00:00.000"))
    ctx.capacity.state(table)  # as a request's admission would, before the first write opens a shard
    recorder = Recorder()
    runner = _runner(ctx, TriggerSpec(name="audit", table="orders", handler=recorder, **spec))
    return ctx, clock, table, recorder, runner


def _runner(ctx: Context, spec: TriggerSpec) -> TriggerRunner:
    return TriggerRunner(spec, ctx, delivery_for(spec))


def step(runner: TriggerRunner) -> bool:
    return asyncio.run(runner.step())


def drain(runner: TriggerRunner) -> int:
    rounds = 0
    while step(runner):
        rounds += 1
    return rounds


def test_records_go_in_batches_of_batch_size_in_order_and_are_checkpointed() -> None:
    ctx, _, table, recorder, runner = setup(batch_size=2)
    put(ctx, table, [item(f"k{i}") for i in range(5)])
    assert step(runner)
    assert recorder.calls == [["k0", "k1"]]
    drain(runner)
    assert recorder.calls == [["k0", "k1"], ["k2", "k3"], ["k4"]]
    saved = _saved_checkpoint(ctx, runner)
    assert saved is not None and list(saved.done.values()) == [ctx.changelog.next_seq - 1]
    assert not step(runner)  # nothing new


def test_the_event_has_the_stream_record_shape() -> None:
    ctx, _, table, _, _ = setup()
    events: list[dict[str, Any]] = []

    async def keep(event: dict[str, Any]) -> None:
        events.append(event)

    runner = _runner(ctx, TriggerSpec(name="shape", table="orders", handler=keep))
    put(ctx, table, [item("a", note="x")])
    put(ctx, table, [item("a", note="y")])
    drain(runner)
    first, second = events[0]["Records"]
    assert first["eventName"] == "INSERT" and second["eventName"] == "MODIFY"
    assert first["eventSource"] == "aws:dynamodb" and first["awsRegion"] == "us-east-1"
    data = second["dynamodb"]
    assert data["Keys"] == {"pk": {"S": "a"}}
    assert data["OldImage"] == {"pk": {"S": "a"}, "note": {"S": "x"}}
    assert data["NewImage"] == {"pk": {"S": "a"}, "note": {"S": "y"}}
    assert data["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert len(data["SequenceNumber"]) == 21 and data["SequenceNumber"] > first["dynamodb"]["SequenceNumber"]
    assert data["SizeBytes"] > 0


def test_the_batching_window_waits_for_more_records_by_the_clock() -> None:
    ctx, clock, table, recorder, runner = setup(batch_size=3, batching_window=10)
    put(ctx, table, [item("a")])
    assert not step(runner)
    clock.advance(5)
    put(ctx, table, [item("b")])
    assert not step(runner)
    clock.advance(5)  # ten seconds after the first record
    assert step(runner)
    assert recorder.calls == [["a", "b"]]
    put(ctx, table, [item(k) for k in "cde"])  # a full batch goes at once
    assert step(runner)
    assert recorder.calls[-1] == ["c", "d", "e"]


def test_a_failed_batch_is_retried_after_doubling_delays_until_the_retry_limit(tmp_path: Path) -> None:
    failed = tmp_path / "failed.jsonl"
    ctx, clock, table, recorder, runner = setup(max_retries=2, retry_delay=1, on_failure=failed)
    put(ctx, table, [item("a", bad="1"), item("b")])
    assert step(runner)  # the first delivery fails
    assert not step(runner)  # the retry waits a second
    clock.advance(1)
    assert step(runner)  # retry 1 fails: the next waits two seconds
    clock.advance(1)
    assert not step(runner)
    clock.advance(1)
    assert step(runner)  # retry 2 fails: the limit; the batch is discarded
    assert recorder.calls == [["a", "b"]] * 3
    (line,) = failed.read_text().splitlines()
    record = orjson.loads(line)
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 3
    info = record["DDBStreamBatchInfo"]
    assert info["batchSize"] == 2
    assert info["startSequenceNumber"] < info["endSequenceNumber"]
    assert info["streamArn"].endswith(":table/orders/stream/2026-01-01T00:00:00.000")
    assert record["errorMessage"] == "RuntimeError: a bad record"
    put(ctx, table, [item("c")])
    assert step(runner)  # the shard went on past the discarded batch
    assert recorder.calls[-1] == ["c"]
    view = runner.view()["shards"][0]
    assert view["failures"] == 1 and view["retries"] == 2 and view["last_error"] == "RuntimeError: a bad record"


def test_bisection_isolates_the_failing_record(tmp_path: Path) -> None:
    failed = tmp_path / "failed.jsonl"
    ctx, _, table, recorder, runner = setup(bisect=True, max_retries=0, on_failure=failed)
    put(ctx, table, [item("a"), item("b"), item("c", bad="1"), item("d")])
    drain(runner)
    assert recorder.calls == [["a", "b", "c", "d"], ["a", "b"], ["c", "d"], ["c"], ["d"]]
    (line,) = failed.read_text().splitlines()
    info = orjson.loads(line)["DDBStreamBatchInfo"]
    assert info["batchSize"] == 1 and info["startSequenceNumber"] == info["endSequenceNumber"]


def test_a_record_older_than_the_maximum_age_is_discarded(tmp_path: Path) -> None:
    failed = tmp_path / "failed.jsonl"
    ctx, clock, table, recorder, runner = setup(max_record_age=60, retry_delay=1, on_failure=failed)
    put(ctx, table, [item("a", bad="1")])
    assert step(runner)
    clock.advance(61)
    assert step(runner)  # too old to retry: discarded without another delivery
    assert recorder.calls == [["a"]]
    record = orjson.loads(failed.read_text())
    assert record["requestContext"]["condition"] == "RecordAgeExceeded"


def test_unlimited_retries_keep_the_batch_until_it_succeeds() -> None:
    ctx, clock, table, _, _ = setup()
    attempts: list[int] = []

    async def flaky(event: dict[str, Any]) -> None:
        attempts.append(len(event["Records"]))
        if len(attempts) < 5:
            raise OSError("not yet")

    runner = _runner(ctx, TriggerSpec(name="flaky", table="orders", handler=flaky, retry_delay=0.5))
    put(ctx, table, [item("a")])
    for _ in range(5):
        step(runner)
        clock.advance(60)
    assert attempts == [1] * 5
    assert runner.view()["shards"][0]["failures"] == 0


def test_filters_skip_records_and_checkpoint_them() -> None:
    pattern = {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"pk": {"S": [{"prefix": "keep"}]}}}}
    ctx, _, table, recorder, runner = setup(filters=FilterSet([pattern]))
    put(ctx, table, [item("keep1"), item("drop1"), item("keep2")])
    put(ctx, table, [item("keep1", note="changed")])  # a MODIFY
    drain(runner)
    assert recorder.calls == [["keep1", "keep2"]]
    put(ctx, table, [item("drop2")])
    assert step(runner)  # skipped, but the checkpoint moves past it
    saved = _saved_checkpoint(ctx, runner)
    assert saved is not None and list(saved.done.values()) == [ctx.changelog.next_seq - 1]
    assert recorder.calls == [["keep1", "keep2"]]


def test_latest_starts_after_the_records_already_there() -> None:
    ctx, _, table, recorder, runner = setup(starting_position="LATEST")
    put(ctx, table, [item("old")])
    assert not step(runner)
    put(ctx, table, [item("new")])
    drain(runner)
    assert recorder.calls == [["new"]]


def test_a_child_shard_is_read_only_after_its_parent_is_finished() -> None:
    ctx, clock, table, recorder, runner = setup()
    put(ctx, table, [item("a")])
    clock.advance(STREAM_SHARD_ROLLOVER_SECONDS + 1)
    put(ctx, table, [item("b")])  # the shard rolled over: b is in its child
    shards = ctx.shards.of(table.table_id).shards
    assert len(shards) == 2 and shards[1].parent == shards[0].number
    assert step(runner)
    assert recorder.calls == [["a"]]  # the child waits
    assert step(runner)  # the parent is read to its end: finished
    assert recorder.calls == [["a"]]
    assert step(runner)
    assert recorder.calls == [["a"], ["b"]]
    parent, child = runner.view()["shards"]
    assert parent["finished"] and not parent["open"] and child["parent_shard_id"] == parent["shard_id"]


def test_an_overwrite_that_left_the_item_as_it_was_is_not_delivered() -> None:
    ctx, _, table, recorder, runner = setup()
    put(ctx, table, [{"pk": {"S": "a"}, "n": {"N": "1"}}])
    put(ctx, table, [{"n": {"N": "1.00"}, "pk": {"S": "a"}}])  # other bytes, the same item: logged, not shown
    put(ctx, table, [{"pk": {"S": "b"}}])
    drain(runner)
    assert recorder.calls == [["a", "b"]]


def test_a_parent_shard_is_finished_only_once_the_index_of_the_log_reaches_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx, clock, table, _, _ = setup()
    other = create(ctx, "other", 5, 5, stream=StreamSpec(True, "KEYS_ONLY", "2026-01-01T00:00:00.000"))
    put(ctx, other, [item(f"o{i}") for i in range(12)])  # first in the log: the first reads find none of ours
    put(ctx, table, [item(f"a{i}") for i in range(12)])
    clock.advance(STREAM_SHARD_ROLLOVER_SECONDS + 1)
    put(ctx, table, [item("b")])  # the shard rolled over: b is in its child
    monkeypatch.setattr(changelog, "INDEX_RECORDS_PER_READ", 5)  # a restarted server indexes 5 records a read
    again = restart(ctx)
    recorder = Recorder()
    runner = _runner(again, TriggerSpec(name="audit", table="orders", handler=recorder, batch_size=100))
    drain(runner)
    delivered = [key for call in recorder.calls for key in call]
    assert delivered == [f"a{i}" for i in range(12)] + ["b"]


def test_the_checkpoint_survives_a_restart() -> None:
    ctx, _, table, recorder, runner = setup(batch_size=1)
    put(ctx, table, [item("a"), item("b")])
    assert step(runner)
    again = restart(ctx)
    second = Recorder()
    runner2 = _runner(again, TriggerSpec(name="audit", table="orders", handler=second, batch_size=1))
    drain(runner2)
    assert recorder.calls == [["a"]] and second.calls == [["b"]]


def test_a_batch_delivered_but_not_checkpointed_is_delivered_again() -> None:
    ctx, _, table, _, _ = setup()
    seen: list[list[str]] = []

    async def hang(event: dict[str, Any]) -> None:
        seen.append([r["dynamodb"]["Keys"]["pk"]["S"] for r in event["Records"]])
        await asyncio.Event().wait()  # the process dies while the handler works

    put(ctx, table, [item("a")])
    runner = _runner(ctx, TriggerSpec(name="audit", table="orders", handler=hang))

    async def die_mid_batch() -> None:
        task = asyncio.ensure_future(runner.step())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(die_mid_batch())
    second = Recorder()
    drain(_runner(restart(ctx), TriggerSpec(name="audit", table="orders", handler=second)))
    assert seen == [["a"]] and second.calls == [["a"]]


def test_no_stream_means_nothing_to_do() -> None:
    ctx, _ = make_ctx()
    create(ctx, "plain")
    recorder = Recorder()
    runner = _runner(ctx, TriggerSpec(name="x", table="plain", handler=recorder))
    assert not step(runner)
    missing = _runner(ctx, TriggerSpec(name="y", table="absent", handler=recorder))
    assert not step(missing)
    assert missing.view()["shards"] == []


def test_every_shard_of_a_table_is_delivered_each_change_once_in_order_per_item() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, "wide", stream=StreamSpec(True, "NEW_IMAGE", "2026-01-01T00:00:00.000"))  # on demand
    ctx.capacity.state(table)
    recorder = Recorder()
    runner = _runner(ctx, TriggerSpec(name="wide", table="wide", handler=recorder, batch_size=3))
    for round_ in range(3):
        put(ctx, table, [item(f"k{i}", n=str(round_)) for i in range(20)])
    assert len(ctx.shards.of(table.table_id).shards) > 1
    drain(runner)
    delivered = [k for call in recorder.calls for k in call]
    assert sorted(delivered) == sorted(f"k{i}" for i in range(20) for _ in range(3))
    assert len(runner.view()["shards"]) == len(ctx.shards.of(table.table_id).shards)
