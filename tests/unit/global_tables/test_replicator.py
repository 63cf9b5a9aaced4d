"""The replicator in process: regions of one server reached through LocalLink. A replica is created, seeded and
made ACTIVE; each region's writes reach the other; a region that cannot be reached keeps its cursor and catches up
(also after a restart); tombstones go after their retention, versions with their table; a table that is not
global gets no versions."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import orjson
import pytest

from dynastore.app import build_replicator
from dynastore.engine import tables
from dynastore.engine.keys import storage_key
from dynastore.global_tables import replicas, replicator, versions
from dynastore.global_tables.changes import ChangeRefused, ReplicatedChange
from dynastore.global_tables.links import Link, LinkDown
from dynastore.model.table_schema import ACTIVE, CREATING, UPDATING, TableDef, TtlSpec
from dynastore.storage import keyspace
from tests.unit.engine.tables import create, item, restart
from tests.unit.global_tables.regions import EAST, STREAM, WEST, Regions, get, remove, settle, write


def global_table(regions: Regions, seed: int = 0) -> TableDef:
    table = create(regions.east, "t", stream=STREAM)
    for n in range(seed):
        write(regions.east, table, item(f"seed{n}"))
    replicas.add_replica(regions.east, "t", WEST)
    settle(regions.replicator)
    return regions.east.catalog.get("t")


class Flaky:
    """A link that fails while ``down``, else passes the calls on."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.down = False
        self.region = link.region

    async def send(self, account: str, table: str, changes: list[ReplicatedChange]) -> None:
        if self.down:
            raise LinkDown("cut")
        await self.link.send(account, table, changes)

    async def put_replica_set(self, account: str, definition: dict[str, Any]) -> None:
        if self.down:
            raise LinkDown("cut")
        await self.link.put_replica_set(account, definition)

    async def drop_replica(self, account: str, table: str) -> None:
        await self.link.drop_replica(account, table)


def cut(replicator_: replicator.GlobalReplicator, region: str) -> Flaky:
    """The replicator's link to ``region``, made flaky."""
    flaky = Flaky(replicator_.links.link(region))
    replicator_.links._links[region] = flaky
    return flaky


def vkeys(regions: Regions, table: TableDef) -> list[bytes]:
    prefix = keyspace.version_prefix(table.table_id)
    with regions.east.kv.read() as txn:
        return [k for k, _ in txn.iter_range(prefix, keyspace.prefix_end(prefix))]


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replicator, "BACKOFF_FIRST", 0.0)
    monkeypatch.setattr(replicator, "BACKOFF_MAX", 0.0)


def test_adding_a_replica_creates_seeds_and_activates_it() -> None:
    regions = Regions()
    table = create(regions.east, "t", stream=STREAM)
    for n in range(5):
        write(regions.east, table, item(f"seed{n}"))
    remove(regions.east, table, "seed0")

    added = replicas.add_replica(regions.east, "t", WEST)
    assert (added.status, added.replicas[0].status, added.global_table_version) == (UPDATING, CREATING, "2019.11.21")
    settle(regions.replicator)

    east = regions.east.catalog.get("t")
    assert (east.status, [(r.region, r.status) for r in east.replicas]) == (ACTIVE, [(WEST, ACTIVE)])
    west = regions.west.catalog.get("t")
    assert [(r.region, r.status) for r in west.replicas] == [(EAST, ACTIVE)]
    assert west.table_id != east.table_id and west.stream == STREAM
    assert [get(regions.west, "t", f"seed{n}") for n in range(5)] == [None] + [item(f"seed{n}") for n in range(1, 5)]


def test_each_region_s_writes_reach_the_other() -> None:
    regions = Regions()
    east = global_table(regions)
    west = regions.west.catalog.get("t")
    write(regions.east, east, item("a", v="east"))
    write(regions.west, west, item("b", v="west"))
    settle(regions.replicator)
    assert get(regions.west, "t", "a") == item("a", v="east")
    assert get(regions.east, "t", "b") == item("b", v="west")

    remove(regions.west, west, "a")
    settle(regions.replicator)
    assert get(regions.east, "t", "a") is None
    with regions.east.kv.read() as txn:
        tombstone = versions.read(txn, storage_key(east, {"pk": {"S": "a"}}))
    assert tombstone is not None and (tombstone.region, tombstone.deleted) == (WEST, True)


