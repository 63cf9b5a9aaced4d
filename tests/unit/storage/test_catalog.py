"""Catalog: persistence, lazy lifecycle transitions, id allocation, stats, chunked purges."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dynastore.config import Config
from dynastore.errors import ResourceInUseException, ResourceNotFoundException, ValidationException
from dynastore.model.table_schema import CREATING, IndexDef, KeyAttr, KeySchema, Projection, TableDef
from dynastore.storage import keyspace
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock


def make(delay: float = 0.0) -> tuple[Catalog, MemoryKV, Config, ManualClock]:
    clock = ManualClock()
    config = Config(in_memory=True, create_table_delay=delay, delete_table_delay=delay, clock=clock)
    kv = MemoryKV()
    return Catalog.load(kv, config), kv, config, clock


def table(cat: Catalog, name: str, now: float, until: float | None = None, gsi: bool = False) -> TableDef:
    gsis: tuple[IndexDef, ...] = ()
    table_id = cat.next_table_id()
    if gsi:
        gsis = (IndexDef("g1", "GSI", KeySchema(KeyAttr("a", "S")), Projection("ALL"), cat.next_table_id()),)
    return TableDef(
        name=name,
        table_id=table_id,
        uuid="u-" + name,
        key_schema=KeySchema(KeyAttr("a", "S")),
        attribute_definitions=(KeyAttr("a", "S"),),
        created_at=now,
        gsis=gsis,
        status=CREATING,
        status_until=until if until is not None else now,
    )


def item_count(kv: MemoryKV, prefix: bytes) -> int:
    with kv.read() as txn:
        return sum(1 for _ in txn.iter_range(prefix, keyspace.prefix_end(prefix)))


def test_get_errors() -> None:
    cat, *_ = make()
    with pytest.raises(ResourceNotFoundException) as info:
        cat.get("nope")
    assert info.value.message == "Requested resource not found: Table: nope not found"
    with pytest.raises(ResourceNotFoundException) as info:
        cat.get_active("nope")
    assert info.value.message == "Requested resource not found"


def test_lazy_creating_to_active_and_reload() -> None:
    cat, kv, config, clock = make()
    cat.create(table(cat, "t1", clock.now(), until=clock.now() + 5))
    assert cat.get("t1").status == "CREATING"
    with pytest.raises(ResourceNotFoundException):
        cat.get_active("t1")
    clock.advance(5)
    assert cat.get_active("t1").status == "ACTIVE"
    again = Catalog.load(kv, config)  # persisted "CREATING until T" reads as ACTIVE after T
    assert again.get("t1").status == "ACTIVE"
    assert again.list_names() == ["t1"]
    with pytest.raises(ResourceInUseException) as info:
        cat.create(table(cat, "t1", clock.now()))
    assert info.value.message == "Table already exists: t1"


def test_ids_never_reused_across_reload() -> None:
    cat, kv, config, clock = make()
    t1 = cat.create(table(cat, "t1", clock.now(), gsi=True))
    cat.delete("t1")
    cat.maintain()
    again = Catalog.load(kv, config)
    t2 = again.create(table(again, "t1", clock.now()))
    assert t2.table_id > max(t1.table_id, *t1.index_ids())


def test_delete_with_delay_purges_in_chunks() -> None:
    cat, kv, _config, clock = make(delay=2)
    td = cat.create(table(cat, "t1", clock.now(), gsi=True))
    prefix = keyspace.table_prefix(td.table_id)
    index_prefix = keyspace.index_prefix(td.gsis[0].index_id)
    with kv.write() as txn:
        for n in range(25):
            txn.put(prefix + n.to_bytes(2, "big"), b"x")
            txn.put(index_prefix + n.to_bytes(2, "big"), b"y")
        txn.put(keyspace.table_prefix(td.table_id + 100) + b"other", b"keep")
    deleting = cat.delete("t1")
    assert deleting.status == "DELETING"
    assert cat.get("t1").status == "DELETING"
    clock.advance(2)
    with pytest.raises(ResourceNotFoundException):
        cat.get("t1")
    assert cat.maintain(max_keys=10) == 10
    assert item_count(kv, prefix) == 15
    assert cat.has_pending_purge()
    while cat.maintain(max_keys=10):
        pass
    assert item_count(kv, prefix) == 0
    assert item_count(kv, index_prefix) == 0
    assert item_count(kv, keyspace.table_prefix(td.table_id + 100)) == 1
    assert not cat.has_pending_purge()


def test_deletion_protection() -> None:
    cat, _kv, _config, clock = make()
    cat.create(replace(table(cat, "t1", clock.now()), deletion_protection=True))
    with pytest.raises(ValidationException) as info:
        cat.delete("t1")
    assert info.value.message == (
        "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first."
    )


def test_stats_in_memory_then_flushed() -> None:
    cat, kv, config, clock = make()
    cat.create(table(cat, "t1", clock.now()))
    cat.add_stats("t1", 2, 300)
    cat.add_stats("t1", -1, -100)
    cat.add_stats("missing", 1, 1)  # ignored
    assert cat.stats("t1") == (1, 200)
    live = cat.with_live_stats(cat.get("t1"))
    assert (live.item_count, live.size_bytes) == (1, 200)
    assert Catalog.load(kv, config).stats("t1") == (0, 0)  # not written per item
    clock.advance(61)
    cat.maintain()
    assert Catalog.load(kv, config).stats("t1") == (1, 200)
    cat.add_stats("t1", 1, 50)
    cat.close()
    assert Catalog.load(kv, config).stats("t1") == (2, 250)


def test_update_queues_dropped_index_for_purge() -> None:
    cat, kv, _config, clock = make()
    td = cat.create(table(cat, "t1", clock.now(), gsi=True))
    index_prefix = keyspace.index_prefix(td.gsis[0].index_id)
    with kv.write() as txn:
        txn.put(index_prefix + b"k", b"v")
    cat.update("t1", lambda cur: replace(cur, gsis=()))
    cat.maintain()
    assert item_count(kv, index_prefix) == 0
