"""Typed tables for engine tests: a dynastore on an in-memory store, and tables built as TableDefs (no api
handler, no wire dicts), each with a partition key ``pk`` (S) and a sort key ``sk`` (N)."""

from __future__ import annotations

from typing import Any

from dynastore.app import build_context
from dynastore.config import Config
from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.model.table_schema import (
    BillingMode,
    IndexDef,
    KeyAttr,
    KeySchema,
    Projection,
    ProvisionedThroughput,
    TableDef,
)
from dynastore.model.values import Item
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

PK = KeyAttr("pk", "S")
SK = KeyAttr("sk", "N")


def make_context(**config: Any) -> Context:
    """A dynastore on an in-memory store, its clock standing still (bucket contents stay exact)."""
    cfg = Config(in_memory=True, clock=ManualClock(), partition_max_rcu=60, partition_max_wcu=20, **config)
    kv = MemoryKV()
    return build_context(cfg, kv, Catalog.load(kv, cfg))


def gsi(ctx: Context, name: str, hash_key: KeyAttr, *, read: int | None = None) -> IndexDef:
    """A GSI of partition key ``hash_key`` and sort key ``sk``, projecting every attribute (provisioned at
    ``read`` RCU when given)."""
    throughput = None if read is None else ProvisionedThroughput(read, 20)
    return IndexDef(name, "GSI", KeySchema(hash_key, SK), Projection("ALL"), ctx.catalog.next_table_id(), throughput)


def make_table(
    ctx: Context,
    name: str = "t",
    *,
    read: int | None = None,
    gsis: tuple[IndexDef, ...] = (),
    spend_burst: bool = False,
) -> TableDef:
    """An ACTIVE table, on demand or provisioned at ``read`` RCU and 20 WCU (one partition up to 3 RCU).
    ``spend_burst`` leaves each partition one second of its share and no burst credit, so a read past that is
    throttled."""
    definitions = {PK, SK, *(attr for index in gsis for attr in index.key_schema.attributes)}
    table = TableDef(
        name=name,
        table_id=ctx.catalog.next_table_id(),
        uuid=f"uuid-{name}",
        key_schema=KeySchema(PK, SK),
        attribute_definitions=tuple(sorted(definitions, key=lambda attr: attr.name)),
        created_at=ctx.clock.now(),
        billing_mode=BillingMode.PAY_PER_REQUEST if read is None else BillingMode.PROVISIONED,
        throughput=ProvisionedThroughput(0, 0) if read is None else ProvisionedThroughput(read, 20),
        gsis=gsis,
    )
    ctx.catalog.create(table)
    table = ctx.catalog.get_active(name)
    if spend_burst:
        ctx.capacity.spend_burst(ctx.capacity.state(table))
    return table


def item(pk: str, sk: int, **extra: str) -> Item:
    out: Item = {"pk": {"S": pk}, "sk": {"N": str(sk)}}
    for attr, value in extra.items():
        out[attr] = {"S": value}
    return out


def put(ctx: Context, table: TableDef, items: list[Item]) -> None:
    """Store ``items`` as BatchWriteItem does (no admission: writes take no read capacity)."""
    writes.execute_batch(ctx, [(table, storage_key(table, it), writes.PutPlan(it)) for it in items])


def read_consumed(ctx: Context, table: TableDef) -> float:
    """The read units the table's partitions took."""
    return sum(lane.consumed for lane in ctx.capacity.state(table).base.reads)
