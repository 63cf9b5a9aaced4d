"""Secondary indexes, the write side: index entries, key checks, LSI writes, GSI changes, backfills,
item collections and index write units.

An index entry (the contract with the read side, docs/indexes.md):

* key: ``keyspace.index_key(index_id, idx_hash_enc, idx_range_enc, <the table key's encodings>)``; a
  multi-attribute GSI key concatenates its attributes' encodings in KeySchema order (encodings are
  self-delimiting, so the order stays DynamoDB's: attribute by attribute);
* value: ``itemcodec.encode_item(projected, item_size(projected))``: the table's and the index's key
  attributes plus the projected attributes (ALL: the whole item, whose stored form is reused as is).

An item lacking an index key attribute has no entry (sparse indexes). A write whose new item has an index key
attribute of the wrong type, or an empty string/binary one, is refused (ValidationException) before anything
is written. Which indexes a write maintains: every LSI, every GSI that is not DELETING.

LSI entries are written in the write's own storage transaction. GSI changes go to the durable change log
(engine/changelog.py) in that same transaction and are applied asynchronously, usually within milliseconds;
a GSI read first applies whatever is still pending (``catch_up``), so it sees every write acknowledged before it.
New GSIs are filled by a background backfill (``maintain``) whose cursor is stored with each chunk it copies.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from dynastore import limits, messages
from dynastore.engine.capacity.units import write_half_units
from dynastore.engine.changelog import GsiChange
from dynastore.engine.context import Context
from dynastore.engine.gsi_propagation import IndexTarget
from dynastore.engine.index_state import IndexState
from dynastore.engine.progress import BACKFILL, Job
from dynastore.errors import ItemCollectionSizeLimitExceededException, ValidationException
from dynastore.limits import GSI_BACKLOG_RECORDS_PER_TXN, GSI_READ_CATCH_UP_RECORDS
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import CREATING, DELETING, UPDATING, IndexDef, KeyAttr, TableDef
from dynastore.model.values import Item
from dynastore.storage import keycodec, keyspace
from dynastore.storage.catalog import Catalog
from dynastore.storage.itemcodec import decode_item, encode_item, stored_size
from dynastore.storage.keyspace import KEY_HEAD_BYTES
from dynastore.storage.kv import WriteTxn
from dynastore.validation.attribute_values import key_value_bytes

__all__ = [
    "IndexEffects",
    "IndexLayout",
    "IndexState",
    "TableLayout",
    "apply_write",
    "catch_up",
    "copy_index_definition",
    "entry_for",
    "layout_of",
    "maintain",
    "propagate",
]

log = logging.getLogger("dynastore")


# ---------------------------------------------------------------------------------------------- definitions


def copy_index_definition(ctx: Context, index: IndexDef, *, status: str, backfilling: bool, online: bool) -> IndexDef:
    """``index``'s definition for another table (a restored table, a global table's replica): a new index id,
    no items yet, the capacity asked last (an increase under way included) as its throughput, and the state the
    caller gives: ``status``, ``backfilling`` (a backfill is to fill it from the table's items), ``online``
    (added to a table that exists: DescribeTable then shows Backfilling)."""
    return replace(
        index,
        index_id=ctx.catalog.next_table_id(),
        status=status,
        backfilling=backfilling,
        online=online,
        throughput=index.pending_throughput or index.throughput,
        pending_throughput=None,
        item_count=0,
        size_bytes=0,
    )


# ---------------------------------------------------------------------------------------------- layouts


@dataclass(frozen=True, slots=True)
class IndexLayout:
    """What a write needs to know about one index, computed once per table definition."""

    index: IndexDef
    hash_attrs: tuple[KeyAttr, ...]
    range_attrs: tuple[KeyAttr, ...]
    projected: frozenset[str] | None  # attribute names an entry keeps; None: ALL

    @property
    def is_lsi(self) -> bool:
        return self.index.kind == "LSI"


@dataclass(frozen=True, slots=True)
class TableLayout:
    table: TableDef
    lsis: tuple[IndexLayout, ...]
    gsis: tuple[IndexLayout, ...]  # the GSIs writes maintain (every one not DELETING)
    checks: tuple[tuple[str, str, str, int], ...]  # (attribute, type, index name, size limit), by index name

    @property
    def indexes(self) -> tuple[IndexLayout, ...]:
        return self.lsis + self.gsis


_layouts: dict[int, TableLayout] = {}


def layout_of(table: TableDef) -> TableLayout:
    layout = _layouts.get(table.table_id)
    if layout is None or layout.table is not table:
        layout = _layouts[table.table_id] = _build_layout(table)
    return layout


def _build_layout(table: TableDef) -> TableLayout:
    lsis = tuple(_index_layout(table, idx) for idx in table.lsis)
    gsis = tuple(_index_layout(table, idx) for idx in table.gsis if idx.status != DELETING)
    # Index key attributes have the table keys' size limits: 2,048 bytes for a partition key attribute, 1,024
    # for a sort key attribute (each attribute of a multi-attribute key on its own).
    checks = tuple(
        (attr.name, attr.type, lay.index.name, limit)
        for lay in sorted(lsis + gsis, key=lambda lay: lay.index.name)  # DynamoDB names the first index by name
        for attrs, limit in ((lay.hash_attrs, limits.MAX_HASH_KEY_BYTES), (lay.range_attrs, limits.MAX_RANGE_KEY_BYTES))
        for attr in attrs
    )
    return TableLayout(table, lsis, gsis, checks)


def _index_layout(table: TableDef, index: IndexDef) -> IndexLayout:
    keys = index.key_schema
    projected: frozenset[str] | None = None
    if index.projection.type != "ALL":
        projected = frozenset(table.key_schema.names + keys.names + index.projection.non_key_attributes)
    return IndexLayout(index, keys.hash_keys, keys.range_keys, projected)


# ---------------------------------------------------------------------------------------------- entries


def _encode_keys(
    attrs: tuple[KeyAttr, ...], item: Item, memo: dict[str, bytes | None] | None, limit: int
) -> bytes | None:
    """The concatenated encodings of ``attrs`` in ``item``; None when one is missing, mistyped, empty or over
    ``limit`` bytes (writes refuse those first; a backfill leaves such items out of the index, as DynamoDB does).
    ``memo`` keeps each attribute's encoding for the other indexes of the same write."""
    out = b""
    for attr in attrs:
        if memo is not None and attr.name in memo:
            encoded = memo[attr.name]
        else:
            value = item.get(attr.name)
            payload = None if value is None else value.get(attr.type)
            encoded = (
                None
                if payload is None or payload == "" or key_value_bytes(attr.type, payload) > limit
                else keycodec.encode_value(attr.type, payload)
            )
            if memo is not None:
                memo[attr.name] = encoded
        if encoded is None:
            return None
        out += encoded
    return out


def _entry_key(
    lay: IndexLayout, item: Item, table_keys: bytes, memo: dict[str, bytes | None] | None = None
) -> bytes | None:
    idx_hash = _encode_keys(lay.hash_attrs, item, memo, limits.MAX_HASH_KEY_BYTES)
    if idx_hash is None:
        return None
    idx_range = _encode_keys(lay.range_attrs, item, memo, limits.MAX_RANGE_KEY_BYTES) if lay.range_attrs else b""
    if idx_range is None:
        return None
    # ``table_keys`` is the table's partition and sort key encodings, already concatenated in the item key.
    return keyspace.index_key(lay.index.index_id, idx_hash, idx_range or None, table_keys, None)


def _project(lay: IndexLayout, item: Item) -> Item:
    keep = lay.projected
    if keep is None:
        return item
    return {name: value for name, value in item.items() if name in keep}


def _table_keys(table: TableDef, item: Item) -> bytes:
    schema = table.key_schema
    out = keycodec.encode_value(schema.hash_key.type, item[schema.hash_key.name][schema.hash_key.type])
    if schema.range_key is not None:
        out += keycodec.encode_value(schema.range_key.type, item[schema.range_key.name][schema.range_key.type])
    return out


def entry_for(table: TableDef, index: IndexDef, item: Item) -> tuple[bytes, bytes] | None:
    """The (key, value) of ``item``'s entry in ``index``, or None if the item is not in the index."""
    lay = _index_layout(table, index)
    key = _entry_key(lay, item, _table_keys(table, item))
    if key is None:
        return None
    projected = _project(lay, item)
    return key, encode_item(projected, item_size(projected))


# ---------------------------------------------------------------------------------------------- key checks


def check_item_keys(layout: TableLayout, item: Item, *, updated: bool) -> None:
    """ValidationException if an index key attribute of ``item`` has the wrong type, is empty or is too large."""
    for name, expected, index_name, limit in layout.checks:
        value = item.get(name)
        if value is None:
            continue
        actual = next(iter(value))
        if actual != expected:
            raise ValidationException(
                messages.INDEX_KEY_TYPE_MISMATCH.format(name=name, expected=expected, actual=actual, index=index_name),
                bare=True,
            )
        if value[actual] == "":
            kind = "string" if expected == "S" else "binary"
            if updated:
                raise ValidationException(messages.INDEX_KEY_EMPTY_UPDATE.format(kind=kind), bare=True)
            raise ValidationException(
                messages.INDEX_KEY_EMPTY.format(kind=kind, index=index_name, name=name), bare=True
            )
        size = key_value_bytes(actual, value[actual])
        if size > limit:
            raise ValidationException(
                messages.INDEX_KEY_TOO_LARGE.format(name=name, size=size, limit=limit, index=index_name), bare=True
            )


# ---------------------------------------------------------------------------------------------- one write


@dataclass(slots=True)
class IndexEffects:
    """What a write did to the table's indexes (reported after the commit)."""

    units: list[tuple[IndexDef, int]] = field(default_factory=list)  # write half-units per index touched
    lsi_stats: list[tuple[int, int, int]] = field(default_factory=list)  # (index id, item delta, byte delta)
    collection_key: Item | None = None  # tables with LSIs: the item collection's partition key
    collection_size: int = 0  # ... and its size after the write, in bytes
    gsi_changes: list[GsiChange] = field(default_factory=list)  # GSI entry changes, logged with the item change


def apply_write(
    state: IndexState,
    txn: WriteTxn,
    table: TableDef,
    key: bytes,
    writes: tuple[Item | None, bytes | None, int, Item | None, bytes | None, int],
    *,
    updated: bool,
) -> IndexEffects:
    """Maintain every index for one item write inside ``txn``; raising aborts the whole write.

    ``writes`` is (old item, old stored value, old size, new item, new stored value, new size); ``updated``:
    the new item came from an update expression (its empty-key message differs).
    """
    old, old_raw, old_size, new, new_raw, new_size = writes
    layout = layout_of(table)
    if new is not None:
        check_item_keys(layout, new, updated=updated)
    effects = IndexEffects()
    table_keys = key[KEY_HEAD_BYTES:]
    changes: list[GsiChange] = []
    entry_bytes = 0
    old_memo: dict[str, bytes | None] = {}
    new_memo: dict[str, bytes | None] = {}
    for lay in layout.indexes:
        old_key = None if old is None else _entry_key(lay, old, table_keys, old_memo)
        new_key = None if new is None else _entry_key(lay, new, table_keys, new_memo)
        if old_key is None and new_key is None:
            continue
        old_entry = None if old_key is None or old is None else _project(lay, old)
        new_entry = None if new_key is None or new is None else _project(lay, new)
        if old_key == new_key and old_entry == new_entry:
            continue  # neither the key nor a projected attribute changed: the index is not written
        old_entry_size = 0 if old_entry is None else (old_size if lay.projected is None else item_size(old_entry))
        new_entry_size = 0 if new_entry is None else (new_size if lay.projected is None else item_size(new_entry))
        half_units = 0
        if old_key is not None and old_key != new_key:
            half_units += write_half_units(old_entry_size)
            _delete(lay, txn, old_key, changes)
        if new_key is not None and new_entry is not None:
            moved = old_key != new_key
            half_units += write_half_units(new_entry_size if moved else max(old_entry_size, new_entry_size))
            value = new_raw if lay.projected is None and new_raw is not None else encode_item(new_entry, new_entry_size)
            _put(lay, txn, new_key, value, changes)
        effects.units.append((lay.index, half_units))
        if lay.is_lsi:
            items_delta = (new_key is not None) - (old_key is not None)
            effects.lsi_stats.append((lay.index.index_id, items_delta, new_entry_size - old_entry_size))
            entry_bytes += new_entry_size - old_entry_size
    effects.gsi_changes = changes  # logged with the item change (engine/changelog.py), applied soon after
    if layout.lsis:
        _update_collection(state, txn, table, key, new_size - old_size + entry_bytes, effects)
    return effects


def _delete(lay: IndexLayout, txn: WriteTxn, key: bytes, changes: list[GsiChange]) -> None:
    if lay.is_lsi:
        txn.delete(key)
    else:
        changes.append((key, None))


def _put(lay: IndexLayout, txn: WriteTxn, key: bytes, value: bytes, changes: list[GsiChange]) -> None:
    if lay.is_lsi:
        txn.put(key, value)
    else:
        changes.append((key, value))


# ---------------------------------------------------------------------------------------------- item collections


def _update_collection(
    state: IndexState, txn: WriteTxn, table: TableDef, key: bytes, delta: int, effects: IndexEffects
) -> None:
    """Keep the item collection's size (items + LSI entries of one partition key); refuse growth past the limit."""
    hash_attr = table.key_schema.hash_key
    payload, hash_end = keycodec.decode_value(hash_attr.type, key, KEY_HEAD_BYTES)
    record_key = keyspace.collection_key(table.table_id, key[KEY_HEAD_BYTES:hash_end])
    raw = txn.get(record_key)
    size = (0 if raw is None else int.from_bytes(raw, "big")) + delta
    if delta > 0 and size > state.collection_limit:
        raise ItemCollectionSizeLimitExceededException(messages.ITEM_COLLECTION_TOO_LARGE)
    if delta:
        if size > 0:
            txn.put(record_key, size.to_bytes(8, "big"))
        elif raw is not None:
            txn.delete(record_key)
    effects.collection_key = {hash_attr.name: {hash_attr.type: payload}}
    effects.collection_size = max(size, 0)


# ---------------------------------------------------------------------------------------------- background work


def propagate(ctx: Context, max_records: int = GSI_BACKLOG_RECORDS_PER_TXN) -> bool:
    """Apply the GSI changes of one chunk of the change log; True while records are left."""
    return ctx.propagation.apply(_gsi_targets(ctx), max_records)


def catch_up(ctx: Context, budget: int = GSI_READ_CATCH_UP_RECORDS) -> None:
    """Before a GSI read: apply the backlog up to the newest record written before the read arrived.

    On DynamoDB a network round trip hides the propagation of a GSI; against a local server a Query issued
    right after a write would miss it almost every time. So a GSI read applies what is pending itself (the
    propagator's own work, done a millisecond earlier) rather than waiting for it. When nothing is pending this
    is one integer comparison. Bounded: past ``budget`` records (a backlog seconds deep) the read answers with
    what the index holds and leaves the rest to the propagator. With ``--gsi-propagation-delay`` nothing is
    applied early: the simulated lag shows.
    """
    backlog = ctx.propagation
    if backlog.applied_through >= backlog.last_added or backlog.simulates_lag:
        return
    target = backlog.last_added
    try:
        while backlog.applied_through < target and budget > 0:
            chunk = min(budget, GSI_BACKLOG_RECORDS_PER_TXN)
            if not propagate(ctx, chunk):
                return
            budget -= chunk
    except Exception:
        # The propagator logs and retries the same failure; the read answers with what the index holds.
        log.exception("GSI propagation before a read failed")


def _gsi_targets(ctx: Context) -> dict[int, IndexTarget]:
    """The GSIs the backlog may write, recomputed only when the catalog changed (propagation runs after every
    write to a table with GSIs; walking every table each time would grow with the number of tables)."""
    state, catalog = ctx.indexes, ctx.catalog
    cached = state.targets
    if cached is None or cached[0] != catalog.generation:
        cached = state.targets = (catalog.generation, _live_gsis(catalog))
    return cached[1]


def _live_gsis(catalog: Catalog) -> dict[int, IndexTarget]:
    """Every GSI that is not DELETING, of every table that still exists, in every namespace (ids are unique)."""
    targets: dict[int, IndexTarget] = {}
    for td in catalog.every_table():
        if td.status == DELETING:
            continue
        space = catalog.owner(td)
        for gsi in td.gsis:
            if gsi.status != DELETING:
                targets[gsi.index_id] = IndexTarget(space, td.name, gsi.index_id)
    return targets


def maintain(ctx: Context) -> bool:
    """Background index work: apply the GSI backlog, run one backfill chunk, finish backfills.

    Called from the server's maintenance loop (and by tests); True while more work is pending. Deleted
    indexes' entries are purged by the catalog (their ids are queued when they turn DELETING).
    """
    pending = propagate(ctx)
    backfilling: list[int] = []
    for td in ctx.catalog.every_table():
        if td.status == DELETING:
            continue
        for gsi in td.gsis:
            if gsi.status == CREATING and gsi.backfilling:
                backfilling.append(gsi.index_id)
                pending |= _backfill(ctx.for_table(td), td, gsi)
    progress = ctx.engine.progress
    if progress.running(BACKFILL):
        progress.drop_except(BACKFILL, backfilling)  # an index deleted while its backfill ran
    return pending


def _backfill(ctx: Context, table: TableDef, index: IndexDef) -> bool:
    """Copy the next chunk of existing items into a new GSI; True while the backfill is not finished."""
    state = ctx.indexes
    now = ctx.clock.now()
    if now < state.last_backfill + state.backfill_interval:
        return True
    state.last_backfill = now
    job = _backfill_job(ctx, table, index)
    lay = _index_layout(table, index)
    cursor_key = keyspace.backfill_cursor_key(index.index_id)
    prefix = keyspace.table_prefix(table.table_id)
    items = 0
    size = 0
    with ctx.kv.write() as txn:
        cursor = txn.get(cursor_key)
        start = prefix if cursor is None else bytes.fromhex(orjson.loads(cursor)["next"])
        chunk = list(itertools.islice(txn.iter_range(start, keyspace.prefix_end(prefix)), state.backfill_chunk + 1))
        done = len(chunk) <= state.backfill_chunk
        for key, raw in chunk[: state.backfill_chunk]:
            item = decode_item(raw)
            entry_key = _entry_key(lay, item, key[KEY_HEAD_BYTES:])
            if entry_key is None:
                continue  # not in the index (sparse, or a key attribute of another type: DynamoDB skips it too)
            projected = _project(lay, item)
            value = raw if lay.projected is None else encode_item(projected, item_size(projected))
            before = txn.get(entry_key)
            items += before is None
            size += stored_size(value) - (0 if before is None else stored_size(before))
            txn.put(entry_key, value)
        if done:
            txn.delete(cursor_key)
        else:
            # the first key of the next chunk, as a catalog record the catalog's loader skips (unknown kind)
            txn.put(cursor_key, orjson.dumps({"kind": "backfill", "next": chunk[state.backfill_chunk][0].hex()}))
    job.done += min(len(chunk), state.backfill_chunk)
    if items:
        ctx.catalog.add_index_stats(table.name, index.index_id, items, size)
    if done:
        ctx.catalog.update(table.name, lambda td: _backfilled(td, index.name))
        ctx.engine.progress.finish(job)
    return not done


def _backfill_job(ctx: Context, table: TableDef, index: IndexDef) -> Job:
    """The progress of the backfill of ``index``, registered at its first chunk: items read of the table's
    item count (the count kept in statistics; a backfill the server resumes after a restart counts from there)."""
    progress = ctx.engine.progress
    job = progress.get(BACKFILL, index.index_id)
    if job is None:
        catalog = ctx.catalog
        job = progress.start(
            BACKFILL,
            index.index_id,
            table.name,
            index=index.name,
            total=catalog.stats(table.name)[0],
            account=catalog.account_id,
            region=catalog.region,
        )
    return job


def _backfilled(td: TableDef, index_name: str) -> TableDef:
    """The table once the backfill of ``index_name`` is over. The index turns ACTIVE when the table's own
    transition ends (``TableDef.settle``), or at once if that has already happened."""
    settled = td.status not in (CREATING, UPDATING)
    gsis = []
    for gsi in td.gsis:
        if gsi.name == index_name and gsi.backfilling:
            gsi = replace(gsi, backfilling=False)
            if settled:
                gsi = gsi.settle() or gsi
        gsis.append(gsi)
    return replace(td, gsis=tuple(gsis))


def lag_summary(ctx: Context) -> dict[str, Any]:
    """The GSI propagation lag (extension endpoint ``GET /dynastore/indexes``)."""
    return ctx.propagation.lag_summary()
