"""Property: for a random workload of puts, updates and deletes spread over days of a ManualClock, with the
archive's maintenance and the log's trimming running between them, the table read at any instant of its
restorable window (engine/point_in_time.items_at: the newest base plus the log replayed) holds exactly what a
model replaying the same writes up to that instant holds. The restore built on it is checked the same way end
to end (tests/e2e/test_point_in_time.py)."""

from __future__ import annotations

import asyncio
import bisect
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dynastore.engine import continuous_backups, retention
from dynastore.engine.point_in_time import items_at, restorable_window
from dynastore.storage.itemcodec import decode_item
from tests.unit.api.operations import call, create, make_ctx
from tests.unit.engine.pitr_stand_in import use_memory_images

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
HOUR = 3600.0
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), KEYS, st.integers(0, 99)),
        st.tuples(st.just("update"), KEYS, st.integers(0, 99)),
        st.tuples(st.just("delete"), KEYS, st.just(0)),
        st.tuples(st.just("advance"), st.just(""), st.integers(0, 14)),  # hours
        st.tuples(st.just("maintain"), st.just(""), st.just(0)),
    ),
    min_size=1,
    max_size=60,
)

Model = dict[str, dict[str, Any]]


def apply(ops: dict[str, Any], model: Model, op: str, key: str, value: int) -> None:
    if op == "put":
        item = {"pk": {"S": key}, "v": {"N": str(value)}}
        call(ops, "PutItem", TableName="tbl", Item=item)
        model[key] = item
    elif op == "update":
        call(
            ops,
            "UpdateItem",
            TableName="tbl",
            Key={"pk": {"S": key}},
            UpdateExpression="SET w = :w",
            ExpressionAttributeValues={":w": {"N": str(value)}},
        )
        model[key] = {**model.get(key, {"pk": {"S": key}}), "w": {"N": str(value)}}
    else:
        call(ops, "DeleteItem", TableName="tbl", Key={"pk": {"S": key}})
        model.pop(key, None)


def workload(ops: dict[str, Any], ctx: Any, clock: Any, steps: list[Any]) -> tuple[list[float], list[Model]]:
    """Run ``steps`` on table ``tbl`` (recovery on, a period of one day); the model's state after each write,
    with the time of the write."""
    create(ops, "tbl", 5, 5)
    model: Model = {}
    apply(ops, model, "put", "a", 0)  # before recovery: in the first base
    spec = {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 1}
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec)
    times, states = [clock.now()], [dict(model)]
    for op, key, value in steps:
        if op == "advance":
            clock.advance(value * HOUR)
        elif op == "maintain":  # bases due, trimming of bases and of the log
            asyncio.run(continuous_backups.take_due_bases(ctx))
            retention.trim(ctx)
        else:
            apply(ops, model, op, key, value)
            times.append(clock.now())
            states.append(dict(model))
    asyncio.run(continuous_backups.take_due_bases(ctx))  # at least the first base
    return times, states


def decoded(response: Any) -> Any:
    """An operation's answer: some come as their JSON bytes already."""
    return json.loads(response) if isinstance(response, bytes) else response


def state_at(times: list[float], states: list[Model], instant: float) -> Model:
    return states[bisect.bisect_right(times, instant) - 1]


@settings(max_examples=40, deadline=None)
@given(steps=STEPS, data=st.data())
def test_any_instant_of_the_window_reads_as_the_model_replayed_to_it(steps: list[Any], data: Any) -> None:
    ctx, ops, clock = make_ctx()
    use_memory_images(ctx)
    times, states = workload(ops, ctx, clock, steps)
    table = ctx.catalog.get("tbl")
    window = restorable_window(ctx, table)
    assert window is not None
    instants = [window[0], window[1], data.draw(st.floats(window[0], window[1]))]
    for instant in instants:
        restored = {i["pk"]["S"]: i for i in map(decode_item, items_at(ctx, table, instant))}
        assert restored == state_at(times, states, instant), f"at {instant - times[0]} s"


@settings(max_examples=15, deadline=None)
@given(steps=STEPS, data=st.data())
def test_a_restore_to_a_random_instant_holds_the_model_replayed_to_it(steps: list[Any], data: Any) -> None:
    """The same through RestoreTableToPointInTime with the server's own bases (engine/snapshots.py images, held in
    memory): the restored table, once ACTIVE, scans as the model at that instant."""
    ctx, ops, clock = make_ctx()
    times, states = workload(ops, ctx, clock, steps)
    window = restorable_window(ctx, ctx.catalog.get("tbl"))
    assert window is not None
    instant = data.draw(st.floats(window[0], window[1]))

    async def restore() -> None:
        call(ops, "RestoreTableToPointInTime", SourceTableName="tbl", TargetTableName="copy", RestoreDateTime=instant)
        await ctx.recovery.wait()

    asyncio.run(restore())
    described = decoded(call(ops, "DescribeTable", TableName="copy"))["Table"]
    assert described["TableStatus"] == "ACTIVE"
    assert described["RestoreSummary"]["RestoreDateTime"] == instant
    scanned = decoded(call(ops, "Scan", TableName="copy"))["Items"]
    assert {item["pk"]["S"]: item for item in scanned} == state_at(times, states, instant)
