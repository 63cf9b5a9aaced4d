"""engine.writes: pure plans and one storage transaction per write."""

from __future__ import annotations

import pytest

from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext
from dynastore.model.table_schema import TableDef
from dynastore.storage.itemcodec import decode_item
from tests.unit.engine import tables


@pytest.fixture
def ctx() -> Context:
    context, _ = tables.make_ctx()
    return context


@pytest.fixture
def table(ctx: Context) -> TableDef:
    return tables.create(ctx, "t")  # partition key pk (S), on demand


def stored(ctx: Context, table: TableDef, pk: str) -> object:
    with ctx.kv.read() as txn:
        raw = txn.get(storage_key(table, {"pk": {"S": pk}}))
    return None if raw is None else decode_item(raw)


def test_plans_are_pure() -> None:
    item = {"pk": {"S": "a"}, "v": {"N": "1"}}
    plan = writes.PutPlan(item)
    assert plan.apply(None).new is item
    assert plan.apply({"pk": {"S": "a"}}).new is item
    old = {"pk": {"S": "a"}, "n": {"N": "1"}}
    exprs = ExpressionContext(None, {":one": {"N": "1"}})
    update = writes.UpdatePlan({"pk": {"S": "a"}}, exprs.update("SET n = n + :one"))
    assert update.apply(old).new == {"pk": {"S": "a"}, "n": {"N": "2"}}
    assert old == {"pk": {"S": "a"}, "n": {"N": "1"}}


def test_condition_failure_writes_nothing_and_commits_nothing(ctx: Context, table: TableDef) -> None:
    key = storage_key(table, {"pk": {"S": "a"}})
    writes.execute(ctx, table, key, writes.PutPlan({"pk": {"S": "a"}, "v": {"N": "1"}}))
    seq = ctx.kv.commit_seq
    condition = ExpressionContext(None, None).condition("ConditionExpression", "attribute_not_exists(pk)")
    with pytest.raises(writes.ConditionFailedError) as info:
        writes.execute(ctx, table, key, writes.PutPlan({"pk": {"S": "a"}, "v": {"N": "2"}}, condition))
    assert info.value.old == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert ctx.kv.commit_seq == seq
    assert stored(ctx, table, "a") == {"pk": {"S": "a"}, "v": {"N": "1"}}


def test_results_carry_sizes_and_stats_follow(ctx: Context, table: TableDef) -> None:
    key = storage_key(table, {"pk": {"S": "a"}})
    result = writes.execute(ctx, table, key, writes.PutPlan({"pk": {"S": "a"}, "v": {"S": "xyz"}}))
    assert (result.old, result.old_size, result.new_size) == (None, 0, 7)
    assert ctx.catalog.stats("t") == (1, 7)
    result = writes.execute(ctx, table, key, writes.DeletePlan())
    assert (result.old_size, result.new) == (7, None)
    assert ctx.catalog.stats("t") == (0, 0)
    assert stored(ctx, table, "a") is None


def test_batch_is_one_transaction(ctx: Context, table: TableDef) -> None:
    seq = ctx.kv.commit_seq
    planned: list[tuple[TableDef, bytes, writes.Plan]] = [
        (table, storage_key(table, {"pk": {"S": name}}), writes.PutPlan({"pk": {"S": name}})) for name in "abc"
    ]
    writes.execute_batch(ctx, planned)
    assert ctx.kv.commit_seq == seq + 1
    assert [stored(ctx, table, name) for name in "abc"] == [{"pk": {"S": name}} for name in "abc"]


def test_update_over_the_size_limit_aborts(ctx: Context, table: TableDef) -> None:
    key = storage_key(table, {"pk": {"S": "big"}})
    exprs = ExpressionContext(None, {":v": {"S": "x" * 409_600}})
    with pytest.raises(ValidationException) as info:
        writes.execute(ctx, table, key, writes.UpdatePlan({"pk": {"S": "big"}}, exprs.update("SET v = :v")))
    assert info.value.message == "Item size to update has exceeded the maximum allowed size"
    assert stored(ctx, table, "big") is None
