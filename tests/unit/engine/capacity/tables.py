"""Tables for the capacity tests, built as typed definitions (model/table_schema.py) and stored through the
engine (engine/tables.py), with a context on an in-memory store and a ManualClock."""

from __future__ import annotations

import uuid
from typing import Any

from dynastore.app import build_context
from dynastore.config import Config
from dynastore.engine import tables
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
    TableDef,
)
from dynastore.model.values import Item
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

T0 = 1_700_000_000.0
PK = KeyAttr("pk", "S")


def make_ctx(now: float = T0, **config: Any) -> tuple[Context, ManualClock]:
    clock = ManualClock(now)
    cfg = Config(in_memory=True, clock=clock, **config)
    kv = MemoryKV()
    return build_context(cfg, kv, Catalog.load(kv, cfg)), clock


def gsi(ctx: Context, name: str, hash_key: KeyAttr, read: int | None = None, write: int | None = None) -> IndexDef:
    """A KEYS_ONLY GSI on ``hash_key`` (provisioned when ``read`` and ``write`` are given)."""
    throughput = None if read is None or write is None else ProvisionedThroughput(read, write)
    return IndexDef(
        name=name,
        kind="GSI",
        key_schema=KeySchema(hash_key),
        projection=Projection("KEYS_ONLY"),
        index_id=ctx.catalog.next_table_id(),
        throughput=throughput,
    )


def create(
    ctx: Context,
    name: str,
    read: int | None = None,
    write: int | None = None,
    *,
    hash_key: KeyAttr = PK,
    range_key: KeyAttr | None = None,
    more_attributes: tuple[KeyAttr, ...] = (),
    gsis: tuple[IndexDef, ...] = (),
    on_demand: OnDemandThroughput | None = None,
    tags: tuple[tuple[str, str], ...] = (),
) -> TableDef:
    """Store an ACTIVE table: provisioned at ``read``/``write`` units, on-demand when they are None."""
    provisioned = read is not None and write is not None
    keys = (hash_key,) if range_key is None else (hash_key, range_key)
    td = TableDef(
        name=name,
        table_id=ctx.catalog.next_table_id(),
        uuid=str(uuid.uuid4()),
        key_schema=KeySchema(hash_key, range_key),
        attribute_definitions=keys + more_attributes,
        created_at=ctx.clock.now(),
        billing_mode=BillingMode.PROVISIONED if provisioned else BillingMode.PAY_PER_REQUEST,
        billing_mode_explicit=not provisioned,
        throughput=ProvisionedThroughput(read or 0, write or 0),
        on_demand=on_demand,
        gsis=gsis,
        tags=tags,
    )
    return tables.create(ctx, td)


def key_of(td: TableDef, value: str) -> bytes:
    """The storage key of the item whose partition key is the string ``value``."""
    item: Item = {td.key_schema.hash_key.name: {"S": value}}
    return storage_key(td, item)
