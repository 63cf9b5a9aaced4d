"""Global tables, version 2017.11.29 (legacy): CreateGlobalTable, UpdateGlobalTable, DescribeGlobalTable,
ListGlobalTables and DescribeGlobalTableSettings.

A legacy global table is a set of same-named tables, one per region of this server, that the user created
beforehand (empty, the same key schema and GSIs, a NEW_AND_OLD_IMAGES stream). CreateGlobalTable adopts them:
each member notes the version "2017.11.29" and the creation time, and lists the other members as its replicas
(``TableDef.replicas``), which is all the replicator (global_tables/replicator.py) needs to ship each member's
changes to the others, exactly as for a version 2019.11.21 replica set.

A joining member is CREATING until the replicator has seeded it, as a version 2019.11.21 replica is: one member,
the seeder (the caller's region when it is a member, else the first), lists it CREATING with a progress, which
has the replicator seed it (its items, none or few, and the position its changes are shipped from), mark it
ACTIVE and announce the set; the other members list it CREATING until that announcement. CreateGlobalTable makes
every member a joining one. A member's status is CREATING while any member lists it so (``_member_status``).

The global table has no record of its own: its members are the legacy-version tables of that name in the
caller's account, in any region of this server (``_members``), so it is seen from every region as DynamoDB's
global-table ARN has no region. Regions served by peers are refused (docs/global-tables.md).

DescribeGlobalTable and ListGlobalTables see legacy global tables only: DynamoDB's answer GlobalTableNotFoundException
for a version 2019.11.21 global table (the Developer Guide's way of telling the versions apart).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dynastore import messages
from dynastore.api import update_table
from dynastore.api.table_requests import invalid
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.errors import (
    GlobalTableAlreadyExistsException,
    GlobalTableNotFoundException,
    IndexNotFoundException,
    ReplicaAlreadyExistsException,
    ReplicaNotFoundException,
    ResourceInUseException,
    TableNotFoundException,
    ValidationException,
)
from dynastore.global_tables import replicas
from dynastore.model.table_schema import ACTIVE, CREATING, DELETING, UPDATING, BillingMode, ReplicaDef, TableDef
from dynastore.security.sigv4 import REGION_NAME

__all__ = [
    "LEGACY_VERSION",
    "handle_create",
    "handle_describe",
    "handle_describe_settings",
    "handle_list",
    "handle_update",
    "handle_update_settings",
]

LEGACY_VERSION = replicas.LEGACY_GLOBAL_TABLE_VERSION
NEW_AND_OLD_IMAGES = "NEW_AND_OLD_IMAGES"
LIST_LIMIT = 100  # ListGlobalTables' page when Limit is not given (and its largest)


# ---- requests -------------------------------------------------------------------------------------------------


def handle_create(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    name: str = req["GlobalTableName"]
    regions = _group_regions(req["ReplicationGroup"], ctx)
    if _members(ctx, name):
        raise GlobalTableAlreadyExistsException(messages.GLOBAL_TABLE_EXISTS.format(name=name))
    candidates = {region: _candidate(ctx, name, region) for region in regions}
    _check_alike(name, candidates)
    created = ctx.clock.now()
    seeder = _seeder(ctx, regions)
    for region in regions:
        listed = tuple(_joining(other, seeds=region == seeder) for other in regions if other != region)
        _adopt(ctx, name, region, listed, created)
    return {"GlobalTableDescription": _description(ctx, name, _members(ctx, name))}


def handle_update(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    name: str = req["GlobalTableName"]
    updates = req["ReplicaUpdates"]
    for update in updates:
        if (update.get("Create") is None) == (update.get("Delete") is None):
            raise invalid(messages.LEGACY_ONE_ACTION)
        _check_region(ctx, _update_region(update))
    members = _members(ctx, name)
    if not members:
        raise GlobalTableNotFoundException(messages.GLOBAL_TABLE_NOT_FOUND.format(name=name))
    _check_updates(ctx, name, updates, members)  # all of them first: the updates are made together or not at all
    for update in updates:
        region = _update_region(update)
        if update.get("Create") is not None:
            _add_member(ctx, name, region, members)
        else:
            _remove_member(ctx, name, region, members)
        members = _members(ctx, name)
    return {"GlobalTableDescription": _description(ctx, name, members)}


def _check_updates(ctx: Context, name: str, updates: list[dict[str, Any]], members: dict[str, TableDef]) -> None:
    """The checks of ``_add_member`` and ``_remove_member`` for every update in turn, changing nothing."""
    planned = dict(members)
    for update in updates:
        region = _update_region(update)
        if update.get("Create") is not None:
            planned[region] = _checked_newcomer(ctx, name, region, planned)
        else:
            _check_member(name, region, planned)
            del planned[region]


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    name: str = req["GlobalTableName"]
    return {"GlobalTableDescription": _description(ctx, name, _existing(ctx, name))}


def handle_describe_settings(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    name: str = req["GlobalTableName"]
    members = _existing(ctx, name)
    settings = [_replica_settings(region, td, members) for region, td in sorted(members.items())]
    return {"GlobalTableName": name, "ReplicaSettings": settings}


def handle_update_settings(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The write capacity every member shares (and the billing mode), each member's read capacity and table
    class: one UpdateTable per member that changes, with UpdateTable's own rules. Auto scaling is refused as
    UpdateTableReplicaAutoScaling refuses it (dynastore has none)."""
    name: str = req["GlobalTableName"]
    members = _existing(ctx, name)
    if _asks_auto_scaling(req):
        raise ValidationException(messages.AUTO_SCALING_NOT_SUPPORTED.format(name=name), bare=True)
    replica_updates = {u["RegionName"]: u for u in req.get("ReplicaSettingsUpdate") or []}
    for region in replica_updates:
        if region not in members:
            raise ReplicaNotFoundException(messages.LEGACY_REPLICA_NOT_FOUND.format(region=region, name=name))
    _check_indexes(req, members)
    for td in members.values():
        _check_member_status(td)
    for region, td in sorted(members.items()):
        change = _member_update(req, td, replica_updates.get(region, {}))
        if change:
            update_table.handle({"TableName": name, **change}, _in_region(ctx, region))
    members = _existing(ctx, name)
    return {
        "GlobalTableName": name,
        "ReplicaSettings": [_replica_settings(r, t, members) for r, t in sorted(members.items())],
    }


