"""UpdateTable's global-table members (version 2019.11.21): ReplicaUpdates, MultiRegionConsistency and
GlobalTableWitnessUpdates.

Request rules run first (``check_request``, no table looked up): each ReplicationGroupUpdate holds one action;
the rules of multi-Region strong consistency (api/multi_region_strong.py: MultiRegionConsistency only with
Create actions, STRONG with three Regions of one Region set, a witness only with STRONG); one replica changes
per request (STRONG creation takes its two Creates, and an MRSC table its two Deletes, in one) and alone; the
region is a region name other than the caller's. Then ``handle`` checks the request against the table (its
status, its replica set and consistency mode, its stream, billing mode, encryption and indexes) and hands the
change to the control plane of global tables (global_tables/replicas.py), which records it and lets the
replicator create, change or drop the replicas in the background.

Where DynamoDB's own text for a refusal is not public, messages.py words it (docs/global-tables.md lists which).
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api import multi_region_strong as strong
from dynastore.api.table_description import table_description
from dynastore.api.table_requests import invalid
from dynastore.engine.context import Context
from dynastore.errors import ResourceInUseException, ValidationException
from dynastore.global_tables import replicas
from dynastore.model.table_schema import ACTIVE, CREATING, DELETING, UPDATING, BillingMode, ReplicaDef, TableDef
from dynastore.security.sigv4 import REGION_NAME

__all__ = ["check_request", "handle", "replica_action"]

_ACTIONS = ("Create", "Update", "Delete")
# Replica statuses other than the model's constants (ReplicaStatus in the service model).
CREATION_FAILED = "CREATION_FAILED"
REGION_DISABLED = "REGION_DISABLED"
INACCESSIBLE_ENCRYPTION_CREDENTIALS = "INACCESSIBLE_ENCRYPTION_CREDENTIALS"
NEW_AND_OLD_IMAGES = "NEW_AND_OLD_IMAGES"


def check_request(req: dict[str, Any], region: str, other_members: list[str]) -> None:
    """The rules of the global-table members that need no table: ``region`` is the caller's, ``other_members``
    the other UpdateTable members the request sets."""
    updates: list[dict[str, Any]] = req.get("ReplicaUpdates") or []
    for update in updates:
        present = [a for a in _ACTIONS if update.get(a) is not None]
        if not present:
            raise invalid(messages.REPLICA_UPDATE_NO_ACTION)
        if len(present) > 1:
            raise invalid(messages.REPLICA_UPDATE_MANY_ACTIONS)
    strong.check_request(req, region)
    if not updates:
        return
    creating_strong = req.get("MultiRegionConsistency") == strong.STRONG
    # Two Deletes may take both other replicas of an MRSC table away (whether it is one: handle's question).
    two_deletes = len(updates) == 2 and all(u.get("Delete") is not None for u in updates)
    if len(updates) > 1 and not creating_strong and not two_deletes:
        raise invalid(messages.REPLICA_UPDATES_ONE_AT_A_TIME)
    if other_members:
        raise invalid(messages.REPLICA_UPDATES_ALONE)
    for update in updates:
        _check_update_request(update, region)
    if creating_strong:
        witness = strong.witness_action(req)
        strong.check_region_set(region, strong.strong_creates(req) + ([witness[1]] if witness else []))


def _check_update_request(update: dict[str, Any], region: str) -> None:
    action, body = replica_action(update)
    target: str = body["RegionName"]
    if target == region:
        raise ValidationException(messages.REPLICA_LOCAL_REGION, bare=True)
    if not REGION_NAME.fullmatch(target):
        raise invalid(messages.REPLICA_INVALID_REGION.format(region=target))
    if action != "Delete":
        _check_gsi_names(body)


def replica_action(update: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(``Create`` / ``Update`` / ``Delete``, its member) of a checked ReplicationGroupUpdate."""
    for action in _ACTIONS:
        body = update.get(action)
        if body is not None:
            return action, body
    raise AssertionError("check_request lets no ReplicationGroupUpdate without an action through")


