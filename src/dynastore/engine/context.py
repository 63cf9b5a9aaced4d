"""What every engine call is given: the engine of one dynastore, and the namespace and caller of the call.

``Engine``: the engine components of one dynastore, each a typed field, every one built by its composition root
(app.py) and passed in; there is one per dynastore, whatever the namespaces. Nothing below keeps state of its own
at module level, so several dynastores (tests run many) live side by side in one process. Only the engine's: what
requests use beside it (the parsed PartiQL statements, the identity policies) are the request-side services of
api/services.py.

``Context``: one call's view of the engine, a value made at dispatch (or by background work): the engine, the
``namespace`` the call runs in (model/namespace.py: account and region), that namespace's ``catalog`` and the
call's ``origin`` (who makes it: the caller's principal, or the service itself). The engine's components are
reachable on it as ``ctx.kv``, ``ctx.config``, ``ctx.clock``, ``ctx.capacity``, ``ctx.changelog``, ... (the
engine's own objects, never copies of them), so api and engine code takes a ``ctx`` and never needs to know which
namespace it is.
Every namespace shares the engine's ``config``: an ARN is built from the namespace (``ctx.namespace``) or from the
table itself (``catalog.table_arn(td)``: a table's catalog entry knows its namespace), never from the config.

Background work (GSI backfills, TTL sweeps, the change log's trimming) is given the default namespace's context and
walks tables (``catalog.every_table()``), not namespaces: ``ctx.for_table(td)`` is the context of the namespace
holding a table; what the service does itself (TTL deletions) runs as the service (``ctx.as_service()``).

A namespace without tables (a caller naming a region it has not used yet) keeps nothing of its own in the store,
so its catalog is only remembered among the last ``EMPTY_NAMESPACES_REMEMBERED`` such namespaces: a request in
one costs what a request in a namespace with tables costs, and callers naming ever new regions cost a bounded
amount of memory.

Cost: a call in the default namespace by the same caller as the call before it (the embedded default: every call
is the anonymous caller's) is given the context made for that caller's first call, so nothing is made per call
and a component is read as a field, as before namespaces were values. Any other call makes one context: sixteen
references taken from the engine (measured on the interpreted build: about 0.8 us, against about 0.07 us per
component read had the components been properties, 8 reads per PutItem and 4 per GetItem, on the embedded
default's path).
"""

from __future__ import annotations

from dynastore.config import Config
from dynastore.engine.capacity.state import Capacity
from dynastore.engine.changelog import ChangeLog
from dynastore.engine.gsi_propagation import GsiPropagation
from dynastore.engine.index_state import IndexState
from dynastore.engine.key_spaces import TableSpaces
from dynastore.engine.progress import Jobs
from dynastore.engine.recovery_state import RecoveryState
from dynastore.engine.stream_shards import StreamShards
from dynastore.engine.transaction_locks import TransactionLocks
from dynastore.expressions.cache import ExpressionCache, KeyTemplates
from dynastore.model.namespace import SERVICE, Namespace, Origin
from dynastore.model.table_schema import TableDef
from dynastore.storage.catalog import Catalog
from dynastore.storage.kv import KV
from dynastore.util.clock import Clock

__all__ = ["Context", "EMPTY_NAMESPACES_REMEMBERED", "Engine"]

EMPTY_NAMESPACES_REMEMBERED = 64  # catalogs of namespaces without tables kept for their next request (the last used)