def test_concurrent_writes_converge_on_the_later_stamp() -> None:
    regions = Regions()
    east = global_table(regions)
    west = regions.west.catalog.get("t")
    write(regions.east, east, item("x", v="east"))
    write(regions.west, west, item("x", v="west"))  # stamped later by the same clock
    settle(regions.replicator)
    assert get(regions.east, "t", "x") == get(regions.west, "t", "x") == item("x", v="west")


def test_a_region_cut_off_keeps_its_cursor_and_catches_up() -> None:
    regions = Regions()
    east = global_table(regions)
    flaky = cut(regions.replicator, WEST)
    flaky.down = True
    for n in range(3):
        write(regions.east, east, item(f"k{n}"))
    settle(regions.replicator)
    assert get(regions.west, "t", "k0") is None
    [pair] = [p for p in regions.replicator.view() if p["source"] == EAST]
    assert (pair["pending"], pair["error"]) == (3, "cut")

    flaky.down = False
    settle(regions.replicator)
    assert [get(regions.west, "t", f"k{n}") for n in range(3)] == [item(f"k{n}") for n in range(3)]
    [pair] = [p for p in regions.replicator.view() if p["source"] == EAST]
    assert (pair["pending"], pair["error"], pair["shipped"]) == (0, None, 3)
    assert pair["latency_p99_ms"] == 0.0  # the clock stood still


def test_the_cursors_survive_a_restart() -> None:
    regions = Regions()
    east = global_table(regions)
    write(regions.east, east, item("before"))
    settle(regions.replicator)
    regions.replicator.save(force=True)
    saved = orjson.loads(regions.east.changelog.load_checkpoint(regions.replicator) or b"{}")
    arn = f"arn:aws:dynamodb:{EAST}:000000000000:table/t"
    assert saved[arn] == {WEST: regions.east.changelog.next_seq - 1}

    again = restart(regions.east)
    second = build_replicator(again, again.config)
    assert second._cursors == saved
    flaky = cut(second, WEST)
    write(again, again.catalog.get("t"), item("after"))
    flaky.down = True
    settle(second)
    assert second._cursors[arn][WEST] == saved[arn][WEST]  # not acknowledged: not moved
    flaky.down = False
    settle(second)
    west_ctx = again.in_namespace("000000000000", WEST)
    assert get(west_ctx, "t", "after") == item("after")


def test_the_log_holds_the_records_a_target_has_not_acknowledged() -> None:
    regions = Regions()
    east = global_table(regions)
    flaky = cut(regions.replicator, WEST)
    flaky.down = True
    write(regions.east, east, item("held"))
    settle(regions.replicator)
    [record] = regions.east.changelog.read(-1, 1000, (east.table_id,))[-1:]
    assert regions.replicator.holds(record, regions.clock.now())
    flaky.down = False
    settle(regions.replicator)
    assert not regions.replicator.holds(record, regions.clock.now())


def test_removing_a_replica_drops_its_table_and_leaves_every_list() -> None:
    regions = Regions()
    global_table(regions)
    replicas.remove_replica(regions.east, "t", WEST)
    settle(regions.replicator)
    assert regions.east.catalog.get("t").replicas == ()
    assert regions.west.catalog.find("t") is None


def test_deleting_a_replica_table_takes_it_off_the_other_regions_lists() -> None:
    regions = Regions()
    global_table(regions)
    tables.delete(regions.west, "t")
    settle(regions.replicator)
    assert regions.east.catalog.get("t").replicas == ()


def test_tombstones_go_after_their_retention_and_not_before() -> None:
    regions = Regions(tombstone_retention_seconds=100.0)
    east = global_table(regions)
    write(regions.east, east, item("gone"))
    write(regions.east, east, item("kept"))
    remove(regions.east, east, "gone")
    regions.clock.advance(50)
    assert regions.replicator.purge_tombstones() == 0
    regions.clock.advance(51)
    assert regions.replicator.purge_tombstones() == 1
    assert len(vkeys(regions, east)) == 1  # the live item's version stays


