"""The replicator of global tables: a change log consumer that stamps versions and ships each region's changes to
the other regions of its tables' replica sets (docs/design.md "Global tables")."""

from __future__ import annotations

from typing import Any

from dynastore.engine.changelog import KEYS_ONLY, NOT_FOLLOWED, ChangeRecord
from dynastore.engine.context import Context
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.global_tables.links import LinkFactory
from dynastore.global_tables.replicas import is_global
from dynastore.model.namespace import Origin
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.kv import WriteTxn

__all__ = ["CONSUMER_NAME", "GlobalReplicator"]

CONSUMER_NAME = "global-tables"


class GlobalReplicator:
    """A change log ``Consumer`` and ``Versioner`` (engine/changelog.py), and the background shipping."""

    def __init__(self, ctx: Context, links: LinkFactory, clock: HybridClock) -> None:
        self.name = CONSUMER_NAME
        self._ctx = ctx
        self.links = links
        self.clock = clock

    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.consumer_record_key(self.name)

    def need(self, table: TableDef) -> int:
        return KEYS_ONLY if is_global(table) else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        raise NotImplementedError

    def stamp(self, txn: WriteTxn, table: TableDef, key: bytes, event: int, origin: Origin | None) -> None:
        raise NotImplementedError

    async def step(self) -> bool:
        """One round of shipping, seeding and replica-set changes; True when it moved something."""
        raise NotImplementedError

    def view(self) -> list[dict[str, Any]]:
        """Per (table, source region, target region): replication latency (last, p50, p99 in ms) and pending."""
        raise NotImplementedError
