"""The partition map's worked examples through UpdateTable, as a client changes a table's throughput. Handlers
run through ``dispatch.bind`` on an in-memory store with a ManualClock."""

from __future__ import annotations

from dynastore.engine.context import Context
from tests.unit.api.operations import call, create, make_ctx


def view(ctx: Context, name: str) -> list[tuple[float, float]]:
    st = ctx.capacity.find(name)
    return st.base.pmap.shares(st.base.read_units, st.base.write_units)


def test_api_update_table_to_8000_rcu_doubles() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "seed", 5000, 2000)
    assert view(ctx, "seed") == [(1250.0, 500.0)] * 4
    call(
        ops,
        "UpdateTable",
        TableName="seed",
        ProvisionedThroughput={"ReadCapacityUnits": 8000, "WriteCapacityUnits": 2000},
    )
    assert view(ctx, "seed") == [(1000.0, 250.0)] * 8


def test_api_bulk_load_then_200_wcu() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "bulk", 1, 11000)
    assert [w for _, w in view(ctx, "bulk")] == [1000.0] * 11
    call(
        ops, "UpdateTable", TableName="bulk", ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 200}
    )
    assert len(view(ctx, "bulk")) == 11
    assert all(abs(w - 200 / 11) < 1e-9 for _, w in view(ctx, "bulk"))