class Engine:
    """The engine components of one dynastore (see the module's docstring)."""

    __slots__ = (
        "config",
        "clock",
        "kv",
        "catalog",
        "capacity",
        "indexes",
        "changelog",
        "propagation",
        "shards",
        "locks",
        "ttl_cursors",
        "expressions",
        "key_templates",
        "table_spaces",
        "recovery",
        "progress",
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
        propagation: GsiPropagation,
        shards: StreamShards,
        locks: TransactionLocks,
        ttl_cursors: dict[int, bytes],
        expressions: ExpressionCache,
        key_templates: KeyTemplates,
        table_spaces: TableSpaces,
        recovery: RecoveryState | None = None,
        progress: Jobs | None = None,
    ) -> None:
        self.config = config  # replaced once the listening port is known (DescribeEndpoints reports it)
        self.clock: Clock = config.clock  # the config's (a field: every request reads it)
        self.kv = kv  # the store: every read and write is a transaction of it
        self.catalog = catalog  # the default namespace's table definitions and statistics (it finds the others)
        self.capacity = capacity  # partitions, buckets, admission, Contributor Insights
        self.indexes = indexes  # item-collection limit and backfill pacing
        self.changelog = changelog  # the item changes its consumers want (GSI propagation, streams, triggers)
        self.propagation = propagation  # applies the GSI changes of the log's records (a consumer of it)
        self.shards = shards  # the stream shards of each table
        self.locks = locks  # keys of transactions whose commit is not final yet
        self.ttl_cursors = ttl_cursors  # where each table's TTL sweep goes on (table id -> storage key)
        self.expressions = expressions  # parsed expressions, shared by all requests
        self.key_templates = key_templates  # remembered Query key-condition shapes
        self.table_spaces = table_spaces  # the key space of each table definition in use
        # backups' files and records, restores running (engine/recovery_state.py); shared by every namespace
        self.recovery = RecoveryState.in_memory() if recovery is None else recovery
        # the long work running now and how far it is (engine/progress.py); background work reads it as
        # ``ctx.engine.progress`` (not a field of Context: no request reads it)
        self.progress = Jobs(config.clock) if progress is None else progress
        # the catalogs of the namespaces without tables used last, the most recent last
        self._empty_namespaces: dict[Namespace, Catalog] = {}

    @property
    def default_namespace(self) -> Namespace:
        """The config's account and region."""
        return self.catalog.namespace

    def context(self, namespace: Namespace, origin: Origin) -> Context:
        """The context of a call by ``origin`` in ``namespace``."""
        return Context(self, namespace, self.catalog_of(namespace), origin)

    def catalog_of(self, namespace: Namespace) -> Catalog:
        """The catalog of the tables of ``namespace``: the kept one once the namespace has a table, until then one
        among the last few namespaces without tables (see the module's docstring). LRU order is the dict's
        insertion order, so a hit moves the namespace to the end and the first one is the one dropped."""
        empty = self._empty_namespaces
        found = empty.pop(namespace, None)
        if found is None or found.current() is not found:
            # (Kept through another catalog than the one remembered: only after a storage failure's reload.)
            found = self.catalog.namespace_of(*namespace)
        if found.kept:
            return found
        if len(empty) >= EMPTY_NAMESPACES_REMEMBERED:
            del empty[next(iter(empty))]
        empty[namespace] = found
        return found

    def reconfigure(self, config: Config) -> None:
        """Replace the config (the listening port became known): every namespace's calls see the new one (a
        context reads the config through the engine; the clock stays the same object)."""
        self.config = config
        self.clock = config.clock


class Context:
    """One call's view of the engine: its namespace, that namespace's catalog and who makes the call (see the
    module's docstring). The engine's components are read through it: references to the engine's own objects,
    taken when the context is made (fields, so that reading one on the request path costs what reading a field
    costs), except the config, which the engine may replace (``Engine.reconfigure``) and is read through."""

    __slots__ = ("engine", "namespace", "catalog", "origin", "kv", "clock", "capacity", "indexes", "changelog",
                 "propagation", "shards", "locks", "ttl_cursors", "expressions", "key_templates",
                 "table_spaces", "recovery")  # fmt: skip

    def __init__(self, engine: Engine, namespace: Namespace, catalog: Catalog, origin: Origin) -> None:
        self.engine = engine
        self.namespace = namespace
        self.catalog = catalog  # the namespace's tables
        self.origin = origin
        # the engine's components, the same objects for every context of the engine
        self.kv = engine.kv
        self.clock = engine.clock
        self.capacity = engine.capacity
        self.indexes = engine.indexes
        self.changelog = engine.changelog
        self.propagation = engine.propagation
        self.shards = engine.shards
        self.locks = engine.locks
        self.ttl_cursors = engine.ttl_cursors
        self.expressions = engine.expressions
        self.key_templates = engine.key_templates
        self.table_spaces = engine.table_spaces
        self.recovery = engine.recovery

    @property
    def config(self) -> Config:
        return self.engine.config

    # ---- other calls' contexts ----------------------------------------------------------------------------------
    def in_namespace(self, account_id: str, region: str) -> Context:
        """The same caller's context in the namespace of ``account_id`` in ``region`` (a request naming another
        account's table by ARN runs in that table's namespace)."""
        namespace = Namespace(account_id, region)
        if namespace == self.namespace:
            return self
        return Context(self.engine, namespace, self.engine.catalog_of(namespace), self.origin)

    def for_table(self, table: TableDef) -> Context:
        """The same caller's context in the namespace holding ``table`` (background work walking tables)."""
        owner = self.catalog.owner(table)
        if owner is self.catalog:
            return self
        return Context(self.engine, owner.namespace, owner, self.origin)

    def as_service(self) -> Context:
        """This namespace's context for work the service does itself (TTL deletions)."""
        return self if self.origin is SERVICE else Context(self.engine, self.namespace, self.catalog, SERVICE)
