"""The table catalog: every ``TableDef`` in memory, persisted under meta keys in the txn of each change.

Records (orjson, all under ``keyspace.meta_key``; the reserved names are defined in ``keyspace``):

* ``meta_key(<table name>)`` -> ``TableDef.to_record()`` (``"kind": "table"``);
* ``meta_key(SEQUENCE_RECORD)`` -> ``{"kind": "seq", "next": N}``: the id sequence shared by tables and
  indexes, so a table or index id is never reused and a recreated table never sees old keys;
* ``meta_key(PURGE_RECORD)`` -> ``{"kind": "purge", "ids": [["t", id] | ["x", id] | ["l", id] | ["v", id], ...]}``:
  deleted tables (``keyspace.table_prefix``), indexes (``keyspace.index_prefix``) and item-collection
  records of deleted tables (``keyspace.collection_prefix``) whose key ranges may still hold data.

Namespaces: tables live per account and region, as in DynamoDB. One ``Catalog`` holds one namespace's tables;
the catalogs of every namespace of a store share its KV, the id sequence and the purge queue (``_Shared``), so
ids never collide across namespaces. ``Catalog.load`` returns the default namespace's catalog (the config's
account and region), whose records are the ones above, unchanged; ``namespace_of(account, region)`` gives
another's. Another namespace's table is recorded under ``meta_key(keyspace.namespaced_record_name(scope, name))``
as ``{"kind": "ns-table", "namespace": [account, region], ...TableDef record}`` (a kind that a catalog knowing no
namespaces skips). ``maintain``, ``flush_stats``, ``reload`` and ``close`` cover every namespace, whichever
namespace's catalog they are called on. A table knows its namespace: ``owner(td)`` (from any namespace's catalog,
by table id) is the catalog holding it, where its statistics and ARN are found, and ``every_table()`` is every
namespace's tables, which background work walks. The default namespace's records name no namespace: they belong to
whatever account and region the config names. So when the config names another account or region than before,
an ``ns-table`` record of the new default namespace is adopted by it: read from where it is and moved under its
name at its next write (if a record of the same name already is the default's, that one wins and the other is
left untouched, its ids never handed out again).

Lifecycle: transitions are lazy (see ``TableDef.settle``) and need no write when their time passes. A table
DELETING past ``delete_table_delay`` reads as gone at once; ``maintain()`` later drops its record and queues
its ids for purging. Purging deletes at most ``PURGE_CHUNK_KEYS`` keys per ``maintain()`` call, one write txn
each, so dropping a large table never stalls the event loop. The server calls ``maintain()`` from a periodic
task; control-plane mutations call it too.

Stats: ``add_stats`` (called by every item write) only updates in-memory counters, never the KV: it runs
right after the item's own write txn and must stay cheap. Counters are persisted into the table records by
``maintain()`` at most every ``STATS_FLUSH_SECONDS`` and by ``flush_stats()``/``close()``; after a crash
ItemCount/TableSizeBytes may lag by that window (DynamoDB itself refreshes them only about every six hours).
Every index has the same two counters (``add_index_stats``; LSIs are counted by the write, GSIs when their
backlog is applied), persisted in the index's record with the table's.

Threading: like the KV, the catalog is used from the event-loop thread only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import orjson

from dynastore import messages
from dynastore.config import Config
from dynastore.errors import ResourceInUseException, ResourceNotFoundException, ValidationException
from dynastore.model.namespace import Namespace
from dynastore.model.table_schema import CREATING, DELETING, UPDATING, TableDef
from dynastore.storage import keyspace
from dynastore.storage.kv import KV, WriteTxn
from dynastore.storage.table_stats import TableStats
from dynastore.util.arn import table_name_in

__all__ = ["Catalog", "Namespace", "NS_TABLE_KIND", "PURGE_CHUNK_KEYS", "STATS_FLUSH_SECONDS"]

NS_TABLE_KIND = "ns-table"  # the record kind of a table of a namespace other than the default

PURGE_CHUNK_KEYS = 1000
STATS_FLUSH_SECONDS = 60.0

_PURGE_PREFIXES = {
    "t": keyspace.table_prefix,
    "x": keyspace.index_prefix,
    "l": keyspace.collection_prefix,
    "v": keyspace.version_prefix,  # the item versions of a global table (global_tables/versions.py)
}


class _Shared:
    """What the catalogs of every namespace of one store share."""

    __slots__ = ("next_id", "persisted_next_id", "purge_ids", "last_stats_flush", "generation", "spaces", "owners")

    def __init__(self, now: float) -> None:
        self.next_id = 1
        self.persisted_next_id = 1
        self.purge_ids: list[tuple[str, int]] = []
        self.last_stats_flush = now
        self.generation = 0  # bumped by every create, update and delete in any namespace
        self.spaces: dict[Namespace, Catalog] = {}  # every namespace's catalog, the default one first
        self.owners: dict[int, Catalog] = {}  # table id -> the catalog of the namespace holding the table


class Catalog:
    """In-memory table definitions of one namespace, written through to the KV."""

    def __init__(
        self,
        kv: KV,
        config: Config,
        shared: _Shared | None = None,
        namespace: Namespace | None = None,
        *,
        kept: bool = True,
    ) -> None:
        self._kv = kv
        self._config = config
        self._shared = _Shared(config.clock.now()) if shared is None else shared
        default = Namespace(config.account_id, config.region)
        self.namespace: Namespace = default if namespace is None else Namespace(*namespace)
        self.account_id, self.region = self.namespace
        # "" for the default namespace (its records, tokens and deleted streams are stored as before namespaces)
        self.scope = "" if self.namespace == default else f"{self.account_id}/{self.region}"
        self._tables: dict[str, TableDef] = {}
        self._stats: dict[str, TableStats] = {}
        self._adopted: dict[str, bytes] = {}  # table name -> the key of its record, when not _record_key(name)
        if kept:
            self._shared.spaces.setdefault(self.namespace, self)

    @property
    def generation(self) -> int:
        """Bumped by every create, update and delete (of any namespace): lets callers cache derived views."""
        return self._shared.generation

    # ---- namespaces ---------------------------------------------------------------------------------------
    def namespace_of(self, account_id: str, region: str) -> Catalog:
        """The catalog of the tables of ``account_id`` in ``region``. A namespace is kept from its first table on;
        until then its catalog is made afresh, empty, for each caller (so callers naming ever new regions cost no
        memory)."""
        namespace = Namespace(account_id, region)
        space = self._shared.spaces.get(namespace)
        if space is None:
            return Catalog(self._kv, self._config, self._shared, namespace, kept=False)
        return space

    @property
    def kept(self) -> bool:
        """Whether this namespace is kept (it has had a table since the store was opened)."""
        return self._shared.spaces.get(self.namespace) is self

    def current(self) -> Catalog:
        """The catalog requests of this namespace use now: the kept one if the namespace is kept, else this one."""
        return self._shared.spaces.get(self.namespace, self)

    def _kept(self) -> Catalog:
        return self._shared.spaces.setdefault(self.namespace, self)

    def namespaces(self) -> list[Catalog]:
        """Every namespace's catalog of the store, the default one first."""
        return list(self._shared.spaces.values())

    def owner(self, td: TableDef) -> Catalog:
        """The catalog of the namespace holding ``td`` (this one if no namespace holds it any more): a table's
        statistics, ARN and capacity are found from the table itself, whichever namespace's catalog is asked."""
        return self._shared.owners.get(td.table_id, self)

    def namespace_of_table(self, td: TableDef) -> Namespace:
        """The namespace holding ``td`` (this catalog's if none holds it any more)."""
        return self.owner(td).namespace

    def table_arn(self, td: TableDef) -> str:
        """``td``'s ARN, in the namespace holding it."""
        return self.owner(td).namespace.table_arn(td.name)

    def every_table(self) -> list[TableDef]:
        """Every table that still exists (DELETING ones until they are gone), of every namespace: what background
        work walks (each table knows its namespace through ``owner``)."""
        return [td for space in self.namespaces() for td in (space._lookup(n) for n in space.list_names()) if td]

    def _record_key(self, name: str) -> bytes:
        return keyspace.meta_key(keyspace.namespaced_record_name(self.scope, name) if self.scope else name)

    # ---- construction -------------------------------------------------------------------------------------
    @classmethod
    def load(cls, kv: KV, config: Config) -> Catalog:
        """Read every catalog record once (every namespace's); the catalog is never re-read per request.
        Returns the default namespace's catalog."""
        cat = cls(kv, config)
        shared = cat._shared
        max_id = 0
        with kv.read() as txn:
            meta = keyspace.meta_prefix()
            for key, raw in txn.iter_range(meta, keyspace.prefix_end(meta)):
                rec = orjson.loads(raw)
                kind = rec.get("kind") if isinstance(rec, dict) else None
                if kind == "table" or kind == NS_TABLE_KIND:
                    td = TableDef.from_record(rec)
                    max_id = max(max_id, td.table_id, *td.index_ids())
                    if kind == "table":
                        cat._adopted.pop(td.name, None)  # the default's own record wins over an adopted one
                        cat._add_loaded(td)
                        continue
                    space = cat.namespace_of(str(rec["namespace"][0]), str(rec["namespace"][1]))._kept()
                    if space is cat:  # recorded while the config named another default namespace
                        if td.name in cat._tables:
                            continue
                        cat._adopted[td.name] = key
                    space._add_loaded(td)
                elif kind == "seq":
                    shared.next_id = max(shared.next_id, int(rec["next"]))
                elif kind == "purge":
                    shared.purge_ids = [(str(k), int(i)) for k, i in rec["ids"]]
                    max_id = max(max_id, *(i for _, i in shared.purge_ids), 0)
        shared.next_id = max(shared.next_id, max_id + 1)
        shared.persisted_next_id = shared.next_id
        return cat

    def _add_loaded(self, td: TableDef) -> None:
        self._tables[td.name] = td
        self._stats[td.name] = TableStats.of(td)
        self._shared.owners[td.table_id] = self

    def reload(self) -> None:
        """Read every record again after the KV took back commits that never became durable (a storage failure):
        a table change among them is gone from the store, so it must be gone from here too. The live item
        statistics of tables that are still the same table are kept (those of the writes taken back stay in
        them: statistics are approximate, as after a crash); ids already handed out are never handed out again.
        Every namespace's catalog object stays the same object (contexts hold them)."""
        fresh = Catalog.load(self._kv, self._config)
        shared = self._shared
        for namespace in fresh._shared.spaces:
            self.namespace_of(*namespace)._kept()
        for namespace, space in shared.spaces.items():
            new = fresh._shared.spaces.get(namespace)
            tables = {} if new is None else new._tables
            stats = {} if new is None else new._stats
            for name, td in tables.items():
                old, st = space._tables.get(name), space._stats.get(name)
                if old is not None and st is not None and old.table_id == td.table_id:
                    stats[name] = st
            space._tables, space._stats = tables, stats
            space._adopted = {} if new is None else new._adopted
        shared.owners = {td.table_id: space for space in shared.spaces.values() for td in space._tables.values()}
        shared.purge_ids = fresh._shared.purge_ids
        shared.next_id = max(shared.next_id, fresh._shared.next_id)
        shared.persisted_next_id = fresh._shared.persisted_next_id
        shared.generation += 1

    # ---- lookups ------------------------------------------------------------------------------------------
    def _now(self) -> float:
        return self._config.clock.now()

    def _lookup(self, name: str) -> TableDef | None:
        td = self._tables.get(name)
        if td is None:
            return None
        now = self._now()
        if td.status == DELETING:
            if td.status_until is not None and now >= td.status_until:
                return None
            return td
        settled = td.settle(now)
        if settled is not td:
            # Memory-only: the persisted "CREATING until T" record already means ACTIVE after T.
            self._tables[name] = settled
        return settled

    def table_name(self, name: str) -> str:
        """The table a request's TableName means: the name, or the name in a table ARN of this region and
        account (AccessDeniedException for another's, ValidationException for an ARN naming no table)."""
        if name.startswith("arn:"):
            return table_name_in(name, self.region, self.account_id)
        return name

    def get(self, name: str) -> TableDef:
        """The table in any status. Raises ResourceNotFoundException (DescribeTable's text) if absent."""
        name = self.table_name(name)
        td = self._lookup(name)
        if td is None:
            raise ResourceNotFoundException(messages.TABLE_NOT_FOUND.format(name=name))
        return td

    def find(self, name: str) -> TableDef | None:
        """The table in any status, or None."""
        return self._lookup(self.table_name(name))

    def get_active(self, name: str) -> TableDef:
        """The table for a data-plane operation: ACTIVE or UPDATING.

        Missing, CREATING and DELETING tables all raise ResourceNotFoundException with the bare
        "Requested resource not found" that DynamoDB gives item operations.
        """
        td = self._lookup(self.table_name(name))
        if td is None or td.status in (CREATING, DELETING):
            raise ResourceNotFoundException(messages.RESOURCE_NOT_FOUND)
        return td

    def list_names(self) -> list[str]:
        """Names of every table that still exists (DELETING ones until they are gone), sorted."""
        return sorted(n for n in self._tables if self._lookup(n) is not None)

    def stats(self, name: str) -> tuple[int, int]:
        """Live (item count, size in bytes) of a table."""
        st = self._stats.get(name)
        return (0, 0) if st is None else (st.items, st.bytes)

    def with_live_stats(self, td: TableDef) -> TableDef:
        """``td`` carrying the live item statistics of the table and its indexes (DescribeTable reports them)."""
        st = self._stats.get(td.name)
        if st is not None and td.name in self._tables:
            td = st.applied_to(td)
        return td

    def arn(self, name: str) -> str:
        return self.namespace.table_arn(name)

    # ---- ids ----------------------------------------------------------------------------------------------
    def next_table_id(self) -> int:
        """A fresh id for a table or an index, never handed out before (persisted with the next change)."""
        shared = self._shared
        n = shared.next_id
        shared.next_id += 1
        return n

    # ---- mutations ----------------------------------------------------------------------------------------
    def create(self, td: TableDef) -> TableDef:
        """Store a new table. Raises ResourceInUseException if the name is taken (even while DELETING)."""
        self.maintain()
        if self._lookup(td.name) is not None:
            raise ResourceInUseException(messages.TABLE_ALREADY_EXISTS.format(name=td.name))
        with self._kv.write() as txn:
            self._put_table(txn, td)
            self._put_seq(txn)
        self._tables[td.name] = td
        self._stats[td.name] = TableStats.of(td)
        self._kept()
        self._shared.owners[td.table_id] = self
        self._shared.generation += 1
        return td

    def update(self, name: str, mutate: Callable[[TableDef], TableDef]) -> TableDef:
        """Replace a table by ``mutate(current)`` (which may raise to refuse the change).

        Index ids that disappear or turn DELETING are queued for purging in the same transaction.
        """
        self.maintain()
        name = self.table_name(name)
        current = self.get(name)
        new = mutate(current)
        if new is current:
            return current
        st = self._stats.get(name)
        if st is not None:
            new = st.applied_to(new)
            st.dirty = False
        live_ids = {i.index_id for i in new.lsis + new.gsis if i.status != DELETING}
        dropped = [
            ("x", i) for i in current.index_ids() if i not in live_ids and ("x", i) not in self._shared.purge_ids
        ]
        with self._kv.write() as txn:
            self._put_table(txn, new)
            self._put_seq(txn)
            if dropped:
                self._put_purge(txn, self._shared.purge_ids + dropped)
        self._shared.purge_ids.extend(dropped)
        self._tables[name] = new
        self._shared.generation += 1
        return new

    def delete(self, name: str) -> TableDef:
        """Start deleting a table and return its DELETING definition.

        Raises ResourceNotFoundException, ResourceInUseException (CREATING/UPDATING/DELETING) or
        ValidationException (deletion protection).
        """
        self.maintain()
        name = self.table_name(name)
        td = self.get(name)
        if td.status == CREATING:
            raise ResourceInUseException(messages.TABLE_BEING_CREATED.format(name=name))
        if td.status == UPDATING:
            raise ResourceInUseException(messages.TABLE_BEING_UPDATED.format(name=name))
        if td.status == DELETING:
            raise ResourceInUseException(messages.TABLE_BEING_DELETED.format(name=name))
        if td.deletion_protection:
            raise ValidationException(messages.TABLE_DELETION_PROTECTED, bare=True)
        self._shared.generation += 1
        items, size = self.stats(name)
        now = self._now()
        deleting = replace(
            td,
            status=DELETING,
            status_until=now + self._config.delete_table_delay,
            item_count=items,
            size_bytes=size,
        )
        if self._config.delete_table_delay <= 0:
            self._drop(deleting)
        else:
            with self._kv.write() as txn:
                self._put_table(txn, deleting)
            self._tables[name] = deleting
        return deleting

    def abandon(self, name: str) -> TableDef:
        """Drop a table in whatever status at once, its items purged in the background: a restore that could not
        finish (its table never became ACTIVE, so nothing a client acknowledged is lost)."""
        self.maintain()
        td = self.get(name)
        self._shared.generation += 1
        self._drop(td)
        return td

    def add_index_stats(self, table_name: str, index_id: int, item_delta: int, bytes_delta: int) -> None:
        """Account index entries written or removed, in memory (like ``add_stats``)."""
        st = self._stats.get(table_name)
        if st is None:
            return
        counters = st.indexes.setdefault(index_id, [0, 0])
        counters[0] += item_delta
        counters[1] += bytes_delta
        st.dirty = True

    def index_stats(self, table_name: str, index_id: int) -> tuple[int, int]:
        """Live (item count, size in bytes) of an index."""
        st = self._stats.get(table_name)
        counters = None if st is None else st.indexes.get(index_id)
        return (0, 0) if counters is None else (counters[0], counters[1])

    def add_stats(self, table_name: str, item_delta: int, bytes_delta: int) -> None:
        """Account an item write in memory (never touches the KV; see the module docstring)."""
        st = self._stats.get(table_name)
        if st is None:
            return
        st.items += item_delta
        st.bytes += bytes_delta
        st.dirty = True

    # ---- housekeeping -------------------------------------------------------------------------------------
    def maintain(self, max_keys: int = PURGE_CHUNK_KEYS) -> int:
        """Finish expired deletions, flush stale stats, purge up to ``max_keys`` keys. Returns keys purged."""
        now = self._now()
        for space in self.namespaces():
            for td in list(space._tables.values()):
                if td.status == DELETING and td.status_until is not None and now >= td.status_until:
                    space._drop(td)
        if now - self._shared.last_stats_flush >= STATS_FLUSH_SECONDS:
            self.flush_stats()
        return self._purge_some(max_keys)

    def has_pending_purge(self) -> bool:
        return bool(self._shared.purge_ids)

    def flush_stats(self) -> None:
        """Write every table record (of every namespace) whose item statistics changed since it was last written."""
        self._shared.last_stats_flush = self._now()
        dirty = [
            (space, n, st)
            for space in self.namespaces()
            for n, st in space._stats.items()
            if st.dirty and n in space._tables
        ]
        if not dirty:
            return
        with self._kv.write() as txn:
            for space, name, st in dirty:
                td = st.applied_to(space._tables[name])
                space._put_table(txn, td)
                space._tables[name] = td
                st.dirty = False

    def close(self) -> None:
        """Persist the item statistics and the id sequence; the KV itself is closed by its owner."""
        self.flush_stats()
        if self._shared.next_id != self._shared.persisted_next_id:
            with self._kv.write() as txn:
                self._put_seq(txn)

    # ---- internals ----------------------------------------------------------------------------------------
    def _drop(self, td: TableDef) -> None:
        ids = [("t", td.table_id), *(("x", i) for i in td.index_ids())]
        if td.lsis:
            ids.append(("l", td.table_id))
        if td.global_table_version is not None:
            ids.append(("v", td.table_id))
        purge = self._shared.purge_ids + [i for i in ids if i not in self._shared.purge_ids]
        adopted = self._adopted.pop(td.name, None)
        with self._kv.write() as txn:
            txn.delete(self._record_key(td.name))
            if adopted is not None:
                txn.delete(adopted)
            self._put_purge(txn, purge)
        self._shared.purge_ids = purge
        self._tables.pop(td.name, None)
        self._stats.pop(td.name, None)
        self._shared.owners.pop(td.table_id, None)

    def _purge_some(self, max_keys: int) -> int:
        purged = 0
        while self._shared.purge_ids and purged < max_keys:
            kind, obj_id = self._shared.purge_ids[0]
            prefix = _PURGE_PREFIXES[kind](obj_id)
            budget = max_keys - purged
            with self._kv.write() as txn:
                keys = [k for k, _ in itertools.islice(txn.iter_range(prefix, keyspace.prefix_end(prefix)), budget)]
                for key in keys:
                    txn.delete(key)
                done = len(keys) < budget
                if done:
                    self._put_purge(txn, self._shared.purge_ids[1:])
            purged += len(keys)
            if not done:
                break
            self._shared.purge_ids = self._shared.purge_ids[1:]
        return purged

    def _put_table(self, txn: WriteTxn, td: TableDef) -> None:
        adopted = self._adopted.pop(td.name, None) if self._adopted else None
        if adopted is not None:
            txn.delete(adopted)  # moved under its name in this namespace
        rec = td.to_record()
        if self.scope:
            rec["kind"] = NS_TABLE_KIND
            rec["namespace"] = [self.account_id, self.region]
        txn.put(self._record_key(td.name), orjson.dumps(rec))

    def _put_seq(self, txn: WriteTxn) -> None:
        shared = self._shared
        if shared.next_id != shared.persisted_next_id:
            txn.put(keyspace.meta_key(keyspace.SEQUENCE_RECORD), orjson.dumps({"kind": "seq", "next": shared.next_id}))
            shared.persisted_next_id = shared.next_id

    def _put_purge(self, txn: WriteTxn, ids: list[tuple[str, int]]) -> None:
        txn.put(
            keyspace.meta_key(keyspace.PURGE_RECORD), orjson.dumps({"kind": "purge", "ids": [list(i) for i in ids]})
        )