def test_a_table_s_versions_are_purged_with_it() -> None:
    regions = Regions()
    east = global_table(regions)
    write(regions.east, east, item("a"))
    assert vkeys(regions, east)
    replicas.remove_replica(regions.east, "t", WEST)
    settle(regions.replicator)
    tables.delete(regions.east, "t")
    regions.east.catalog.maintain()
    assert vkeys(regions, east) == []


def test_a_table_that_is_not_global_gets_no_versions_and_no_versioner() -> None:
    regions = Regions()
    table = create(regions.east, "plain", stream=STREAM)
    write(regions.east, table, item("a"))
    assert regions.east.changelog.plan(table).versioner is None
    assert vkeys(regions, table) == []


def test_a_third_region_gets_every_region_s_items_and_changes() -> None:
    regions = Regions()
    east = global_table(regions)
    west = regions.west.catalog.get("t")
    write(regions.west, west, item("from-west"))
    settle(regions.replicator)
    europe = regions.east.in_namespace("000000000000", "eu-west-1")

    replicas.add_replica(regions.east, "t", "eu-west-1")
    settle(regions.replicator)
    for ctx, others in ((regions.east, {WEST, "eu-west-1"}), (regions.west, {EAST, "eu-west-1"})):
        listed = ctx.catalog.get("t").replicas
        assert {(r.region, r.status) for r in listed} == {(region, ACTIVE) for region in others}
    assert get(europe, "t", "from-west") == item("from-west")  # seeded by us-east-1, which had it

    write(regions.west, west, item("later", v="west"))
    write(europe, europe.catalog.get("t"), item("eu", v="europe"))
    write(regions.east, east, item("east", v="east"))
    settle(regions.replicator)
    for ctx in (regions.east, regions.west, europe):
        assert [get(ctx, "t", pk) for pk in ("later", "eu", "east")] == [
            item("later", v="west"),
            item("eu", v="europe"),
            item("east", v="east"),
        ]


def test_a_replica_s_own_settings_are_updated() -> None:
    regions = Regions()
    global_table(regions)
    overrides = replicas.ReplicaOverrides(read_capacity_override=7, table_class="STANDARD_INFREQUENT_ACCESS")
    updated = replicas.update_replica(regions.east, "t", WEST, overrides)
    [replica] = updated.replicas
    assert (replica.region, replica.status, replica.read_capacity_override, replica.table_class) == (
        WEST,
        ACTIVE,
        7,
        "STANDARD_INFREQUENT_ACCESS",
    )


def test_a_delete_of_an_item_its_region_does_not_hold_yet_wins_over_the_older_write() -> None:
    regions = Regions()
    global_table(regions)
    west = regions.west.catalog.get("t")
    flaky = cut(regions.replicator, EAST)
    flaky.down = True
    write(regions.west, west, item("x", v="west"))
    settle(regions.replicator)
    assert get(regions.east, "t", "x") is None  # not there yet
    remove(regions.east, regions.east.catalog.get("t"), "x")  # later: deletes nothing here, but it happened
    flaky.down = False
    settle(regions.replicator)
    assert get(regions.east, "t", "x") is None
    assert get(regions.west, "t", "x") is None


def test_a_write_that_changes_nothing_here_still_wins_over_an_older_write_of_another_region() -> None:
    regions = Regions()
    east = global_table(regions)
    west = regions.west.catalog.get("t")
    write(regions.east, east, item("x", v="first"))
    settle(regions.replicator)
    flaky = cut(regions.replicator, EAST)
    flaky.down = True
    write(regions.west, west, item("x", v="west"))
    write(regions.east, east, item("x", v="first"))  # as the item is here, but later than the west write
    flaky.down = False
    settle(regions.replicator)
    assert get(regions.east, "t", "x") == get(regions.west, "t", "x") == item("x", v="first")


class Silent:
    """A link to a region that never answers (a paused server): each call waits until the round's loop ends."""

    def __init__(self, region: str) -> None:
        self.region = region

    async def send(self, account: str, table: str, changes: list[ReplicatedChange]) -> None:
        await asyncio.Event().wait()

    async def put_replica_set(self, account: str, definition: dict[str, Any]) -> None:
        await asyncio.Event().wait()

    async def drop_replica(self, account: str, table: str) -> None:
        await asyncio.Event().wait()


