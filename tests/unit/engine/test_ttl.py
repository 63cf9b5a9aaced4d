"""The TTL sweep on a ManualClock: which items expire, chunked passes, the partition view kept right."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.engine import ttl, writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TtlSpec
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item
from tests.unit.engine import tables

NOW = int(tables.T0)  # the ManualClock's start


def table(ctx: Context, name: str = "ttl", *, enabled: bool = True) -> None:
    """An on-demand table of partition key ``pk`` (S), its time to live on attribute ``exp`` when ``enabled``."""
    tables.create(ctx, name, ttl=TtlSpec("exp", True) if enabled else None)


def put(ctx: Context, pk: str, exp: dict[str, Any] | None, name: str = "ttl") -> None:
    """Write as PutItem does (admitted and settled, so the partition view counts the item)."""
    item: dict[str, Any] = {"pk": {"S": pk}} | ({"exp": exp} if exp is not None else {})
    td = ctx.catalog.get(name)
    writes.perform(ctx, td, storage_key(td, item), writes.PutPlan(item, size=item_size(item)))


def keys(ctx: Context, name: str = "ttl") -> set[str]:
    prefix = keyspace.table_prefix(ctx.catalog.get(name).table_id)
    with ctx.kv.read() as txn:
        return {decode_item(raw)["pk"]["S"] for _, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix))}


def test_only_number_times_in_the_past_five_years_expire() -> None:
    ctx, clock = tables.make_ctx()
    table(ctx)
    put(ctx, "past", {"N": str(NOW - 1)})
    put(ctx, "now", {"N": str(NOW)})
    put(ctx, "fraction", {"N": f"{NOW - 1}.5"})
    put(ctx, "future", {"N": str(NOW + 60)})
    put(ctx, "string", {"S": str(NOW - 1)})
    put(ctx, "set", {"NS": [str(NOW - 1)]})
    put(ctx, "ancient", {"N": str(NOW - 6 * 365 * 24 * 3600)})
    put(ctx, "missing", None)
    assert ttl.sweep(ctx) is False
    assert keys(ctx) == {"future", "string", "set", "ancient", "missing"}
    clock.advance(60)
    ttl.sweep(ctx)
    assert keys(ctx) == {"string", "set", "ancient", "missing"}
    assert ctx.catalog.stats("ttl")[0] == 4
    st = ctx.capacity.find("ttl")
    assert sum(p.items for p in st.base.pmap.partitions) == 4


def test_disabled_or_absent_ttl_deletes_nothing() -> None:
    ctx, _ = tables.make_ctx()
    table(ctx, enabled=False)
    put(ctx, "past", {"N": str(NOW - 1)})
    ttl.sweep(ctx)
    assert keys(ctx) == {"past"}


def test_a_large_table_is_swept_a_chunk_per_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ttl, "SWEEP_CHUNK", 3)
    ctx, _ = tables.make_ctx()
    table(ctx)
    for i in range(7):
        put(ctx, f"k{i}", {"N": str(NOW - 1)})
    passes = 1
    while ttl.sweep(ctx):
        passes += 1
    assert keys(ctx) == set()
    assert passes == 3  # 3 + 3 + 1 items examined