def _check_gsi_names(body: dict[str, Any]) -> None:
    seen: set[str] = set()
    for gsi in body.get("GlobalSecondaryIndexes") or []:
        name = gsi["IndexName"]
        if name in seen:
            raise invalid(messages.REPLICA_GSI_DUPLICATE.format(index=name))
        seen.add(name)


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Apply the request's ReplicationGroupUpdates (``check_request`` passed) to its table."""
    td = ctx.catalog.get(req["TableName"])  # ResourceNotFoundException before any rule of the change
    _check_table_status(td)
    if td.global_table_version == replicas.LEGACY_GLOBAL_TABLE_VERSION:
        raise ValidationException(messages.LEGACY_REPLICA_UPDATES.format(name=td.name), bare=True)
    if req.get("MultiRegionConsistency") is not None:
        strong.check_consistency_settable(td)
    if req.get("MultiRegionConsistency") == strong.STRONG:
        new = _create_strong(ctx, td, req)
    elif strong.replica_deletes(req):
        new = _delete(ctx, td, req)
    else:
        new = _create_or_update(ctx, td, req)
    return {"TableDescription": table_description(ctx, new)}


def _create_or_update(ctx: Context, td: TableDef, req: dict[str, Any]) -> TableDef:
    action, body = replica_action(req["ReplicaUpdates"][0])
    region: str = body["RegionName"]
    if action == "Create":
        strong.check_replica_addable(td)
        _check_create(ctx, td, region, body)
        return replicas.add_replica(ctx, td.name, region, _overrides(body))
    _check_update(td, region, body)
    return replicas.update_replica(ctx, td.name, region, _overrides(body))


def _create_strong(ctx: Context, td: TableDef, req: dict[str, Any]) -> TableDef:
    """A single-Region table made an MRSC global table: its replicas and witness (no stream needed: the
    strong log carries the writes)."""
    strong.check_strong_table(ctx, td)
    creates = [update["Create"] for update in req["ReplicaUpdates"]]
    for body in creates:
        _check_new_region(ctx, td, body["RegionName"])
        _check_overrides(td, body)
    witness = strong.witness_action(req)
    added = [(str(body["RegionName"]), _overrides(body)) for body in creates]
    return replicas.add_strong_replicas(ctx, td.name, added, witness[1] if witness else None)


def _delete(ctx: Context, td: TableDef, req: dict[str, Any]) -> TableDef:
    """One replica of an MREC table, or the two other Regions of an MRSC table (replicas, or a replica and the
    witness) together."""
    deletes = strong.replica_deletes(req)
    strong.check_strong_deletes(td, deletes, strong.witness_action(req))
    for region in deletes:
        _existing_replica(td, region, allowed=_REMOVABLE)
    if td.is_strong:
        return replicas.remove_replicas(ctx, td.name, deletes)
    return replicas.remove_replica(ctx, td.name, deletes[0])


def _check_table_status(td: TableDef) -> None:
    if td.status == CREATING:
        raise ResourceInUseException(messages.TABLE_BEING_CREATED.format(name=td.name))
    if td.status == UPDATING:
        raise ResourceInUseException(messages.TABLE_BEING_UPDATED.format(name=td.name))
    if td.status == DELETING:
        raise ResourceInUseException(messages.TABLE_BEING_DELETED.format(name=td.name))


def _check_create(ctx: Context, td: TableDef, region: str, body: dict[str, Any]) -> None:
    _check_new_region(ctx, td, region)
    stream = td.stream
    if stream is None or not stream.enabled or stream.view_type != NEW_AND_OLD_IMAGES:
        raise ValidationException(messages.GT_STREAM_REQUIRED.format(name=td.name), bare=True)
    _check_overrides(td, body)


def _check_new_region(ctx: Context, td: TableDef, region: str) -> None:
    if td.replica(region) is not None or _table_there(ctx, td.name, region):
        # DynamoDB's text: the replica (or a table of its name) already exists in that region.
        raise ValidationException(messages.GT_REPLICA_EXISTS.format(name=td.name), bare=True)