def test_a_region_that_does_not_answer_holds_up_no_other_region() -> None:
    regions = Regions()
    east = global_table(regions)
    europe = regions.east.in_namespace("000000000000", "eu-west-1")
    replicas.add_replica(regions.east, "t", "eu-west-1")
    settle(regions.replicator)
    regions.replicator.links._links[WEST] = Silent(WEST)
    write(regions.east, east, item("k"))
    asyncio.run(asyncio.wait_for(regions.replicator.step(), 30))  # one round: it waits for no silent region
    assert get(europe, "t", "k") == item("k")
    assert get(regions.west, "t", "k") is None


class Refusing:
    """A link whose region refuses the changes of the items ``refused`` names (``final``: for good)."""

    def __init__(self, link: Link, refused: set[str], final: bool = False) -> None:
        self.link = link
        self.refused = refused
        self.final = final
        self.region = link.region

    async def send(self, account: str, table: str, changes: list[ReplicatedChange]) -> None:
        for index, change in enumerate(changes):
            if change.key["pk"]["S"] in self.refused:
                raise ChangeRefused("ValidationException: refused here", index, self.final)
        await self.link.send(account, table, changes)

    async def put_replica_set(self, account: str, definition: dict[str, Any]) -> None:
        await self.link.put_replica_set(account, definition)

    async def drop_replica(self, account: str, table: str) -> None:
        await self.link.drop_replica(account, table)


def refusing(regions: Regions, refused: set[str], final: bool = False) -> Refusing:
    link = Refusing(regions.replicator.links.link(WEST), refused, final)
    regions.replicator.links._links[WEST] = link
    return link


def rounds(replicator_: replicator.GlobalReplicator, count: int) -> None:
    for _ in range(count):
        asyncio.run(replicator_.step())


def east_to_west(regions: Regions) -> dict[str, Any]:
    [pair] = [p for p in regions.replicator.view() if p["source"] == EAST]
    return pair


def test_a_refused_change_is_tried_a_bounded_number_of_times_then_skipped_and_the_rest_flow(
    caplog: pytest.LogCaptureFixture,
) -> None:
    regions = Regions()
    east = global_table(regions)
    refusing(regions, {"bad"})
    write(regions.east, east, item("bad"))
    write(regions.east, east, item("good"))

    rounds(regions.replicator, replicator.REFUSED_ATTEMPTS - 1)
    assert get(regions.west, "t", "good") is None  # held up behind the refused change for now
    assert east_to_west(regions)["skipped"] == 0
    assert east_to_west(regions)["error"] == "us-west-2 refused a change (4 of 5): ValidationException: refused here"

    with caplog.at_level("WARNING", logger="dynastore.global_tables"):
        rounds(regions.replicator, 3)
    assert get(regions.west, "t", "good") == item("good")
    assert get(regions.west, "t", "bad") is None
    pair = east_to_west(regions)
    assert (pair["skipped"], pair["pending"], pair["error"]) == (1, 0, None)
    skips = [r.getMessage() for r in caplog.records if "skips" in r.getMessage()]
    assert skips == [
        "replication of arn:aws:dynamodb:us-east-1:000000000000:table/t to us-west-2 skips the change of the item "
        "{'pk': {'S': 'bad'}}: ValidationException: refused here"
    ]

    write(regions.east, east, item("later"))  # the changes after it flow
    settle(regions.replicator)
    assert get(regions.west, "t", "later") == item("later")
    assert east_to_west(regions)["skipped"] == 1


def test_a_change_that_can_never_be_applied_is_skipped_at_once() -> None:
    regions = Regions()
    east = global_table(regions)
    refusing(regions, {"bad"}, final=True)
    write(regions.east, east, item("bad"))
    write(regions.east, east, item("good"))
    rounds(regions.replicator, 1)
    assert get(regions.west, "t", "good") == item("good")
    assert east_to_west(regions)["skipped"] == 1


def test_a_region_that_cannot_be_reached_is_retried_for_ever() -> None:
    regions = Regions()
    east = global_table(regions)
    flaky = cut(regions.replicator, WEST)
    flaky.down = True
    write(regions.east, east, item("k"))
    rounds(regions.replicator, 3 * replicator.REFUSED_ATTEMPTS)
    assert (east_to_west(regions)["skipped"], east_to_west(regions)["pending"]) == (0, 1)
    flaky.down = False
    settle(regions.replicator)
    assert get(regions.west, "t", "k") == item("k")


