"""Property: after any sequence of writes (Put, Update, Delete, batches, transactions) and once propagation
has settled, every index equals the projection of the table computed from scratch, and its statistics match."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore.engine import transactions, writes
from dynastore.engine.keys import storage_key
from dynastore.expressions import ExpressionContext
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from tests.unit.engine.test_indexes import create_indexed, expected_index, index_items, make_ctx, settle

PKS = ["a", "b", "c"]
SKS = ["1", "2", "3"]
small = st.sampled_from(["G", "H", "Z", ""])
numbers = st.sampled_from(["1", "2", "-3.5"])


@st.composite
def items(draw: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"pk": {"S": draw(st.sampled_from(PKS))}, "sk": {"S": draw(st.sampled_from(SKS))}}
    for name, values in (("n", numbers), ("g", small), ("h", small), ("x", small)):
        if draw(st.booleans()):
            item[name] = {"N": draw(values)} if name == "n" else {"S": draw(values) or "v"}
    return item


writes_ = st.one_of(
    st.tuples(st.just("put"), items()),
    st.tuples(st.just("delete"), items()),
    st.tuples(st.just("update"), items(), st.sampled_from(["SET g = :v", "REMOVE g", "SET n = :n", "SET x = :v"])),
    st.tuples(st.just("batch"), st.lists(items(), min_size=1, max_size=4)),
    st.tuples(st.just("transact"), st.lists(items(), min_size=1, max_size=3)),
)


def _key(item: dict[str, Any]) -> dict[str, Any]:
    return {"pk": item["pk"], "sk": item["sk"]}


def _run(ctx: Any, table: TableDef, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "put":
        writes.execute(ctx, table, storage_key(table, op[1]), writes.PutPlan(op[1], size=item_size(op[1])))
    elif kind == "delete":
        writes.execute(ctx, table, storage_key(table, op[1]), writes.DeletePlan())
    elif kind == "update":
        values = {":v": {"S": "U"}} if ":v" in op[2] else ({":n": {"N": "7"}} if ":n" in op[2] else None)
        exprs = ExpressionContext(None, values)
        update = exprs.update(op[2])
        key = _key(op[1])
        writes.execute(ctx, table, storage_key(table, key), writes.UpdatePlan(key, update))
    else:
        unique = {storage_key(table, i): i for i in op[1]}
        if kind == "batch":
            writes.execute_batch(ctx, [(table, k, writes.PutPlan(i)) for k, i in unique.items()])
        else:
            actions = [transactions.WriteAction(table, k, writes.PutPlan(i)) for k, i in unique.items()]
            transactions.execute_write(ctx, actions)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(writes_, min_size=1, max_size=25), st.lists(st.booleans(), min_size=25, max_size=25))
def test_indexes_equal_the_table_projection(ops: list[tuple[Any, ...]], propagate_between: list[bool]) -> None:
    ctx = make_ctx()
    table = create_indexed(ctx)
    for op, propagate in zip(ops, propagate_between, strict=False):
        _run(ctx, table, op)  # every generated write is valid: a refusal would fail the property
        if propagate:
            settle(ctx)
    settle(ctx)
    for index in table.lsis + table.gsis:
        entries = index_items(ctx, index)
        assert entries == expected_index(ctx, table, index)
        count, size = ctx.catalog.index_stats("t", index.index_id)
        assert count == len(entries)
        assert size == sum(item_size(e) for e in entries)