def _table_there(ctx: Context, name: str, region: str) -> bool:
    """Whether a region of this same server holds a table named ``name`` (a peer's region answers for itself
    when the replicator creates the replica there: docs/global-tables.md)."""
    if region in ctx.config.peers:
        return False
    return ctx.in_namespace(ctx.namespace.account_id, region).catalog.find(name) is not None


def _check_update(td: TableDef, region: str, body: dict[str, Any]) -> None:
    _existing_replica(td, region, allowed=(ACTIVE,))
    if not any(body.get(m) is not None for m in _OVERRIDE_MEMBERS):
        raise invalid(messages.REPLICA_UPDATE_NOTHING)
    _check_overrides(td, body)


_OVERRIDE_MEMBERS = (
    "KMSMasterKeyId",
    "ProvisionedThroughputOverride",
    "OnDemandThroughputOverride",
    "GlobalSecondaryIndexes",
    "TableClassOverride",
)


# A replica being created or removed cannot be removed (again); an Update needs it ACTIVE.
_REMOVABLE = (ACTIVE, UPDATING, CREATION_FAILED, REGION_DISABLED, INACCESSIBLE_ENCRYPTION_CREDENTIALS)


def _existing_replica(td: TableDef, region: str, *, allowed: tuple[str, ...]) -> ReplicaDef:
    replica = td.replica(region)
    if replica is None:
        raise ValidationException(messages.GT_REPLICA_NOT_FOUND.format(region=region), bare=True)
    if replica.status not in allowed:
        raise ResourceInUseException(
            messages.GT_REPLICA_BUSY.format(region=region, name=td.name, status=replica.status)
        )
    return replica


def _check_overrides(td: TableDef, body: dict[str, Any]) -> None:
    """Overrides that the table's billing mode, encryption and indexes allow."""
    if body.get("KMSMasterKeyId") is not None and td.sse is None:
        raise invalid(messages.REPLICA_KMS_WITHOUT_SSE)
    provisioned = td.billing_mode is BillingMode.PROVISIONED
    members = [body, *(body.get("GlobalSecondaryIndexes") or [])]
    for member in members:
        if member.get("ProvisionedThroughputOverride") is not None and not provisioned:
            raise invalid(messages.REPLICA_THROUGHPUT_OVERRIDE_PPR)
        if member.get("OnDemandThroughputOverride") is not None and provisioned:
            raise invalid(messages.REPLICA_ON_DEMAND_OVERRIDE_PROVISIONED)
        max_read = _max_read(member)
        if max_read is not None and max_read < 1:
            raise invalid(messages.REPLICA_ON_DEMAND_OVERRIDE_OUT_OF_RANGE)
    for gsi in body.get("GlobalSecondaryIndexes") or []:
        index = td.index(gsi["IndexName"])
        if index is None or index.kind != "GSI" or index.status == DELETING:
            raise invalid(messages.REPLICA_GSI_NOT_FOUND.format(index=gsi["IndexName"], name=td.name))


def _overrides(body: dict[str, Any]) -> replicas.ReplicaOverrides:
    """The replica settings of a Create or Update action, as global_tables/replicas.py takes them."""
    read = (body.get("ProvisionedThroughputOverride") or {}).get("ReadCapacityUnits")
    gsi_members = body.get("GlobalSecondaryIndexes") or []
    gsis = tuple(
        (gsi["IndexName"], (gsi.get("ProvisionedThroughputOverride") or {}).get("ReadCapacityUnits"))
        for gsi in gsi_members
    )
    gsi_max_reads = tuple(
        (gsi["IndexName"], max_read) for gsi in gsi_members if (max_read := _max_read(gsi)) is not None
    )
    return replicas.ReplicaOverrides(
        read_capacity_override=read,
        gsi_overrides=gsis,
        table_class=body.get("TableClassOverride"),
        max_read_override=_max_read(body),
        gsi_max_read_overrides=gsi_max_reads,
    )


def _max_read(member: dict[str, Any]) -> int | None:
    """The MaxReadRequestUnits of a replica's (or its GSI's) OnDemandThroughputOverride, if given."""
    units: int | None = (member.get("OnDemandThroughputOverride") or {}).get("MaxReadRequestUnits")
    return units
