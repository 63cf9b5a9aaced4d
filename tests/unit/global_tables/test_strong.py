"""Writes and strong reads of global tables with multi-region strong consistency (global_tables/strong.py): a write
is evaluated against the newest committed state, committed to the strong log only if no other region committed
the item since, and applied; every region's replica catches up with the log; regions of one server spread."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from dynastore.engine import tables, writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import ReplicatedWriteConflictException, ServiceUnavailable
from dynastore.expressions import ExpressionContext
from dynastore.global_tables.changes import change_from_bytes
from dynastore.global_tables.strong import StrongTables
from dynastore.global_tables.strong_log import StrongLogUnavailable
from dynastore.model.table_schema import ACTIVE, ReplicaDef, TableDef
from dynastore.model.values import Item
from tests.unit.engine.tables import create, item
from tests.unit.global_tables.regions import EAST, WEST, Regions, get

LOG_ID = "log-1"
KEY = {"pk": {"S": "a"}}


class MemoryLog:
    """A strong log in memory, with the same rules as etcd's (a commit compares the record's revision)."""

    def __init__(self) -> None:
        self.records: dict[bytes, tuple[int, bytes]] = {}
        self.revision = 0
        self.down = False
        self.before_commit: list[object] = []  # coroutines factories run just before the next commit

    async def read(self, log_id: str, key: bytes) -> tuple[int, bytes | None]:
        self._check()
        revision, value = self.records.get(key, (0, None))
        return revision, value

    async def commit(self, log_id: str, key: bytes, expected: int, value: bytes) -> int | None:
        self._check()
        while self.before_commit:
            await self.before_commit.pop(0)()  # type: ignore[operator]
        if self.records.get(key, (0, b""))[0] != expected:
            return None
        self.revision += 1
        self.records[key] = (self.revision, value)
        return self.revision

    async def changes_since(self, log_id: str, revision: int) -> tuple[list[bytes], int]:
        self._check()
        newer = sorted(record for record in self.records.values() if record[0] > revision)
        return [value for _, value in newer], self.revision

    async def drop(self, log_id: str) -> None:
        self.records.clear()

    def close(self) -> None:
        pass

    def _check(self) -> None:
        if self.down:
            raise StrongLogUnavailable("down")


def strong_pair(regions: Regions) -> tuple[TableDef, TableDef]:
    """An MRSC table "t" in both regions, each listing the other."""
    east = _strong(regions.east, WEST)
    west = _strong(regions.west, EAST)
    return east, west


def _strong(ctx: Context, other: str) -> TableDef:
    table = create(ctx, "t")
    changed = dataclasses.replace(table, strong_log=LOG_ID, replicas=(ReplicaDef(other, ACTIVE),))
    return tables.change(ctx, "t", lambda _: changed)


def put(strong: StrongTables, ctx: Context, table: TableDef, new: Item, condition: object = None) -> None:
    plan = writes.PutPlan(new, condition, 30)
    asyncio.run(strong.write(ctx, table, KEY, plan))


def test_a_write_is_committed_to_the_log_then_applied_locally() -> None:
    regions, log = Regions(), MemoryLog()
    strong = StrongTables(regions.replicator.clock, log)
    east, _ = strong_pair(regions)
    put(strong, regions.east, east, item("a", v="one"))
    assert get(regions.east, "t", "a") == item("a", v="one")
    ((_, value),) = log.records.values()
    assert change_from_bytes(value).item == item("a", v="one")
    assert get(regions.west, "t", "a") is None  # not followed yet


def test_another_region_catches_up_before_a_strong_read() -> None:
    regions, log = Regions(), MemoryLog()
    strong = StrongTables(regions.replicator.clock, log)
    east, west = strong_pair(regions)
    put(strong, regions.east, east, item("a", v="one"))
    assert asyncio.run(strong.catch_up(regions.west, west)) == 1
    assert get(regions.west, "t", "a") == item("a", v="one")
    assert asyncio.run(strong.catch_up(regions.west, west)) == 0  # nothing new


def test_a_write_sees_the_newest_commit_of_another_region_first() -> None:
    regions, log = Regions(), MemoryLog()
    strong = StrongTables(regions.replicator.clock, log)
    east, west = strong_pair(regions)
    put(strong, regions.east, east, item("a", v="one"))
    # West has not followed yet; its conditional write is evaluated against east's commit, not its own replica.
    plan = writes.UpdatePlan(KEY, None, _condition("attribute_exists(v)"))
    result = asyncio.run(strong.write(regions.west, west, KEY, plan))
    assert result.old == item("a", v="one")


def test_a_commit_from_another_region_in_between_is_a_conflict() -> None:
    regions, log = Regions(), MemoryLog()
    strong_east = StrongTables(regions.replicator.clock, log)
    strong_west = StrongTables(regions.replicator.clock, log)
    east, west = strong_pair(regions)

    async def west_writes() -> None:
        await strong_west.write(regions.west, west, KEY, writes.PutPlan(item("a", v="west"), None, 30))

    log.before_commit.append(west_writes)
    with pytest.raises(ReplicatedWriteConflictException) as raised:
        put(strong_east, regions.east, east, item("a", v="east"))
    assert raised.value.message == "One or more items in the request are being modified by a request in another Region"
    assert get(regions.east, "t", "a") is None  # nothing of the refused write
    assert change_from_bytes(log.records[next(iter(log.records))][1]).item == item("a", v="west")
    put(strong_east, regions.east, east, item("a", v="east"))  # tried again: it wins now
    assert get(regions.east, "t", "a") == item("a", v="east")


def test_the_newer_write_carries_the_later_version_whatever_the_clocks() -> None:
    regions, log = Regions(), MemoryLog()
    strong = StrongTables(regions.replicator.clock, log)
    east, west = strong_pair(regions)
    put(strong, regions.east, east, item("a", v="one"))
    put(strong, regions.west, west, item("a", v="two"))
    asyncio.run(strong.catch_up(regions.east, east))
    assert get(regions.east, "t", "a") == item("a", v="two")  # the later commit wins everywhere


def test_a_log_that_cannot_be_reached_refuses_with_503_and_writes_nothing() -> None:
    regions, log = Regions(), MemoryLog()
    strong = StrongTables(regions.replicator.clock, log)
    east, _ = strong_pair(regions)
    log.down = True
    with pytest.raises(ServiceUnavailable):
        put(strong, regions.east, east, item("a", v="one"))
    assert get(regions.east, "t", "a") is None


def test_a_failed_condition_commits_nothing() -> None:
    regions, log = Regions(), MemoryLog()
    strong = StrongTables(regions.replicator.clock, log)
    east, _ = strong_pair(regions)
    plan = writes.DeletePlan(return_old=True)
    asyncio.run(strong.write(regions.east, east, KEY, plan))
    revision = log.revision
    failing = writes.PutPlan(item("a", v="x"), _condition("attribute_exists(pk)"), 30)
    with pytest.raises(writes.ConditionFailedError):
        asyncio.run(strong.write(regions.east, east, KEY, failing))
    assert log.revision == revision


def test_without_a_log_a_write_spreads_to_the_regions_of_this_server() -> None:
    regions = Regions()
    strong = StrongTables(regions.replicator.clock)
    east, _ = strong_pair(regions)
    writes.perform(regions.east, east, _key(east), writes.PutPlan(item("a", v="one"), None, 30))
    strong.spread(regions.east, east, KEY)
    assert get(regions.west, "t", "a") == item("a", v="one")


def test_regions_of_peers_are_not_spread_to() -> None:
    regions = Regions()
    strong = StrongTables(regions.replicator.clock, peers=frozenset({WEST}))
    east, _ = strong_pair(regions)
    writes.perform(regions.east, east, _key(east), writes.PutPlan(item("a", v="one"), None, 30))
    strong.spread(regions.east, east, KEY)
    assert get(regions.west, "t", "a") is None


def _key(table: TableDef) -> bytes:
    return storage_key(table, KEY)


def _condition(text: str) -> object:
    return ExpressionContext(None, None).condition("ConditionExpression", text)
