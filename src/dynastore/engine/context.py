"""What every engine call is given: the engine components of one dynastore, every one built by its composition
root (app.py) and passed in.

Each component is a typed field; nothing below keeps state of its own at module level, so several dynastores
(tests run many) live side by side in one process. Only the engine's: what requests use beside it (the parsed
PartiQL statements, the identity policies) are the request-side services of api/services.py.

Namespaces: tables live per account and region. The context the composition root builds is the default
namespace's (the config's account and region); ``in_namespace(account, region)`` gives another namespace's
context: the same components, except its ``catalog`` (that namespace's tables) and its ``config`` (whose
``account_id`` and ``region`` are the namespace's, so every ARN an operation builds names it). Engine and api
code takes whichever context it is given and never needs to know which namespace it is.

A namespace's context is kept while the namespace holds tables. A namespace without tables (a caller naming a
region it has not used yet) keeps nothing of its own in the store, so its context is only remembered among the
last ``EMPTY_NAMESPACES_REMEMBERED`` such namespaces: a request in one costs what a request in a namespace with
tables costs, and callers naming ever new regions cost a bounded amount of memory.
"""

from __future__ import annotations

import dataclasses

from dynastore.config import Config
from dynastore.engine.capacity.state import Capacity
from dynastore.engine.changelog import ChangeLog
from dynastore.engine.index_state import IndexState
from dynastore.engine.key_spaces import TableSpaces
from dynastore.engine.recovery_state import RecoveryState
from dynastore.engine.stream_shards import StreamShards
from dynastore.engine.transaction_locks import TransactionLocks
from dynastore.expressions.cache import ExpressionCache, KeyTemplates
from dynastore.storage.catalog import Catalog
from dynastore.storage.kv import KV
from dynastore.util.clock import Clock

__all__ = ["Context", "EMPTY_NAMESPACES_REMEMBERED"]

EMPTY_NAMESPACES_REMEMBERED = 64  # contexts of namespaces without tables kept for their next request (the last used)


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
        "recovery",
        "_namespaces",
        "_empty_namespaces",
    )

    def __init__(
        self,
        config: Config,
        kv: KV,
        catalog: Catalog,
        capacity: Capacity,
        indexes: IndexState,
        changelog: ChangeLog,
        shards: StreamShards,
        locks: TransactionLocks,
        ttl_cursors: dict[int, bytes],
        expressions: ExpressionCache,
        key_templates: KeyTemplates,
        table_spaces: TableSpaces,
        *,
        shares_with: Context | None = None,
        recovery: RecoveryState | None = None,
    ) -> None:
        """``shares_with``: another namespace's context, whose namespaces this context shares (None: this context
        is the default namespace's, the first one)."""
        self.config = config  # replaced once the listening port is known (DescribeEndpoints reports it)
        self.kv = kv  # the store: every read and write is a transaction of it
        self.catalog = catalog  # table definitions and statistics
        self.capacity = capacity  # partitions, buckets, admission, Contributor Insights
        self.indexes = indexes  # item-collection limit and backfill pacing
        self.changelog = changelog  # every item change of tables with a stream or GSIs (GSI propagation, streams)
        self.shards = shards  # the stream shards of each table
        self.locks = locks  # keys of transactions whose commit is not final yet
        self.ttl_cursors = ttl_cursors  # where each table's TTL sweep goes on (table id -> storage key)
        self.expressions = expressions  # parsed expressions, shared by all requests
        self.key_templates = key_templates  # remembered Query key-condition shapes
        self.table_spaces = table_spaces  # the key space of each table definition in use
        # backups' files and records, restores running (engine/recovery_state.py); shared by every namespace
        self.recovery = RecoveryState.in_memory() if recovery is None else recovery
        if shares_with is None:
            # every namespace's context made so far, shared by all of them (the default namespace's is this one)
            self._namespaces: dict[tuple[str, str], Context] = {catalog.namespace: self}
            # the contexts of the namespaces without tables used last, the most recent last (shared by all contexts)
            self._empty_namespaces: dict[tuple[str, str], Context] = {}
        else:
            self._namespaces = shares_with._namespaces
            self._empty_namespaces = shares_with._empty_namespaces

    @property
    def clock(self) -> Clock:
        return self.config.clock

    # ---- namespaces -------------------------------------------------------------------------------------------
    def in_namespace(self, account_id: str, region: str) -> Context:
        """The context of the tables of ``account_id`` in ``region``: remembered for good once the namespace has
        a table, until then among the last few namespaces without tables (see the module's docstring)."""
        found = self._namespaces.get((account_id, region))
        return self._without_tables(account_id, region) if found is None else found

    def namespaces(self) -> list[Context]:
        """The context of every namespace holding tables (the default one first): background work covers them."""
        return [self.in_namespace(*space.namespace) for space in self.catalog.namespaces()]

    def reconfigure(self, config: Config) -> None:
        """Replace the config of every namespace's context (the listening port became known)."""
        self._empty_namespaces.clear()  # made again, from the new config, when next used
        default = (config.account_id, config.region)
        for namespace, ctx in self._namespaces.items():
            ctx.config = (
                config
                if namespace == default
                else dataclasses.replace(config, account_id=namespace[0], region=namespace[1])
            )

    def _without_tables(self, account_id: str, region: str) -> Context:
        """The context of a namespace not kept yet: the one remembered (the most recently used again), unless the
        namespace has been kept since it was made (its first table): then it is kept for good. LRU order is the
        dict's insertion order, so a hit moves the namespace to the end and the first one is the one dropped."""
        namespace = (account_id, region)
        empty = self._empty_namespaces
        view = empty.pop(namespace, None)
        if view is None or view.catalog.current() is not view.catalog:
            # (A namespace kept through another catalog than this context's: only after a storage failure's reload.)
            view = self._view(account_id, region)
        if view.catalog.kept:
            self._namespaces[namespace] = view
            return view
        if len(empty) >= EMPTY_NAMESPACES_REMEMBERED:
            del empty[next(iter(empty))]
        empty[namespace] = view
        return view

    def _view(self, account_id: str, region: str) -> Context:
        config = dataclasses.replace(self.config, account_id=account_id, region=region)
        catalog = self.catalog.namespace_of(account_id, region)
        return Context(config, self.kv, catalog, self.capacity, self.indexes, self.changelog, self.shards, self.locks,
                       self.ttl_cursors, self.expressions, self.key_templates, self.table_spaces,
                       shares_with=self, recovery=self.recovery)  # fmt: skip
