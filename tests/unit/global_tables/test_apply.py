"""Applying replicated changes: last writer wins per item, a tombstone keeps a deleted item deleted, and a batch
applied twice changes nothing the second time."""

from __future__ import annotations

import pytest

from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import ItemCollectionSizeLimitExceededException
from dynastore.global_tables import versions
from dynastore.global_tables.apply import HeldByTransaction, apply_changes
from dynastore.global_tables.changes import ChangeRefused, ReplicatedChange, from_wire, to_wire
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.global_tables.versions import Version
from dynastore.model.table_schema import TableDef
from dynastore.storage.kv import WriteTxn
from tests.unit.engine.tables import create, item
from tests.unit.global_tables.regions import EAST, STREAM, WEST, Regions, get

KEY = {"pk": {"S": "a"}}


def change(value: str | None, stamp: int, region: str = EAST) -> ReplicatedChange:
    """The change of item "a" to ``v=value`` (None: its deletion) stamped ``stamp`` in ``region``."""
    new = None if value is None else item("a", v=value)
    return ReplicatedChange(KEY, new, Version(stamp, region, value is None), 0)


def replica() -> tuple[Regions, TableDef]:
    regions = Regions()
    return regions, create(regions.west, "t", stream=STREAM)


def version_of(regions: Regions, table: TableDef) -> Version | None:
    with regions.west.kv.read() as txn:
        return versions.read(txn, storage_key(table, KEY))


def test_a_newer_change_is_applied_with_its_version() -> None:
    regions, table = replica()
    assert apply_changes(regions.west, table, [change("one", 100)]) == 1
    assert get(regions.west, "t", "a") == item("a", v="one")
    assert version_of(regions, table) == Version(100, EAST, False)


def test_an_older_write_arriving_late_is_dropped() -> None:
    regions, table = replica()
    apply_changes(regions.west, table, [change("new", 200)])
    assert apply_changes(regions.west, table, [change("old", 150, WEST)]) == 0
    assert get(regions.west, "t", "a") == item("a", v="new")
    assert version_of(regions, table) == Version(200, EAST, False)


def test_a_tombstone_blocks_the_resurrection_of_a_deleted_item() -> None:
    regions, table = replica()
    apply_changes(regions.west, table, [change("v1", 100), change(None, 300)])
    assert get(regions.west, "t", "a") is None
    assert version_of(regions, table) == Version(300, EAST, True)  # the tombstone outlives the item

    assert apply_changes(regions.west, table, [change("late", 250, WEST)]) == 0  # written before the delete
    assert get(regions.west, "t", "a") is None

    assert apply_changes(regions.west, table, [change("again", 301, WEST)]) == 1  # written after it
    assert get(regions.west, "t", "a") == item("a", v="again")


def test_a_batch_applied_twice_changes_nothing_the_second_time() -> None:
    regions, table = replica()
    batch = [change("v1", 100), ReplicatedChange({"pk": {"S": "b"}}, item("b"), Version(101, EAST, False), 0)]
    assert apply_changes(regions.west, table, batch) == 2
    records = regions.west.changelog.next_seq
    assert apply_changes(regions.west, table, batch) == 0
    assert regions.west.changelog.next_seq == records  # no write, so no stream record either
    assert get(regions.west, "t", "a") == item("a", v="v1")
    assert regions.west.catalog.stats("t") == (2, regions.west.catalog.stats("t")[1])


def test_the_clock_observes_the_stamps_applied() -> None:
    regions, table = replica()
    clock = HybridClock(regions.clock)
    far_ahead = clock.now() + (10_000 << 16)
    apply_changes(regions.west, table, [change("v", far_ahead)], clock)
    assert clock.now() > far_ahead


def test_a_batch_travels_as_json_with_typed_attribute_values() -> None:
    batch = [change("v", 5), change(None, 6, WEST)]
    wire = to_wire(batch)
    assert wire.startswith(b'{"Changes":[{"Key":{"pk":{"S":"a"}},"Item":{"pk":{"S":"a"},"v":{"S":"v"}},"Stamp":5,')
    assert from_wire(wire) == batch


def test_a_change_to_an_item_a_transaction_holds_waits_for_the_transaction() -> None:
    regions = Regions(transaction_lock_hold=30.0)
    table = create(regions.west, "t", stream=STREAM)
    other = ReplicatedChange({"pk": {"S": "b"}}, item("b"), Version(90, EAST, False), 0)
    regions.west.locks.lock([storage_key(table, KEY)], regions.west.kv.commit_seq)

    with pytest.raises(HeldByTransaction):
        apply_changes(regions.west, table, [other, change("replicated", 100)])
    assert get(regions.west, "t", "a") is None
    assert get(regions.west, "t", "b") is None  # nothing of the batch is applied while one item is held

    regions.clock.advance(31)  # the transaction's commit is final: its items are free
    assert apply_changes(regions.west, table, [other, change("replicated", 100)]) == 2
    assert get(regions.west, "t", "a") == item("a", v="replicated")


def test_a_change_the_write_path_refuses_aborts_the_batch_naming_the_change(monkeypatch: pytest.MonkeyPatch) -> None:
    regions, table = replica()
    real = writes.apply_in

    def refuse_b(ctx: Context, txn: WriteTxn, td: TableDef, key: bytes, plan: writes.Plan) -> writes.WriteResult:
        if key == storage_key(td, {"pk": {"S": "b"}}):
            raise ItemCollectionSizeLimitExceededException("Item collection too large")
        return real(ctx, txn, td, key, plan)

    monkeypatch.setattr(writes, "apply_in", refuse_b)
    other = ReplicatedChange({"pk": {"S": "b"}}, item("b"), Version(101, EAST, False), 0)
    with pytest.raises(ChangeRefused) as refused:
        apply_changes(regions.west, table, [change("v", 100), other])
    assert (refused.value.index, refused.value.final) == (1, False)
    assert refused.value.reason == "ItemCollectionSizeLimitExceededException: Item collection too large"
    assert get(regions.west, "t", "a") is None  # nothing of the batch is applied


def test_a_change_whose_key_does_not_fit_is_refused_for_good() -> None:
    regions, table = replica()
    misfit = ReplicatedChange({"pk": {"N": "1"}}, None, Version(101, EAST, True), 0)
    with pytest.raises(ChangeRefused) as refused:
        apply_changes(regions.west, table, [change("v", 100), misfit])
    assert (refused.value.index, refused.value.final) == (1, True)
    assert get(regions.west, "t", "a") is None