def test_a_replica_table_being_deleted_refuses_the_whole_batch() -> None:
    regions = Regions()
    global_table(regions)
    link = regions.replicator.links.link(WEST)
    tables.delete(regions.west, "t")
    with pytest.raises(ChangeRefused) as refused:
        asyncio.run(link.send(regions.east.namespace.account_id, "t", []))
    assert (refused.value.index, refused.value.final, refused.value.reason) == (
        None,
        False,
        "no replica of t in us-west-2",
    )


def test_a_replica_s_own_settings_reach_its_table_and_every_list_and_stay() -> None:
    regions = Regions()
    table = create(regions.east, "t", 5, 5, stream=STREAM)
    replicas.add_replica(regions.east, "t", WEST)
    settle(regions.replicator)
    europe = regions.east.in_namespace("000000000000", "eu-west-1")
    replicas.add_replica(regions.east, "t", "eu-west-1")
    settle(regions.replicator)
    assert regions.west.catalog.get("t").throughput.read == table.throughput.read == 5

    regions.clock.advance(1)
    overrides = replicas.ReplicaOverrides(read_capacity_override=7, table_class="STANDARD_INFREQUENT_ACCESS")
    set_in_east = replicas.update_replica(regions.east, "t", WEST, overrides).replica(WEST)
    assert set_in_east is not None
    settle(regions.replicator)
    west = regions.west.catalog.get("t")
    assert (west.throughput.read, west.table_class) == (7, "STANDARD_INFREQUENT_ACCESS")
    assert west.own_overrides_version == set_in_east.overrides_version
    assert europe.catalog.get("t").replica(WEST) == set_in_east  # the third region lists them too
    assert regions.east.catalog.get("t").throughput.read == 5  # the others keep their own
    assert settle(regions.replicator) == 0  # nothing announced back and forth

    # Set again from eu-west-1 with its clock behind: still after the change it has seen, so it wins everywhere.
    regions.clock.advance(-60)
    later = replicas.ReplicaOverrides(read_capacity_override=9)
    set_in_europe = replicas.update_replica(europe, "t", WEST, later).replica(WEST)
    assert set_in_europe is not None and set_in_europe.overrides_version is not None
    assert set_in_east.overrides_version is not None
    assert set_in_europe.overrides_version > set_in_east.overrides_version
    settle(regions.replicator)
    west = regions.west.catalog.get("t")
    assert (west.throughput.read, west.table_class) == (9, None)  # a class left out is the source's again
    assert regions.east.catalog.get("t").replica(WEST) == set_in_europe
    assert settle(regions.replicator) == 0


def test_settings_changed_in_two_regions_at_once_converge_on_the_later_change_and_stay() -> None:
    regions = Regions()
    global_table(regions)
    tables.change(regions.east, "t", lambda td: dataclasses.replace(td, ttl=TtlSpec("east_expiry", True)))
    tables.change(regions.west, "t", lambda td: dataclasses.replace(td, ttl=TtlSpec("west_expiry", True)))
    settle(regions.replicator)
    east, west = regions.east.catalog.get("t"), regions.west.catalog.get("t")
    assert east.ttl == west.ttl
    assert east.settings_version == west.settings_version
    assert east.settings_version is not None
    winner = east.settings_version[1]  # the change stamped last, in either region
    assert east.ttl == TtlSpec(f"{winner.split('-')[1]}_expiry", True)
    assert settle(regions.replicator) == 0  # nothing announced back and forth


def test_a_settings_change_not_announced_before_a_restart_is_announced_after_it() -> None:
    regions = Regions()
    global_table(regions)
    flaky = cut(regions.replicator, WEST)
    flaky.down = True
    tables.change(regions.east, "t", lambda td: dataclasses.replace(td, ttl=TtlSpec("expiry", True)))
    settle(regions.replicator)  # stamped, but us-west-2 could not be told
    assert regions.west.catalog.get("t").ttl is None

    again = restart(regions.east)
    settle(build_replicator(again, again.config))
    assert again.in_namespace("000000000000", WEST).catalog.get("t").ttl == TtlSpec("expiry", True)
