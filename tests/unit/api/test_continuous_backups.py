"""UpdateContinuousBackups / DescribeContinuousBackups and the point-in-time archive behind them, through the
api layer on an in-memory dynastore with a ManualClock (the bases are held in memory: tests/unit/engine/
pitr_stand_in.py). The restore itself and the wire are tested end to end (tests/e2e/test_point_in_time.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dynastore.engine import continuous_backups, retention
from dynastore.engine.capacity.view import partitions_view
from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import DAY_SECONDS, archive_of
from dynastore.engine.point_in_time import items_at, net_changes, restorable_window
from dynastore.engine.recovery_state import Progress
from dynastore.errors import (
    ContinuousBackupsUnavailableException,
    DynamoError,
    LimitExceededException,
    PointInTimeRecoveryUnavailableException,
    SerializationException,
    TableInUseException,
    TableNotFoundException,
    ValidationException,
)
from dynastore.storage.itemcodec import decode_item
from dynastore.storage.kv import StorageUnavailableError
from tests.unit.api.operations import T0, call, create, make_ctx
from tests.unit.engine.pitr_stand_in import MemoryImages, use_memory_images
from tests.unit.engine.tables import restart

ON = {"PointInTimeRecoveryEnabled": True}
OFF = {"PointInTimeRecoveryEnabled": False}


def setup(**config: Any) -> tuple[Context, dict[str, Any], Any, MemoryImages]:
    ctx, ops, clock = make_ctx(**config)
    images = use_memory_images(ctx)
    create(ops, "tbl", 5, 5)
    return ctx, ops, clock, images


def message(exc_type: type[DynamoError], ops: dict[str, Any], op: str, **body: Any) -> str:
    with pytest.raises(exc_type) as info:
        call(ops, op, **body)
    assert type(info.value) is exc_type
    assert info.value.message is not None
    return info.value.message


def put(ops: dict[str, Any], pk: str, value: str) -> None:
    call(ops, "PutItem", TableName="tbl", Item={"pk": {"S": pk}, "v": {"S": value}})


def delete(ops: dict[str, Any], pk: str) -> None:
    call(ops, "DeleteItem", TableName="tbl", Key={"pk": {"S": pk}})


def take_bases(ctx: Context) -> int:
    """Take the bases due now, as the maintenance pass has them taken in the background."""
    return asyncio.run(continuous_backups.take_due_bases(ctx))


def state_at(ctx: Context, instant: float) -> dict[str, str]:
    table = ctx.catalog.get("tbl")
    return {i["pk"]["S"]: i["v"]["S"] for i in map(decode_item, items_at(ctx, table, instant))}


def test_a_new_table_has_continuous_backups_and_no_point_in_time_recovery() -> None:
    ctx, ops, _, _ = setup()
    assert call(ops, "DescribeContinuousBackups", TableName="tbl") == {
        "ContinuousBackupsDescription": {
            "ContinuousBackupsStatus": "ENABLED",
            "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
        }
    }


def test_enabling_reports_the_period_and_a_window_starting_now() -> None:
    ctx, ops, clock, images = setup()
    out = call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    assert out["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"] == {
        "PointInTimeRecoveryStatus": "ENABLED",
        "RecoveryPeriodInDays": 35,  # no times until the first base is in
    }
    clock.advance(3)
    assert take_bases(ctx) == 1
    assert len(images.images) == 1
    described = call(ops, "DescribeContinuousBackups", TableName="tbl")["ContinuousBackupsDescription"]
    assert described["PointInTimeRecoveryDescription"] == {
        "PointInTimeRecoveryStatus": "ENABLED",
        "RecoveryPeriodInDays": 35,
        "EarliestRestorableDateTime": T0,  # when it was turned on, before the base
        "LatestRestorableDateTime": T0 + 3,
    }
    assert take_bases(ctx) == 0  # the next one is due in a day
    clock.advance(57)
    described = call(ops, "DescribeContinuousBackups", TableName="tbl")["ContinuousBackupsDescription"]
    assert described["PointInTimeRecoveryDescription"]["LatestRestorableDateTime"] == T0 + 60


def test_the_period_can_be_changed_and_recovery_turned_off() -> None:
    ctx, ops, _, images = setup()
    spec = {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 7}
    out = call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec)
    assert out["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["RecoveryPeriodInDays"] == 7
    take_bases(ctx)
    spec = {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 1}
    out = call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec)
    assert out["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["RecoveryPeriodInDays"] == 1
    assert len(images.images) == 1  # a new period keeps the bases
    out = call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=OFF)
    assert out["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"] == {
        "PointInTimeRecoveryStatus": "DISABLED"
    }
    assert images.images == {}
    assert ctx.catalog.get("tbl").pitr is None


def test_errors() -> None:
    ctx, ops, _, _ = setup()
    assert (
        message(TableNotFoundException, ops, "DescribeContinuousBackups", TableName="nope") == "Table not found: nope"
    )
    assert (
        message(
            TableNotFoundException,
            ops,
            "UpdateContinuousBackups",
            TableName="nope",
            PointInTimeRecoverySpecification=ON,
        )
        == "Table not found: nope"
    )
    spec = {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 36}
    text = message(
        ValidationException, ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec
    )
    assert text == (
        "1 validation error detected: Value at 'PointInTimeRecoverySpecification.RecoveryPeriodInDays' "
        "failed to satisfy constraint: Member must have value less than or equal to 35"
    )
    spec = {"PointInTimeRecoveryEnabled": False, "RecoveryPeriodInDays": 3}
    text = message(
        ValidationException, ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec
    )
    assert text == "RecoveryPeriodInDays cannot be specified when PointInTimeRecoveryEnabled is false"


def test_a_table_being_created_cannot_turn_recovery_on_yet() -> None:
    ctx, ops, _ = make_ctx(create_table_delay=5.0)
    use_memory_images(ctx)
    create(ops, "slow", 5, 5)
    assert (
        message(
            ContinuousBackupsUnavailableException,
            ops,
            "UpdateContinuousBackups",
            TableName="slow",
            PointInTimeRecoverySpecification=ON,
        )
        == "Backups are being enabled for the table: slow. Please retry later"
    )


def test_items_at_replays_the_log_over_the_newest_base() -> None:
    ctx, ops, clock, images = setup()
    put(ops, "a", "1")
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    clock.advance(10)
    put(ops, "b", "1")
    clock.advance(10)
    put(ops, "a", "2")
    delete(ops, "b")
    clock.advance(5)
    assert take_bases(ctx) == 1  # the first base, after those changes: they are undone to read before it
    clock.advance(DAY_SECONDS)  # a new base is due
    assert take_bases(ctx) == 1
    assert len(images.images) == 2
    put(ops, "c", "1")
    clock.advance(10)
    assert state_at(ctx, T0) == {"a": "1"}
    assert state_at(ctx, T0 + 10) == {"a": "1", "b": "1"}
    assert state_at(ctx, T0 + 20) == {"a": "2"}
    assert state_at(ctx, T0 + 25 + DAY_SECONDS) == {"a": "2", "c": "1"}
    table = ctx.catalog.get("tbl")
    changes = {(decode_item(o)["v"]["S"] if o else None, decode_item(n)["v"]["S"] if n else None)
               for o, n in net_changes(ctx, table, T0, T0 + 25 + DAY_SECONDS)}  # fmt: skip
    assert changes == {("1", "2"), (None, "1")}  # a changed, c created; b came and went


def test_the_archive_trims_bases_and_records_past_the_period() -> None:
    ctx, ops, clock, images = setup()
    spec = {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 2}
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec)
    take_bases(ctx)
    for day in range(5):
        put(ops, "a", str(day))
        clock.advance(DAY_SECONDS)
        take_bases(ctx)
        take_bases(ctx)  # trimming follows the base it took
        retention.trim(ctx)
    table = ctx.catalog.get("tbl")
    window = restorable_window(ctx, table)
    assert window == (clock.now() - 2 * DAY_SECONDS, clock.now())
    archive = archive_of(ctx)
    assert archive is not None
    bases = archive.bases(table.table_id)
    assert bases[0].taken_at <= window[0] < bases[1].taken_at  # the one base needed for the earliest instant
    assert len(images.images) == len(bases) == 3
    oldest_record = ctx.changelog.read(-1, 1)[0]
    assert oldest_record.seq >= bases[0].seq  # records before the oldest base are gone
    assert state_at(ctx, window[0]) == {"a": "3"}  # written at that very instant
    assert state_at(ctx, window[0] + 1) == {"a": "3"}


def test_the_bases_are_found_again_after_a_restart() -> None:
    ctx, ops, clock, images = setup()
    put(ops, "a", "1")
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    take_bases(ctx)
    clock.advance(5)
    put(ops, "a", "2")
    again = restart(ctx)
    archive = archive_of(again)
    assert archive is not None
    archive.images = images
    assert state_at(again, T0) == {"a": "1"}
    assert state_at(again, T0 + 5) == {"a": "2"}


def test_deleting_the_table_drops_its_recovery_period() -> None:
    ctx, ops, _, images = setup()
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    take_bases(ctx)
    call(ops, "DeleteTable", TableName="tbl")
    assert images.images == {}
    assert message(TableNotFoundException, ops, "DescribeContinuousBackups", TableName="tbl") == "Table not found: tbl"


def test_tables_without_recovery_log_nothing_for_it() -> None:
    ctx, ops, _, _ = setup()
    put(ops, "a", "1")
    assert ctx.changelog.read(-1, 10) == []  # no stream, no GSI, no recovery: the write path logs nothing


def test_the_partitions_view_shows_the_recovery_period_storage() -> None:
    ctx, ops, clock, _ = setup()
    table = ctx.catalog.get("tbl")
    assert partitions_view(ctx, ctx.capacity.state(table))["point_in_time"] is None
    put(ops, "a", "1")
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    take_bases(ctx)
    put(ops, "b", "2")
    continuous_backups.maintain(ctx)
    view = partitions_view(ctx, ctx.capacity.state(ctx.catalog.get("tbl")))["point_in_time"]
    assert view["recovery_days"] == 35
    assert view["bases"] == 1
    assert view["oldest_base_at"] == T0
    assert view["base_bytes"] > 0
    assert view["log_bytes"] > 0


def test_a_table_the_archive_lost_starts_its_history_anew() -> None:
    ctx, ops, clock, images = setup()
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    archive = archive_of(ctx)
    assert archive is not None
    archive.disable(ctx, ctx.catalog.get("tbl").table_id)  # as if a crash lost the archive's record
    clock.advance(100)
    assert take_bases(ctx) == 1
    pitr = ctx.catalog.get("tbl").pitr
    assert pitr is not None and pitr.enabled_at == T0 + 100
    table = ctx.catalog.get("tbl")
    assert restorable_window(ctx, table) == (T0 + 100, T0 + 100)


def test_a_base_that_cannot_be_written_is_not_listed_and_is_taken_again_later() -> None:
    ctx, ops, clock, images = setup()
    put(ops, "a", "1")
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    take_bases(ctx)
    clock.advance(DAY_SECONDS)
    put(ops, "a", "2")
    images.full = True
    with pytest.raises(StorageUnavailableError):
        take_bases(ctx)
    archive = archive_of(ctx)
    assert archive is not None
    assert len(archive.bases(ctx.catalog.get("tbl").table_id)) == 1
    assert state_at(ctx, T0) == {"a": "1"}  # the history is whole: the records after the first base are held
    assert state_at(ctx, T0 + DAY_SECONDS) == {"a": "2"}
    images.full = False
    assert take_bases(ctx) == 1
    assert len(archive.bases(ctx.catalog.get("tbl").table_id)) == 2


def test_a_restore_needs_a_free_name_and_room_among_the_account_s_restores() -> None:
    ctx, ops, clock = make_ctx(create_table_delay=5.0)
    use_memory_images(ctx)
    create(ops, "tbl", 5, 5)
    clock.advance(5)
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=ON)
    take_bases(ctx)
    create(ops, "busy", 5, 5)  # CREATING for five seconds
    request = {"SourceTableName": "tbl", "UseLatestRestorableTime": True}
    assert (
        message(TableInUseException, ops, "RestoreTableToPointInTime", TargetTableName="busy", **request)
        == "Table is being created or deleted: busy"
    )
    for n in range(50):
        ctx.recovery.restores[(ctx.config.account_id, ctx.config.region, f"r{n}")] = Progress()
    assert (
        message(LimitExceededException, ops, "RestoreTableToPointInTime", TargetTableName="more", **request)
        == "Subscriber limit exceeded: Only 50 tables can be restored simultaneously per account"
    )


def test_a_restore_time_must_be_a_number_of_seconds() -> None:
    ctx, ops, _, _ = setup()
    with pytest.raises(SerializationException):
        call(ops, "RestoreTableToPointInTime", SourceTableName="tbl", TargetTableName="copy", RestoreDateTime="today")
    with pytest.raises(SerializationException):
        call(ops, "RestoreTableToPointInTime", SourceTableName="tbl", TargetTableName="copy", RestoreDateTime=[1])
    # a number is taken, fractions included: then the table's state decides (here: recovery is off)
    with pytest.raises(PointInTimeRecoveryUnavailableException):
        call(ops, "RestoreTableToPointInTime", SourceTableName="tbl", TargetTableName="copy", RestoreDateTime=T0 + 0.5)


def test_a_longer_period_does_not_reach_back_past_what_was_trimmed() -> None:
    ctx, ops, clock, _ = setup()
    spec = {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 1}
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec)
    take_bases(ctx)
    for day in range(3):
        put(ops, "a", str(day))
        clock.advance(DAY_SECONDS)
        take_bases(ctx)
        take_bases(ctx)
        retention.trim(ctx)
    spec = {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 35}
    call(ops, "UpdateContinuousBackups", TableName="tbl", PointInTimeRecoverySpecification=spec)
    window = restorable_window(ctx, ctx.catalog.get("tbl"))
    assert window == (T0 + 2 * DAY_SECONDS, T0 + 3 * DAY_SECONDS)  # the oldest base kept, not T0
    assert state_at(ctx, window[0]) == {"a": "2"}
