"""Typed tables for engine tests: a dynastore on an in-memory store with a ManualClock, and tables built as
TableDefs (model/table_schema.py) and stored through the engine (``engine.tables.create``), never through an api
handler or a wire dict.

``create`` builds any table: a key schema of any attributes and types, LSIs and GSIs of any projection,
provisioned or on-demand billing, an on-demand maximum, tags, a TTL spec and a stream spec. Attribute
definitions are derived from every key the table and its indexes use (plus ``more_attributes``)."""

from __future__ import annotations

import uuid
from typing import Any

from dynastore.app import build_context
from dynastore.config import Config
from dynastore.engine import tables, writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.model.table_schema import (
    BillingMode,
    IndexDef,
    KeyAttr,
    KeySchema,
    OnDemandThroughput,
    Projection,
    ProvisionedThroughput,
    StreamSpec,
    TableDef,
    TtlSpec,
)
from dynastore.model.values import Item
from dynastore.storage.catalog import Catalog
from dynastore.storage.kv import KV
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

__all__ = [
    "PK",
    "SK",
    "T0",
    "create",
    "gsi",
    "item",
    "key_of",
    "lsi",
    "make_ctx",
    "put",
    "read_consumed",
    "restart",
    "spend_burst",
]

T0 = 1_700_000_000.0
PK = KeyAttr("pk", "S")
SK = KeyAttr("sk", "N")


def make_ctx(kv: KV | None = None, *, now: float = T0, **config: Any) -> tuple[Context, ManualClock]:
    """A dynastore on ``kv`` (a new in-memory store when None; pass the same one to "restart" on it), its clock
    standing still at ``now`` until advanced; ``config`` overrides Config's defaults (``in_memory`` follows the
    store)."""
    clock = ManualClock(now)
    store = kv if kv is not None else MemoryKV()
    cfg = Config(clock=clock, **{"in_memory": isinstance(store, MemoryKV), **config})
    return build_context(cfg, store, Catalog.load(store, cfg)), clock


def restart(ctx: Context) -> Context:
    """A new dynastore on ``ctx``'s store and config (its clock where it stood), as after a restart."""
    return build_context(ctx.config, ctx.kv, Catalog.load(ctx.kv, ctx.config))


def gsi(
    ctx: Context,
    name: str,
    hash_key: KeyAttr | KeySchema,
    read: int | None = None,
    write: int | None = None,
    *,
    range_key: KeyAttr | None = None,
    projection: str = "KEYS_ONLY",
    non_key: tuple[str, ...] = (),
    on_demand: OnDemandThroughput | None = None,
) -> IndexDef:
    """A GSI on ``hash_key`` (or a whole KeySchema, for multi-attribute keys) and ``range_key``, projecting
    ``projection`` (``non_key`` for INCLUDE); provisioned when ``read`` and ``write`` are given."""
    schema = hash_key if isinstance(hash_key, KeySchema) else KeySchema(hash_key, range_key)
    throughput = None if read is None or write is None else ProvisionedThroughput(read, write)
    return IndexDef(
        name=name,
        kind="GSI",
        key_schema=schema,
        projection=Projection(projection, non_key),
        index_id=ctx.catalog.next_table_id(),
        throughput=throughput,
        on_demand=on_demand,
    )


def lsi(
    ctx: Context,
    name: str,
    range_key: KeyAttr,
    *,
    hash_key: KeyAttr = PK,
    projection: str = "KEYS_ONLY",
    non_key: tuple[str, ...] = (),
) -> IndexDef:
    """An LSI of the table's partition key ``hash_key`` and sort key ``range_key``."""
    return IndexDef(
        name=name,
        kind="LSI",
        key_schema=KeySchema(hash_key, range_key),
        projection=Projection(projection, non_key),
        index_id=ctx.catalog.next_table_id(),
    )


def create(
    ctx: Context,
    name: str = "t",
    read: int | None = None,
    write: int | None = None,
    *,
    hash_key: KeyAttr = PK,
    range_key: KeyAttr | None = None,
    more_attributes: tuple[KeyAttr, ...] = (),
    lsis: tuple[IndexDef, ...] = (),
    gsis: tuple[IndexDef, ...] = (),
    on_demand: OnDemandThroughput | None = None,
    tags: tuple[tuple[str, str], ...] = (),
    ttl: TtlSpec | None = None,
    stream: StreamSpec | None = None,
) -> TableDef:
    """Store an ACTIVE table: provisioned at ``read``/``write`` units, on demand when they are None."""
    provisioned = read is not None and write is not None
    schema = KeySchema(hash_key, range_key)
    used = schema.attributes + tuple(a for index in lsis + gsis for a in index.key_schema.attributes)
    definitions = tuple(dict.fromkeys(used + more_attributes))  # each once, in first-use order
    table = TableDef(
        name=name,
        table_id=ctx.catalog.next_table_id(),
        uuid=str(uuid.uuid4()),
        key_schema=schema,
        attribute_definitions=definitions,
        created_at=ctx.clock.now(),
        billing_mode=BillingMode.PROVISIONED if provisioned else BillingMode.PAY_PER_REQUEST,
        billing_mode_explicit=not provisioned,
        throughput=ProvisionedThroughput(read or 0, write or 0),
        on_demand=on_demand,
        lsis=lsis,
        gsis=gsis,
        tags=tags,
        ttl=ttl,
        stream=stream,
    )
    return tables.create(ctx, table)


def spend_burst(ctx: Context, table: TableDef) -> None:
    """Leave each of the table's partitions one second of its share and no burst credit, so a read past that
    is throttled."""
    ctx.capacity.spend_burst(ctx.capacity.state(table))


def item(pk: str, sk: int | None = None, **extra: str) -> Item:
    """An item of partition key ``pk`` (S), sort key ``sk`` (N) when given, and string attributes ``extra``."""
    out: Item = {"pk": {"S": pk}}
    if sk is not None:
        out["sk"] = {"N": str(sk)}
    for attr, value in extra.items():
        out[attr] = {"S": value}
    return out


def key_of(table: TableDef, value: str) -> bytes:
    """The storage key of the item whose (only) partition key is the string ``value``."""
    return storage_key(table, {table.key_schema.hash_key.name: {"S": value}})


def put(ctx: Context, table: TableDef, items: list[Item]) -> list[writes.WriteResult]:
    """Store ``items`` as BatchWriteItem does, without admission (no capacity is taken or checked)."""
    return writes.execute_batch(ctx, [(table, storage_key(table, it), writes.PutPlan(it)) for it in items])


def read_consumed(ctx: Context, table: TableDef) -> float:
    """The read units the table's partitions took."""
    return sum(lane.consumed for lane in ctx.capacity.state(table).base.reads)
