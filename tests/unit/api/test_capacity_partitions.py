"""The partition map's worked examples through UpdateTable, as a client changes a table's throughput. Handlers
run through ``dispatch.bind`` on an in-memory store with a ManualClock."""

from __future__ import annotations

from typing import Any

from dynastore.app import build_context
from dynastore.config import Config
from dynastore.engine.context import Context
from dynastore.protocol import dispatch
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock


def make_ctx(**config: Any) -> tuple[Context, dict[str, Any]]:
    clock = ManualClock()
    cfg = Config(in_memory=True, clock=clock, **config)
    kv = MemoryKV()
    ctx = build_context(cfg, kv, Catalog.load(kv, cfg))
    return ctx, dispatch.bind(ctx)


def call(ops: dict[str, Any], op: str, **body: Any) -> Any:
    return ops[op].run(body)


def create(ops: dict[str, Any], name: str, read: int, write: int, **extra: Any) -> None:
    call(
        ops,
        "CreateTable",
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        **extra,
    )


def view(ctx: Context, name: str) -> list[tuple[float, float]]:
    st = ctx.capacity.find(name)
    return st.base.pmap.shares(st.base.read_units, st.base.write_units)


def test_api_update_table_to_8000_rcu_doubles() -> None:
    ctx, ops = make_ctx()
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
    ctx, ops = make_ctx()
    create(ops, "bulk", 1, 11000)
    assert [w for _, w in view(ctx, "bulk")] == [1000.0] * 11
    call(
        ops, "UpdateTable", TableName="bulk", ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 200}
    )
    assert len(view(ctx, "bulk")) == 11
    assert all(abs(w - 200 / 11) < 1e-9 for _, w in view(ctx, "bulk"))