def handle_list(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    groups = _every_global_table(ctx)
    wanted_region = req.get("RegionName")
    names = sorted(n for n, members in groups.items() if wanted_region is None or wanted_region in members)
    start = req.get("ExclusiveStartGlobalTableName")
    if start is not None:
        names = [n for n in names if n > start]
    limit = min(req.get("Limit") or LIST_LIMIT, LIST_LIMIT)
    page = names[:limit]
    out: dict[str, Any] = {
        "GlobalTables": [
            {"GlobalTableName": n, "ReplicationGroup": [{"RegionName": r} for r in sorted(groups[n])]} for n in page
        ]
    }
    if len(names) > limit:
        out["LastEvaluatedGlobalTableName"] = page[-1]
    return out


# ---- the members of a global table ------------------------------------------------------------------------


def _every_global_table(ctx: Context) -> dict[str, dict[str, TableDef]]:
    """Every legacy global table of the caller's account on this server: name -> region -> member table."""
    account = ctx.namespace.account_id
    out: dict[str, dict[str, TableDef]] = {}
    catalog = ctx.catalog
    for td in catalog.every_table():
        if td.global_table_version != LEGACY_VERSION:
            continue
        namespace = catalog.namespace_of_table(td)
        if namespace.account_id == account and td.status != "DELETING":
            out.setdefault(td.name, {})[namespace.region] = td
    return out


def _members(ctx: Context, name: str) -> dict[str, TableDef]:
    """The member tables (region -> table) of the legacy global table ``name``; empty when there is none."""
    return _every_global_table(ctx).get(name, {})


def _existing(ctx: Context, name: str) -> dict[str, TableDef]:
    members = _members(ctx, name)
    if not members:
        raise GlobalTableNotFoundException(messages.GLOBAL_TABLE_NOT_FOUND.format(name=name))
    return members


def _group_regions(group: list[dict[str, Any]], ctx: Context) -> list[str]:
    """The regions of a ReplicationGroup, checked: at least one, each a region of this server, none twice."""
    regions: list[str] = []
    for replica in group:
        region = replica.get("RegionName") or ""
        _check_region(ctx, region)
        if region in regions:
            raise invalid(messages.LEGACY_DUPLICATE_REGION.format(region=region))
        regions.append(region)
    if not regions:
        raise invalid(messages.LEGACY_NO_REGION)
    return regions


def _check_region(ctx: Context, region: str) -> None:
    if not REGION_NAME.fullmatch(region):
        raise invalid(messages.REPLICA_INVALID_REGION.format(region=region))
    if region in ctx.config.peers:
        raise ValidationException(messages.LEGACY_PEER_REGION.format(region=region), bare=True)


def _update_region(update: dict[str, Any]) -> str:
    action = update.get("Create") or update.get("Delete") or {}
    return str(action["RegionName"])


def _table_in(ctx: Context, name: str, region: str) -> TableDef | None:
    return _in_region(ctx, region).catalog.find(name)


def _candidate(ctx: Context, name: str, region: str) -> TableDef:
    """The table of ``region`` that is to join a global table: it exists, is ACTIVE, empty, streams both
    images and belongs to no global table."""
    td = _table_in(ctx, name, region)
    if td is None or td.status == "DELETING":
        raise TableNotFoundException(messages.LEGACY_TABLE_NOT_FOUND.format(name=name, region=region))
    if td.global_table_version == LEGACY_VERSION:
        raise GlobalTableAlreadyExistsException(messages.GLOBAL_TABLE_EXISTS.format(name=name))
    if td.replicas or td.global_table_version is not None:
        raise ValidationException(messages.LEGACY_ALREADY_GLOBAL.format(name=name, region=region), bare=True)
    if td.status != ACTIVE:
        raise ValidationException(messages.LEGACY_NOT_ACTIVE.format(name=name, region=region), bare=True)
    stream = td.stream
    if stream is None or not stream.enabled or stream.view_type != NEW_AND_OLD_IMAGES:
        raise ValidationException(messages.LEGACY_STREAM.format(name=name, region=region), bare=True)
    _check_empty(ctx, td, region)
    return td


def _check_empty(ctx: Context, td: TableDef, region: str) -> None:
    items, _ = _in_region(ctx, region).catalog.stats(td.name)
    if items:
        raise ValidationException(messages.LEGACY_NOT_EMPTY.format(name=td.name, region=region), bare=True)


def _shape(td: TableDef) -> tuple[Any, ...]:
    """What every member must share: the key schema (with its attributes' types) and each GSI's name and keys."""

    def typed(record: list[list[str]]) -> tuple[tuple[str, str, str | None], ...]:
        return tuple((attr, kind, td.attribute_type(attr)) for attr, kind in record)

    gsis = sorted((g.name, typed(g.key_schema.to_record())) for g in td.gsis if g.status != "DELETING")
    return typed(td.key_schema.to_record()), tuple(gsis)


def _check_alike(name: str, candidates: dict[str, TableDef]) -> None:
    first_region, first = next(iter(candidates.items()))
    for region, td in candidates.items():
        if _shape(td) != _shape(first):
            raise ValidationException(
                messages.LEGACY_SCHEMA_DIFFERS.format(name=name, region=region, other=first_region), bare=True
            )


def _seeder(ctx: Context, regions: list[str]) -> str:
    """The member that seeds the joining ones: the caller's region when it is a member, else the first."""
    own = ctx.namespace.region
    return own if own in regions else sorted(regions)[0]


def _joining(region: str, *, seeds: bool) -> ReplicaDef:
    """A joining member as a member lists it: CREATING; with a progress in the seeder's list (the replicator
    then seeds it, as it seeds a replica ReplicaUpdates added)."""
    return ReplicaDef(region, CREATING, progress="0" if seeds else None)


def _adopt(ctx: Context, name: str, region: str, listed: tuple[ReplicaDef, ...], created: float) -> None:
    """Make the table of ``region`` a member listing ``listed`` as its replicas."""

    def mutate(td: TableDef) -> TableDef:
        return dataclasses.replace(
            td, replicas=listed, global_table_version=LEGACY_VERSION, global_table_created_at=created
        )

    tables.change(_in_region(ctx, region), name, mutate)


def _relist(ctx: Context, name: str, region: str, *, joining: ReplicaDef | None = None, gone: str = "") -> None:
    """The member of ``region`` lists ``joining`` too, or no longer lists ``gone`` (the others as they were)."""

    def mutate(td: TableDef) -> TableDef:
        kept = tuple(r for r in td.replicas if r.region != gone)
        return dataclasses.replace(td, replicas=kept if joining is None else (*kept, joining))

    tables.change(_in_region(ctx, region), name, mutate)


def _add_member(ctx: Context, name: str, region: str, members: dict[str, TableDef]) -> None:
    """UpdateGlobalTable's Create: the new member lists the others ACTIVE; it is CREATING (in their lists)
    until the seeder has seeded it."""
    _checked_newcomer(ctx, name, region, members)
    created = next(iter(members.values())).global_table_created_at or ctx.clock.now()
    seeder = _seeder(ctx, list(members))
    _adopt(ctx, name, region, tuple(ReplicaDef(r, ACTIVE) for r in members), created)
    for member_region in members:
        _relist(ctx, name, member_region, joining=_joining(region, seeds=member_region == seeder))


def _checked_newcomer(ctx: Context, name: str, region: str, members: dict[str, TableDef]) -> TableDef:
    """The table of ``region`` that may join ``members``: none there yet, every member still empty."""
    if region in members:
        raise ReplicaAlreadyExistsException(messages.LEGACY_REPLICA_EXISTS.format(region=region, name=name))
    candidate = _candidate(ctx, name, region)
    for member_region, td in members.items():
        _check_empty(ctx, td, member_region)
    _check_alike(name, {**members, region: candidate})
    return candidate


def _check_member(name: str, region: str, members: dict[str, TableDef]) -> None:
    if region not in members:
        raise ReplicaNotFoundException(messages.LEGACY_REPLICA_NOT_FOUND.format(region=region, name=name))


def _remove_member(ctx: Context, name: str, region: str, members: dict[str, TableDef]) -> None:
    """UpdateGlobalTable's Delete: the region's table leaves the set and stays, a table of its own (its data
    kept, as DynamoDB keeps it); the others stop replicating to it."""
    _check_member(name, region, members)

    def leave(td: TableDef) -> TableDef:
        return dataclasses.replace(td, replicas=(), global_table_version=None, global_table_created_at=None)

    tables.change(_in_region(ctx, region), name, leave)
    for member_region in members:
        if member_region != region:
            _relist(ctx, name, member_region, gone=region)


# ---- settings ---------------------------------------------------------------------------------------------


def _asks_auto_scaling(req: dict[str, Any]) -> bool:
    if req.get("GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate") is not None:
        return True
    for gsi in req.get("GlobalTableGlobalSecondaryIndexSettingsUpdate") or []:
        if gsi.get("ProvisionedWriteCapacityAutoScalingSettingsUpdate") is not None:
            return True
    for replica in req.get("ReplicaSettingsUpdate") or []:
        if replica.get("ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate") is not None:
            return True
        for gsi in replica.get("ReplicaGlobalSecondaryIndexSettingsUpdate") or []:
            if gsi.get("ProvisionedReadCapacityAutoScalingSettingsUpdate") is not None:
                return True
    return False


def _check_indexes(req: dict[str, Any], members: dict[str, TableDef]) -> None:
    """Every index a settings update names is a GSI of the members (they all have the same GSIs)."""
    names = [g["IndexName"] for g in req.get("GlobalTableGlobalSecondaryIndexSettingsUpdate") or []]
    for replica in req.get("ReplicaSettingsUpdate") or []:
        names += [g["IndexName"] for g in replica.get("ReplicaGlobalSecondaryIndexSettingsUpdate") or []]
    for region, td in sorted(members.items()):
        for index_name in names:
            index = td.index(index_name)
            if index is None or index.kind != "GSI" or index.status == DELETING:
                raise IndexNotFoundException(
                    messages.LEGACY_INDEX_NOT_FOUND.format(index=index_name, name=td.name, region=region)
                )


def _check_member_status(td: TableDef) -> None:
    """Every member ACTIVE before any changes, so that a change is made on all of them or on none."""
    for status, message in (
        (CREATING, messages.TABLE_BEING_CREATED),
        (UPDATING, messages.TABLE_BEING_UPDATED),
        (DELETING, messages.TABLE_BEING_DELETED),
    ):
        if td.status == status:
            raise ResourceInUseException(message.format(name=td.name))


def _member_update(req: dict[str, Any], td: TableDef, replica: dict[str, Any]) -> dict[str, Any]:
    """The UpdateTable members that bring ``td`` to the settings asked (empty: nothing changes there)."""
    change: dict[str, Any] = {}
    billing = req.get("GlobalTableBillingMode")
    if billing is not None and billing != td.billing_mode.value:
        change["BillingMode"] = billing
    provisioned = (billing or td.billing_mode.value) == BillingMode.PROVISIONED.value
    write = req.get("GlobalTableProvisionedWriteCapacityUnits")
    read = replica.get("ReplicaProvisionedReadCapacityUnits")
    if write is not None or read is not None or "BillingMode" in change and provisioned:
        current = td.pending_throughput or td.throughput
        wanted = {
            "ReadCapacityUnits": read if read is not None else current.read,
            "WriteCapacityUnits": write if write is not None else current.write,
        }
        if "BillingMode" in change or (wanted["ReadCapacityUnits"], wanted["WriteCapacityUnits"]) != (
            current.read,
            current.write,
        ):
            change["ProvisionedThroughput"] = wanted
    gsi_updates = _gsi_updates(req, td, replica)
    if gsi_updates:
        change["GlobalSecondaryIndexUpdates"] = gsi_updates
    table_class = replica.get("ReplicaTableClass")
    if table_class is not None and table_class != (td.table_class or "STANDARD"):
        change["TableClass"] = table_class
    return change


def _gsi_updates(req: dict[str, Any], td: TableDef, replica: dict[str, Any]) -> list[dict[str, Any]]:
    writes = {
        g["IndexName"]: g.get("ProvisionedWriteCapacityUnits")
        for g in req.get("GlobalTableGlobalSecondaryIndexSettingsUpdate") or []
    }
    reads = {
        g["IndexName"]: g.get("ProvisionedReadCapacityUnits")
        for g in replica.get("ReplicaGlobalSecondaryIndexSettingsUpdate") or []
    }
    out = []
    for gsi in td.gsis:
        write, read = writes.get(gsi.name), reads.get(gsi.name)
        current = gsi.pending_throughput or gsi.throughput
        if (write is None and read is None) or current is None:
            continue
        wanted = (read if read is not None else current.read, write if write is not None else current.write)
        if wanted != (current.read, current.write):
            throughput = {"ReadCapacityUnits": wanted[0], "WriteCapacityUnits": wanted[1]}
            out.append({"Update": {"IndexName": gsi.name, "ProvisionedThroughput": throughput}})
    return out


def _in_region(ctx: Context, region: str) -> Context:
    return ctx.in_namespace(ctx.namespace.account_id, region)


# ---- wire shapes ------------------------------------------------------------------------------------------


def _member_status(region: str, members: dict[str, TableDef]) -> str:
    """CREATING while a member lists the member of ``region`` so (it is not seeded yet), else ACTIVE."""
    for td in members.values():
        listed = td.replica(region)
        if listed is not None and listed.status == CREATING:
            return CREATING
    return ACTIVE


def _global_status(statuses: list[str]) -> str:
    """CREATING while every member is (a global table CreateGlobalTable just made), UPDATING while some are (a
    member UpdateGlobalTable added), else ACTIVE."""
    if all(status == CREATING for status in statuses):
        return CREATING
    return UPDATING if CREATING in statuses else ACTIVE


def _description(ctx: Context, name: str, members: dict[str, TableDef]) -> dict[str, Any]:
    created = min((td.global_table_created_at or td.created_at) for td in members.values())
    statuses = {region: _member_status(region, members) for region in sorted(members)}
    return {
        "ReplicationGroup": [{"RegionName": r, "ReplicaStatus": status} for r, status in statuses.items()],
        "GlobalTableArn": f"arn:aws:dynamodb::{ctx.namespace.account_id}:global-table/{name}",
        "CreationDateTime": created,
        "GlobalTableStatus": _global_status(list(statuses.values())),
        "GlobalTableName": name,
    }


def _replica_settings(region: str, td: TableDef, members: dict[str, TableDef]) -> dict[str, Any]:
    """One ReplicaSettingsDescription: the member's billing mode, capacities and GSIs (no auto scaling)."""
    provisioned = td.billing_mode is BillingMode.PROVISIONED
    # The capacity asked last (an increase under way included), as the settings operations set it.
    throughput = td.pending_throughput or td.throughput
    out: dict[str, Any] = {
        "RegionName": region,
        "ReplicaStatus": _member_status(region, members),
        "ReplicaBillingModeSummary": {"BillingMode": td.billing_mode.value},
        "ReplicaProvisionedReadCapacityUnits": throughput.read if provisioned else 0,
        "ReplicaProvisionedWriteCapacityUnits": throughput.write if provisioned else 0,
    }
    gsis = []
    for gsi in td.gsis:
        entry: dict[str, Any] = {"IndexName": gsi.name, "IndexStatus": gsi.status}
        gsi_throughput = gsi.pending_throughput or gsi.throughput
        if provisioned and gsi_throughput is not None:
            entry["ProvisionedReadCapacityUnits"] = gsi_throughput.read
            entry["ProvisionedWriteCapacityUnits"] = gsi_throughput.write
        gsis.append(entry)
    if gsis:
        out["ReplicaGlobalSecondaryIndexSettings"] = gsis
    if td.table_class is not None:
        summary: dict[str, Any] = {"TableClass": td.table_class}
        if td.table_class_updated_at is not None:
            summary["LastUpdateDateTime"] = td.table_class_updated_at
        out["ReplicaTableClassSummary"] = summary
    return out
