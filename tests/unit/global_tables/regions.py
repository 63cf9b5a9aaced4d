"""Two regions of one in-memory dynastore (us-east-1, the default namespace, and us-west-2) with the replicator of
global tables registered, its clock standing still until advanced (tests/unit/engine/tables.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from dynastore.app import build_replicator
from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.global_tables.replicator import GlobalReplicator
from dynastore.model.table_schema import StreamSpec, TableDef
from dynastore.model.values import Item
from dynastore.storage.itemcodec import decode_item
from dynastore.util.clock import ManualClock
from tests.unit.engine.tables import make_ctx

__all__ = ["EAST", "STREAM", "WEST", "Regions", "get", "remove", "settle", "write"]

EAST, WEST = "us-east-1", "us-west-2"
STREAM = StreamSpec(True, "NEW_AND_OLD_IMAGES", "2023-11-14T22:13:20.000")


class Regions:
    def __init__(self, **config: Any) -> None:
        self.clock: ManualClock
        self.east, self.clock = make_ctx(**config)
        self.west = self.east.in_namespace(self.east.namespace.account_id, WEST)
        self.replicator: GlobalReplicator = build_replicator(self.east, self.east.config)


def settle(replicator: GlobalReplicator, rounds: int = 20) -> int:
    """Run the replicator's rounds until one moves nothing; how many moved something."""
    moved = 0
    for _ in range(rounds):
        if not asyncio.run(replicator.step()):
            return moved
        moved += 1
    return moved


def write(ctx: Context, table: TableDef, item: Item) -> None:
    """A PutItem's write, without admission."""
    writes.execute(ctx, table, storage_key(table, item), writes.PutPlan(item))


def remove(ctx: Context, table: TableDef, pk: str) -> None:
    writes.execute(ctx, table, storage_key(table, {"pk": {"S": pk}}), writes.DeletePlan())


def get(ctx: Context, table_name: str, pk: str) -> Item | None:
    table = ctx.catalog.get(table_name)
    with ctx.kv.read() as txn:
        raw = txn.get(storage_key(table, {"pk": {"S": pk}}))
    return None if raw is None else decode_item(raw)
