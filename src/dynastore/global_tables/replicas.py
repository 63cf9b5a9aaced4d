"""The replica set of a global table, on the catalog (docs/design.md "Global tables").

Every table of a replica set lists the other regions of the set in its definition (``TableDef.replicas``, what
DescribeTable's Replicas shows). UpdateTable's ReplicaUpdates call ``add_replica``, ``update_replica`` and
``remove_replica`` on the table of the caller's region; the replicator (global_tables/replicator.py) does the
rest in the background: creates the replica table (``ensure_replica_table`` in its region, through the region's
link), seeds it, marks it ACTIVE everywhere (``set_replica_status``), or drops it (``drop_replica_table``) and
forgets it (``forget_replica``).

``replica_set_definition`` is what a link carries to a region to create or update its replica: the source
table's catalog record (with the key schema, attribute definitions, indexes, billing, stream), every region of
the set with its status, and whether a missing replica is to be created.

States: adding a replica makes it CREATING and the table UPDATING until the replica is ACTIVE; removing one makes
it DELETING until its table is dropped, then it leaves every list.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from typing import Any

from dynastore import messages
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.errors import ResourceInUseException, ValidationException
from dynastore.model.table_schema import (
    ACTIVE,
    CREATING,
    DELETING,
    UPDATING,
    IndexDef,
    ProvisionedThroughput,
    ReplicaDef,
    StreamSpec,
    TableDef,
)

__all__ = [
    "GLOBAL_TABLE_VERSION",
    "ReplicaOverrides",
    "add_replica",
    "drop_replica_table",
    "ensure_replica_table",
    "forget_replica",
    "is_global",
    "remove_replica",
    "replica_set_definition",
    "set_replica_status",
    "update_replica",
]

GLOBAL_TABLE_VERSION = "2019.11.21"
NEW_AND_OLD_IMAGES = "NEW_AND_OLD_IMAGES"


@dataclass(frozen=True, slots=True)
class ReplicaOverrides:
    """What a replica may set for itself (ReplicaUpdates' Create / Update): its provisioned read capacity, that
    of its GSIs (index name, read capacity or None), its table class."""

    read_capacity_override: int | None = None
    gsi_overrides: tuple[tuple[str, int | None], ...] = ()
    table_class: str | None = None


def is_global(table: TableDef) -> bool:
    """Whether ``table`` has replicas that are not all being removed (its changes are then replicated)."""
    return any(replica.status != DELETING for replica in table.replicas)


# ---- the API's calls (the caller's region) ---------------------------------------------------------------


def add_replica(ctx: Context, table_name: str, region: str, overrides: ReplicaOverrides | None = None) -> TableDef:
    """Add ``region`` to the replica set of ``table_name`` (of ``ctx``'s namespace): CREATING, the table UPDATING
    until the replicator has created and seeded it. Raises ResourceNotFoundException, ResourceInUseException
    (table not ACTIVE) or ValidationException (the table's own region, a replica already, no suitable stream)."""
    own_region = ctx.namespace.region
    overrides = overrides or ReplicaOverrides()

    def mutate(td: TableDef) -> TableDef:
        if td.status != ACTIVE:
            raise ResourceInUseException(messages.TABLE_BEING_UPDATED.format(name=td.name))
        if region == own_region:
            raise ValidationException(messages.GT_REPLICA_IS_SOURCE.format(region=region), bare=True)
        if td.replica(region) is not None:
            raise ValidationException(messages.GT_REPLICA_EXISTS.format(name=td.name), bare=True)
        stream = td.stream
        if stream is None or not stream.enabled or stream.view_type != NEW_AND_OLD_IMAGES:
            raise ValidationException(messages.GT_STREAM_REQUIRED.format(name=td.name), bare=True)
        replica = ReplicaDef(
            region,
            CREATING,
            read_capacity_override=overrides.read_capacity_override,
            gsi_overrides=overrides.gsi_overrides,
            table_class=overrides.table_class,
            progress="0",
        )
        return dataclasses.replace(
            td,
            replicas=(*td.replicas, replica),
            global_table_version=GLOBAL_TABLE_VERSION,
            status=UPDATING,
            status_until=None,
        )

    return tables.change(ctx, table_name, mutate)


def update_replica(ctx: Context, table_name: str, region: str, overrides: ReplicaOverrides) -> TableDef:
    """Change a replica's own settings (ReplicaUpdates' Update)."""

    def mutate(td: TableDef) -> TableDef:
        replica = _existing(td, region)
        if replica.status != ACTIVE:
            raise ResourceInUseException(
                messages.GT_REPLICA_BUSY.format(region=region, name=td.name, status=replica.status)
            )
        changed = dataclasses.replace(
            replica,
            read_capacity_override=overrides.read_capacity_override,
            gsi_overrides=overrides.gsi_overrides,
            table_class=overrides.table_class,
        )
        return _with_replica(td, changed)

    return tables.change(ctx, table_name, mutate)


def remove_replica(ctx: Context, table_name: str, region: str) -> TableDef:
    """Start removing ``region`` from the replica set: DELETING until the replicator has dropped its table."""

    def mutate(td: TableDef) -> TableDef:
        replica = _existing(td, region)
        if replica.status in (CREATING, DELETING):
            raise ResourceInUseException(
                messages.GT_REPLICA_BUSY.format(region=region, name=td.name, status=replica.status)
            )
        return _with_replica(td, dataclasses.replace(replica, status=DELETING, progress=None))

    return tables.change(ctx, table_name, mutate)


# ---- the replicator's calls ------------------------------------------------------------------------------


def set_replica_status(
    ctx: Context, table_name: str, region: str, status: str, progress: str | None = None, description: str | None = None
) -> TableDef | None:
    """Record ``region``'s status in ``table_name``'s list (None: no such table or replica any more). The table
    leaves UPDATING once no replica is CREATING."""
    td = ctx.catalog.find(table_name)
    if td is None or td.replica(region) is None:
        return None

    def mutate(td: TableDef) -> TableDef:
        replica = td.replica(region)
        if replica is None:
            return td
        changed = dataclasses.replace(replica, status=status, progress=progress, status_description=description)
        return _settled(_with_replica(td, changed))

    return tables.change(ctx, table_name, mutate)


def forget_replica(ctx: Context, table_name: str, region: str) -> TableDef | None:
    """Remove ``region`` from ``table_name``'s list (None: no such table)."""
    td = ctx.catalog.find(table_name)
    if td is None:
        return None

    def mutate(td: TableDef) -> TableDef:
        if td.replica(region) is None:
            return td
        return _settled(dataclasses.replace(td, replicas=tuple(r for r in td.replicas if r.region != region)))

    return tables.change(ctx, table_name, mutate)


def replica_set_definition(ctx: Context, table: TableDef, *, create: bool = True) -> dict[str, Any]:
    """What a link carries to a region of ``table``'s set (``table``: of ``ctx``'s namespace): the table's
    record, every region of the set with its status (this one ACTIVE), whether a missing replica is created."""
    regions = [[ctx.namespace.region, ACTIVE]] + [[r.region, r.status] for r in table.replicas]
    return {
        "TableName": table.name,
        "SourceRegion": ctx.namespace.region,
        "Create": create,
        "Table": table.to_record(),
        "Regions": regions,
        "Removed": [],
    }


def removal_notice(table_name: str, region: str) -> dict[str, Any]:
    """What a link carries to the other regions of a set when the replica of ``region`` is gone (its table was
    deleted): they take it off their lists."""
    return {"TableName": table_name, "SourceRegion": region, "Create": False, "Table": None, "Regions": None,
            "Removed": [region]}  # fmt: skip


def ensure_replica_table(ctx: Context, definition: dict[str, Any]) -> TableDef | None:
    """In ``ctx``'s region: create the replica a definition (``replica_set_definition``) describes if it is
    missing and the definition says so, else give the replica the set's regions; None when there is no replica
    (and none to create). A table of that name that is no replica refuses (ValidationException)."""
    name = str(definition["TableName"])
    own_region = ctx.namespace.region
    existing = ctx.catalog.find(name)
    if existing is None or existing.status == DELETING:
        if not definition.get("Create") or definition.get("Table") is None or existing is not None:
            return None
        return tables.create(ctx, _new_replica_table(ctx, definition))
    if definition.get("Create") and existing.global_table_version is None:
        raise ValidationException(messages.GT_NAME_TAKEN.format(name=name, region=own_region), bare=True)

    def mutate(td: TableDef) -> TableDef:
        return _settled(dataclasses.replace(td, replicas=_listed(td, definition, own_region)))

    return tables.change(ctx, name, mutate)


def drop_replica_table(ctx: Context, table_name: str) -> None:
    """Delete the replica table ``table_name`` of ``ctx``'s region, once it is no longer part of the set (its
    list emptied first, so its deletion is not announced to the others)."""
    td = ctx.catalog.find(table_name)
    if td is None or td.status == DELETING:
        return
    if td.replicas:
        tables.change(ctx, table_name, lambda t: dataclasses.replace(t, replicas=(), status=ACTIVE))
    tables.delete(ctx, table_name)


# ---- internals ----------------------------------------------------------------------------------------------


def _existing(td: TableDef, region: str) -> ReplicaDef:
    replica = td.replica(region)
    if replica is None:
        raise ValidationException(messages.GT_REPLICA_NOT_FOUND.format(region=region), bare=True)
    return replica


def _with_replica(td: TableDef, changed: ReplicaDef) -> TableDef:
    return dataclasses.replace(td, replicas=tuple(changed if r.region == changed.region else r for r in td.replicas))


def _settled(td: TableDef) -> TableDef:
    """UPDATING while a replica is being created, ACTIVE once none is."""
    creating = any(r.status == CREATING for r in td.replicas)
    if td.status == UPDATING and not creating and td.status_until is None:
        return dataclasses.replace(td, status=ACTIVE)
    return td


def _listed(td: TableDef, definition: dict[str, Any], own_region: str) -> tuple[ReplicaDef, ...]:
    """The replica list ``td`` takes from ``definition``: every other region it names (keeping each one's own
    settings), or, for a removal notice, the current list without the removed regions."""
    removed = set(definition.get("Removed") or ())
    regions = definition.get("Regions")
    if regions is None:
        return tuple(r for r in td.replicas if r.region not in removed)
    out: list[ReplicaDef] = []
    for region, status in regions:
        if region == own_region or region in removed:
            continue
        known = td.replica(region)
        out.append(ReplicaDef(region, status) if known is None else dataclasses.replace(known, status=status))
    return tuple(out)


def _new_replica_table(ctx: Context, definition: dict[str, Any]) -> TableDef:
    """A replica's definition from the source's record: the same schema, indexes, billing and stream, new ids,
    empty, ACTIVE, its own read capacity and table class when the source's list gives them overrides."""
    source = TableDef.from_record(definition["Table"])
    own_region = ctx.namespace.region
    own = source.replica(own_region)
    catalog = ctx.catalog
    now = ctx.clock.now()
    throughput = source.throughput
    if own is not None and own.read_capacity_override is not None:
        throughput = ProvisionedThroughput(own.read_capacity_override, throughput.write)
    stream = source.stream
    if stream is not None:
        stream = StreamSpec(stream.enabled, stream.view_type, stream.label)
    return dataclasses.replace(
        source,
        table_id=catalog.next_table_id(),
        uuid=str(uuid.uuid4()),
        created_at=now,
        throughput=throughput,
        pending_throughput=None,
        lsis=tuple(_new_index(ctx, i) for i in source.lsis),
        gsis=tuple(_new_index(ctx, i) for i in source.gsis),
        stream=stream,
        table_class=own.table_class if own is not None and own.table_class else source.table_class,
        deletion_protection=False,
        tags=(),
        status=ACTIVE,
        status_until=None,
        item_count=0,
        size_bytes=0,
        resource_policy=None,
        stream_policy=None,
        restore=None,
        pitr=None,
        replicas=_listed(source, definition, own_region),
        global_table_version=GLOBAL_TABLE_VERSION,
    )


def _new_index(ctx: Context, index: IndexDef) -> IndexDef:
    return dataclasses.replace(
        index,
        index_id=ctx.catalog.next_table_id(),
        status=ACTIVE,
        backfilling=False,
        pending_throughput=None,
        online=False,
        item_count=0,
        size_bytes=0,
    )
