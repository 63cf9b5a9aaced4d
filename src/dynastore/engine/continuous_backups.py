"""Point-in-time recovery as the engine runs it: turning it on and off for a table (UpdateContinuousBackups),
the archive's maintenance pass over every namespace, and what a restore needs checked (docs/backups.md
"Point-in-time recovery"). The archive itself is engine/pitr_archive.py; reading a past instant,
engine/point_in_time.py."""

from __future__ import annotations

import dataclasses

from dynastore import messages
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import PointInTimeArchive, archive_of
from dynastore.errors import ContinuousBackupsUnavailableException, ResourceNotFoundException, TableNotFoundException
from dynastore.model.table_schema import CREATING, DELETING, PitrSpec, TableDef

__all__ = ["DEFAULT_RECOVERY_DAYS", "find_table", "maintain", "take_due_bases", "update"]

DEFAULT_RECOVERY_DAYS = 35  # DynamoDB's default RecoveryPeriodInDays


def find_table(ctx: Context, name: str) -> TableDef:
    """The table a continuous-backups operation names (TableNotFoundException, these operations' type, when
    there is none)."""
    try:
        table = ctx.catalog.get(name)
    except ResourceNotFoundException:
        raise TableNotFoundException(messages.PITR_TABLE_NOT_FOUND.format(name=ctx.catalog.table_name(name))) from None
    if table.status == DELETING:
        raise TableNotFoundException(messages.PITR_TABLE_NOT_FOUND.format(name=table.name))
    return table


def update(ctx: Context, name: str, enabled: bool, days: int | None) -> TableDef:
    """Turn recovery on (with ``days``, default 35; again with other days: the period changes) or off. Turning
    it on logs the table's changes with images from now on, so the earliest restorable time is now; the first
    base is taken by the next maintenance pass (``maintain``), and the table is restorable once it is in."""
    table = find_table(ctx, name)
    if table.status == CREATING:
        raise ContinuousBackupsUnavailableException(messages.PITR_BACKUPS_BEING_ENABLED.format(name=table.name))
    archive = archive_of(ctx)
    if archive is None:  # a host without the archive cannot keep a recovery period
        raise ContinuousBackupsUnavailableException(messages.PITR_BACKUPS_BEING_ENABLED.format(name=table.name))
    current = table.pitr
    if not enabled:
        if current is None:
            return table
        table = tables.change(ctx, table.name, lambda td: dataclasses.replace(td, pitr=None))
        archive.disable(ctx, table.table_id)
        return table
    wanted_days = DEFAULT_RECOVERY_DAYS if days is None else days
    if current is not None:
        if current.recovery_days == wanted_days:
            return table
        period = dataclasses.replace(current, recovery_days=wanted_days)
        return tables.change(ctx, table.name, lambda td: dataclasses.replace(td, pitr=period))
    spec = PitrSpec(wanted_days, ctx.clock.now())
    table = tables.change(ctx, table.name, lambda td: dataclasses.replace(td, pitr=spec))
    archive.enable(ctx, table)
    return table


def maintain(ctx: Context) -> None:
    """One pass of the archive (from the maintenance loop): trimming, storage figures, and the bases due taken
    in the background (engine/snapshots.py reads a table in chunks, serving requests in between)."""
    archive = archive_of(ctx)
    if archive is None:
        return
    for space, table in archive.maintain(ctx, _followed(ctx, archive), ctx.clock.now()):
        ctx.recovery.run(archive.take_base(space, table), f"the point-in-time base of table {table.name}")


async def take_due_bases(ctx: Context) -> int:
    """Take every base due now, one after the other, and return how many (tests drive the archive so)."""
    archive = archive_of(ctx)
    if archive is None:
        return 0
    due = archive.maintain(ctx, _followed(ctx, archive), ctx.clock.now())
    for space, table in due:
        await archive.take_base(space, table)
    return len(due)


def _followed(ctx: Context, archive: PointInTimeArchive) -> dict[int, tuple[Context, TableDef]]:
    """Every table with recovery on (of any namespace), by id, with its namespace's context. A table the
    archive does not know (a crash came between turning recovery on and the archive's record) starts its
    history anew: recovery counts as turned on now."""
    followed: dict[int, tuple[Context, TableDef]] = {}
    for space in ctx.namespaces():
        for name in space.catalog.list_names():
            table = space.catalog.find(name)
            if table is None or table.pitr is None or table.status == DELETING:
                continue
            if archive.floor(table.table_id) is None:
                table = _restart_history(space, archive, table)
            followed[table.table_id] = (space, table)
    return followed


def _restart_history(ctx: Context, archive: PointInTimeArchive, table: TableDef) -> TableDef:
    assert table.pitr is not None
    spec = dataclasses.replace(table.pitr, enabled_at=ctx.clock.now())
    table = tables.change(ctx, table.name, lambda td: dataclasses.replace(td, pitr=spec))
    archive.enable(ctx, table)
    return table
