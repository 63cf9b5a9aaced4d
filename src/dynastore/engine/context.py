"""What every engine call is given: the components of one dynastore, built by its composition root (app.py).

Each component is a typed field; nothing below keeps state of its own at module level, so several dynastores
(tests run many) live side by side in one process.

Namespaces: tables live per account and region. The context the composition root builds is the default
namespace's (the config's account and region); ``in_namespace(account, region)`` gives another namespace's
context: the same components, except its ``catalog`` (that namespace's tables) and its ``config`` (whose
``account_id`` and ``region`` are the namespace's, so every ARN an operation builds names it). Engine and api
code takes whichever context it is given and never needs to know which namespace it is.
"""

from __future__ import annotations

import dataclasses

from dynastore.config import Config, policies_path
from dynastore.engine.capacity.state import Capacity
from dynastore.engine.changelog import ChangeLog
from dynastore.engine.index_state import IndexState
from dynastore.engine.key_spaces import TableSpaces
from dynastore.engine.stream_shards import StreamShards
from dynastore.engine.transaction_locks import TransactionLocks
from dynastore.expressions.cache import ExpressionCache, KeyTemplates
from dynastore.partiql.cache import StatementCache
from dynastore.security.identity_policies import IdentityPolicies
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
        "policies",
        "_namespaces",
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
        self.policies = IdentityPolicies(policies_path(config))  # users' and groups' policies (auth sigv4)
        # every namespace's context made so far, shared by all of them (the default namespace's is this one)
        self._namespaces: dict[tuple[str, str], Context] = {catalog.namespace: self}
        self.statements = StatementCache()  # parsed PartiQL statements, shared by all requests

    @property
    def clock(self) -> Clock:
        return self.config.clock

    # ---- namespaces -------------------------------------------------------------------------------------------
    def in_namespace(self, account_id: str, region: str) -> Context:
        """The context of the tables of ``account_id`` in ``region``: remembered once the namespace has a table
        (until then made for each request: a namespace without tables is kept nowhere)."""
        found = self._namespaces.get((account_id, region))
        return self._view(account_id, region) if found is None else found

    def namespaces(self) -> list[Context]:
        """The context of every namespace holding tables (the default one first): background work covers them."""
        return [self.in_namespace(*space.namespace) for space in self.catalog.namespaces()]

    def reconfigure(self, config: Config) -> None:
        """Replace the config of every namespace's context (the listening port became known)."""
        default = (config.account_id, config.region)
        for namespace, ctx in self._namespaces.items():
            ctx.config = (
                config
                if namespace == default
                else dataclasses.replace(config, account_id=namespace[0], region=namespace[1])
            )

    def _view(self, account_id: str, region: str) -> Context:
        config = dataclasses.replace(self.config, account_id=account_id, region=region)
        catalog = self.catalog.namespace_of(account_id, region)
        view = Context(config, self.kv, catalog, self.capacity, self.indexes, self.changelog, self.locks,
                       self.expressions, self.key_templates)  # fmt: skip
        view.shards = self.shards
        view.ttl_cursors = self.ttl_cursors
        view.table_spaces = self.table_spaces
        view.policies = self.policies
        view._namespaces = self._namespaces
        if catalog.kept:
            self._namespaces[(account_id, region)] = view
        return view
