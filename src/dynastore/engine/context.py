"""What every engine call is given: the components of one dynastore, built by its composition root (app.py).

Each component is a typed field; nothing below keeps state of its own at module level, so several dynastores
(tests run many) live side by side in one process.
"""

from __future__ import annotations

from dynastore.config import Config
from dynastore.engine.capacity.state import Capacity
from dynastore.engine.changelog import ChangeLog
from dynastore.engine.index_state import IndexState
from dynastore.engine.key_spaces import TableSpaces
from dynastore.engine.stream_shards import StreamShards
from dynastore.engine.transaction_locks import TransactionLocks
from dynastore.expressions.cache import ExpressionCache, KeyTemplates
from dynastore.partiql.cache import StatementCache
from dynastore.storage.catalog import Catalog
from dynastore.storage.kv import KV
from dynastore.util.clock import Clock

__all__ = ["Context"]


class Context:
    __slots__ = (
        "config",
        "kv",
        "catalog",
        "capacity",
        "indexes",
        "changelog",
        "shards",
        "locks",
        "ttl_cursors",
        "expressions",
        "key_templates",
        "table_spaces",
        "statements",
    )

    def __init__(
        self,
        config: Config,
        kv: KV,
        catalog: Catalog,
        capacity: Capacity,
        indexes: IndexState,
        changelog: ChangeLog,
        locks: TransactionLocks,
        expressions: ExpressionCache,
        key_templates: KeyTemplates,
    ) -> None:
        self.config = config  # replaced once the listening port is known (DescribeEndpoints reports it)
        self.kv = kv  # the store: every read and write is a transaction of it
        self.catalog = catalog  # table definitions and statistics
        self.capacity = capacity  # partitions, buckets, admission, Contributor Insights
        self.indexes = indexes  # item-collection limit and backfill pacing
        self.changelog = changelog  # every item change of tables with a stream or GSIs (GSI propagation, streams)
        self.shards = StreamShards(kv, capacity)  # the stream shards of each table
        self.locks = locks  # keys of transactions whose commit is not final yet
        self.ttl_cursors: dict[int, bytes] = {}  # where each table's TTL sweep goes on (table id -> storage key)
        self.expressions = expressions  # parsed expressions, shared by all requests
        self.key_templates = key_templates  # remembered Query key-condition shapes
        self.table_spaces = TableSpaces()  # the key space of each table definition in use
        self.statements = StatementCache()  # parsed PartiQL statements, shared by all requests

    @property
    def clock(self) -> Clock:
        return self.config.clock
