"""Point-in-time recovery as the engine runs it: turning it on and off for a table (UpdateContinuousBackups),
the archive's maintenance pass over every namespace, and what a restore needs checked (docs/backups.md
"Point-in-time recovery"). The archive itself is engine/pitr_archive.py; reading a past instant,
engine/point_in_time.py."""

from __future__ import annotations

import dataclasses

from dynastore import messages
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import archive_of
from dynastore.errors import ContinuousBackupsUnavailableException, ResourceNotFoundException, TableNotFoundException
from dynastore.model.table_schema import CREATING, DELETING, PitrSpec, TableDef

__all__ = ["DEFAULT_RECOVERY_DAYS", "find_table", "maintain", "update"]

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
    it on logs the table's changes with images from now on and takes the first base in this call (the table
    is read in one storage read transaction), so the earliest restorable time is now."""
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
    """One pass of the archive (from the maintenance loop): bases due, trimming, storage figures."""
    archive = archive_of(ctx)
    if archive is None:
        return
    followed: dict[int, tuple[Context, TableDef]] = {}
    for space in ctx.namespaces():
        for name in space.catalog.list_names():
            table = space.catalog.find(name)
            if table is not None and table.pitr is not None and table.status != DELETING:
                followed[table.table_id] = (space, table)
    archive.maintain(ctx, followed, ctx.clock.now())
