"""The replica set of a global table, on the catalog (docs/design.md "Global tables").

Every table of a replica set lists the other regions of the set in its definition (``TableDef.replicas``, what
DescribeTable's Replicas shows). UpdateTable's ReplicaUpdates call ``add_replica``, ``update_replica`` and
``remove_replica`` on the table of the caller's region; the replicator (global_tables/replicator.py) does the
rest in the background: creates the replica table (``ensure_replica_table`` in its region, through the region's
link), seeds it, marks it ACTIVE everywhere (``set_replica_status``), or drops it (``drop_replica_table``) and
forgets it (``forget_replica``).

``replica_set_definition`` is what a link carries to a region to create or update its replica: the source
table's catalog record (with the key schema, attribute definitions, indexes, billing, stream), every region of
the set with its status, whether a missing replica is to be created, and the version of the source's
synchronized settings.

Synchronized settings (``synchronized_settings``): what DynamoDB keeps the same on every replica of a version
2019.11.21 global table, whichever region it is changed in: the GSIs (created or deleted), the billing mode,
the write capacity of the table and of its GSIs, time to live, the on-demand throughput (MaxReadRequestUnits and
MaxWriteRequestUnits) and the warm throughput of the table and of its GSIs. The others stay each replica's own:
read capacity (ReplicaUpdates' overrides), table class, point-in-time recovery, tags, deletion protection,
resource policies. A replica may override the set's on-demand MaxReadRequestUnits for itself (and its GSIs'),
with OnDemandThroughputOverride: its table keeps the set's (``on_demand``, synchronized) and its own beside them
(``own_max_read``), which wins (``TableDef.on_demand_of``).

Each table notes the version of its settings (``settings_version``: the hybrid clock's stamp and the region of
the change) and their digest as of that version; the replicator finds a table whose settings no
longer match the digest (changed in its region), stamps a new version and announces the definition; a replica
whose version is older takes the settings (``ensure_replica_table``) with that version, last writer wins as for
items, so two regions changing them at once end with the same settings.

A replica's own settings (ReplicaUpdates' overrides: its read capacity and its GSIs', its on-demand maximum
read units and its GSIs', its table class) are set by the region that adds or updates it, with a version
(``ReplicaDef.overrides_version``: when, and which region). Every region's list takes the newest it is told of
(``_listed``), and the replica's table takes them when they are newer than the ones it last took
(``TableDef.own_overrides_version``, ``_with_own_settings``); a change of them is announced as a change of the
synchronized settings is (their versions are part of the digest).

States: adding a replica makes it CREATING and the table UPDATING until the replica is ACTIVE; removing one makes
it DELETING until its table is dropped, then it leaves every list.

Multi-Region strong consistency (MultiRegionConsistency STRONG): ``add_strong_replicas`` makes a single-Region
table a global table of three Regions at once (two replicas, or one replica and a witness), naming a new strong
log (``TableDef.strong_log``) and the witness region (``TableDef.witness_region``: it holds the log and serves no
table, so it is never one of ``TableDef.replicas``); the replica tables copy both from the source's record.
``remove_replicas`` takes the two others away together (or one replica, whose witness goes with it); once a
table's list is empty it is a single-Region table again: its strong log and witness are forgotten.
``witness_status`` is what DescribeTable shows of the witness.
"""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

import orjson

from dynastore import messages
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.engine.indexes import copy_index_definition
from dynastore.errors import ResourceInUseException, ValidationException
from dynastore.model.table_schema import (
    ACTIVE,
    CREATING,
    DELETING,
    UPDATING,
    BillingMode,
    IndexDef,
    KeyAttr,
    OnDemandThroughput,
    ProvisionedThroughput,
    ReplicaDef,
    StreamSpec,
    TableDef,
)
from dynastore.model.warm_throughput import WarmThroughput

__all__ = [
    "GLOBAL_TABLE_VERSION",
    "LEGACY_GLOBAL_TABLE_VERSION",
    "ReplicaOverrides",
    "add_replica",
    "add_strong_replicas",
    "drop_replica_table",
    "ensure_replica_table",
    "forget_replica",
    "is_global",
    "remove_replica",
    "remove_replicas",
    "replica_set_definition",
    "set_replica_status",
    "stamp_settings",
    "synchronized_settings",
    "update_replica",
    "witness_status",
]

GLOBAL_TABLE_VERSION = "2019.11.21"
# A member of a version 2017.11.29 global table (api/legacy_global_tables.py): replicated the same way, its set
# changed by UpdateGlobalTable only.
LEGACY_GLOBAL_TABLE_VERSION = "2017.11.29"
NEW_AND_OLD_IMAGES = "NEW_AND_OLD_IMAGES"


@dataclass(frozen=True, slots=True)
class ReplicaOverrides:
    """What a replica may set for itself (ReplicaUpdates' Create / Update): its provisioned read capacity, that
    of its GSIs (index name, read capacity or None), its table class, and its on-demand MaxReadRequestUnits and
    its GSIs' (index name, units)."""

    read_capacity_override: int | None = None
    gsi_overrides: tuple[tuple[str, int | None], ...] = ()
    table_class: str | None = None
    max_read_override: int | None = None
    gsi_max_read_overrides: tuple[tuple[str, int], ...] = ()


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
        replica = _new_replica(region, overrides, _overrides_version(ctx))
        return dataclasses.replace(
            td,
            replicas=(*td.replicas, replica),
            global_table_version=GLOBAL_TABLE_VERSION,
            status=UPDATING,
            status_until=None,
        )

    return tables.change(ctx, table_name, mutate)


def _new_replica(region: str, overrides: ReplicaOverrides, version: tuple[int, str]) -> ReplicaDef:
    """A replica the API adds: CREATING, with its own settings."""
    return _with_settings(ReplicaDef(region, CREATING, progress="0"), overrides, version)


def _with_settings(
    replica: ReplicaDef, settings: ReplicaOverrides | ReplicaDef, version: tuple[int, str] | None
) -> ReplicaDef:
    """``replica``'s entry with the replica's own settings that ``settings`` holds (an API request's, or another
    region's entry), of ``version``."""
    return dataclasses.replace(
        replica,
        read_capacity_override=settings.read_capacity_override,
        gsi_overrides=settings.gsi_overrides,
        table_class=settings.table_class,
        max_read_override=settings.max_read_override,
        gsi_max_read_overrides=settings.gsi_max_read_overrides,
        overrides_version=version,
    )


def _overrides_version(ctx: Context, after: tuple[int, str] | None = None) -> tuple[int, str]:
    """The version of replica settings set now in ``ctx``'s region: its clock's milliseconds, and past the version
    ``after`` of the settings they replace (a region whose clock runs behind still orders its change after the
    one it has seen)."""
    stamp = int(ctx.clock.now() * 1000)
    if after is not None and stamp <= after[0]:
        stamp = after[0] + 1
    return stamp, ctx.namespace.region


def add_strong_replicas(
    ctx: Context, table_name: str, creates: list[tuple[str, ReplicaOverrides]], witness_region: str | None
) -> TableDef:
    """Make the single-Region table ``table_name`` a global table with multi-Region strong consistency: the
    replicas ``creates`` (region, overrides) CREATING, the table UPDATING until they are ACTIVE, a new strong
    log, the witness region if any. The API checked the request against the table (api/multi_region_strong.py);
    this checks again what may have changed since: the table ACTIVE and still without replicas."""

    def mutate(td: TableDef) -> TableDef:
        if td.status != ACTIVE:
            raise ResourceInUseException(messages.TABLE_BEING_UPDATED.format(name=td.name))
        if td.replicas:
            raise ValidationException(messages.MRSC_CONSISTENCY_UNCHANGEABLE.format(name=td.name), bare=True)
        version = _overrides_version(ctx)
        added = tuple(_new_replica(region, overrides, version) for region, overrides in creates)
        return dataclasses.replace(
            td,
            replicas=added,
            global_table_version=GLOBAL_TABLE_VERSION,
            strong_log=uuid.uuid4().hex,
            witness_region=witness_region,
            status=UPDATING,
            status_until=None,
        )

    return tables.change(ctx, table_name, mutate)


def remove_replicas(ctx: Context, table_name: str, regions: list[str]) -> TableDef:
    """Start removing the replicas of ``regions`` together (each DELETING until the replicator has dropped its
    table): the two other replicas of a strongly consistent global table, or its one other replica (its witness
    goes with it). The table is single-Region once they are gone (``_settled``)."""

    def mutate(td: TableDef) -> TableDef:
        for region in regions:
            replica = _existing(td, region)
            if replica.status in (CREATING, DELETING):
                raise ResourceInUseException(
                    messages.GT_REPLICA_BUSY.format(region=region, name=td.name, status=replica.status)
                )
            td = _with_replica(td, dataclasses.replace(replica, status=DELETING, progress=None))
        return td

    return tables.change(ctx, table_name, mutate)


def witness_status(td: TableDef) -> str | None:
    """The witness's status (None: the table has none): CREATING while a replica of the set is being created,
    DELETING while one is being removed (a witness leaves only with a replica), else ACTIVE."""
    if td.witness_region is None:
        return None
    statuses = {replica.status for replica in td.replicas}
    if CREATING in statuses:
        return CREATING
    if DELETING in statuses:
        return DELETING
    return ACTIVE


def update_replica(ctx: Context, table_name: str, region: str, overrides: ReplicaOverrides) -> TableDef:
    """Change a replica's own settings (ReplicaUpdates' Update)."""

    def mutate(td: TableDef) -> TableDef:
        replica = _existing(td, region)
        if replica.status != ACTIVE:
            raise ResourceInUseException(
                messages.GT_REPLICA_BUSY.format(region=region, name=td.name, status=replica.status)
            )
        changed = _with_settings(replica, overrides, _overrides_version(ctx, replica.overrides_version))
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
        "SettingsVersion": None if table.settings_version is None else list(table.settings_version),
    }


def removal_notice(table_name: str, region: str) -> dict[str, Any]:
    """What a link carries to the other regions of a set when the replica of ``region`` is gone (its table was
    deleted): they take it off their lists."""
    return {"TableName": table_name, "SourceRegion": region, "Create": False, "Table": None, "Regions": None,
            "Removed": [region]}  # fmt: skip


def ensure_replica_table(ctx: Context, definition: dict[str, Any]) -> TableDef | None:
    """In ``ctx``'s region: create the replica a definition (``replica_set_definition``) describes if it is
    missing and the definition says so, else give the replica the set's regions; None when there is no replica
    (and none to create). A table of that name that is no replica refuses (ValidationException) to be created,
    and is left alone otherwise."""
    name = str(definition["TableName"])
    own_region = ctx.namespace.region
    existing = ctx.catalog.find(name)
    if existing is None or existing.status == DELETING:
        if not definition.get("Create") or definition.get("Table") is None or existing is not None:
            return None
        return tables.create(ctx, _new_replica_table(ctx, definition))
    if existing.global_table_version is None:
        if definition.get("Create"):
            raise ValidationException(messages.GT_NAME_TAKEN.format(name=name, region=own_region), bare=True)
        # No replica (a legacy member that left the set while a seeding of it was under way): it takes no list.
        return None

    incoming = _settings_version(definition)
    source = None if definition.get("Table") is None else TableDef.from_record(definition["Table"])
    own = None if source is None else _newer_settings(source.replica(own_region), existing.own_overrides_version)
    if (incoming is None or not _newer(incoming, existing.settings_version)) and own is None:

        def mutate(td: TableDef) -> TableDef:
            return _settled(dataclasses.replace(td, replicas=_listed(td, definition, source, own_region)))

        return tables.change(ctx, name, mutate)
    assert source is not None  # a settings version or a replica's settings come with the table's record

    def synchronize(td: TableDef) -> TableDef:
        listed = dataclasses.replace(td, replicas=_listed(td, definition, source, own_region))
        if incoming is not None and _newer(incoming, td.settings_version):
            listed = _synchronized(ctx, listed, source, incoming)
        mine = _newer_settings(source.replica(own_region), td.own_overrides_version)
        if mine is not None:
            listed = _with_own_settings(ctx, listed, mine, source)
        return _settled(listed)

    return tables.update(ctx, name, synchronize)


def drop_replica_table(ctx: Context, table_name: str) -> None:
    """Delete the replica table ``table_name`` of ``ctx``'s region, once it is no longer part of the set (its
    list emptied first, so its deletion is not announced to the others)."""
    td = ctx.catalog.find(table_name)
    if td is None or td.status == DELETING:
        return
    if td.replicas:
        tables.change(ctx, table_name, lambda t: dataclasses.replace(t, replicas=(), status=ACTIVE))
    tables.delete(ctx, table_name)


def synchronized_settings(td: TableDef) -> tuple[Any, ...]:
    """The settings of ``td`` every replica of its global table shares (the module's docstring), comparable:
    the billing mode, the table's write capacity (provisioned), time to live's attribute (None while off), each
    GSI not being deleted with its key schema, projection, write capacity, on-demand and warm throughput, and
    the table's on-demand and warm throughput."""
    provisioned = td.billing_mode is BillingMode.PROVISIONED
    gsis = sorted(
        (
            g.name,
            _key_record(g.key_schema.to_record()),
            g.projection.type,
            g.projection.non_key_attributes,
            _write_capacity(g.pending_throughput or g.throughput) if provisioned else None,
            _on_demand_units(g.on_demand),
            _warm_units(g.warm),
        )
        for g in td.gsis
        if g.status != DELETING
    )
    ttl = td.ttl.attribute_name if td.ttl is not None and td.ttl.enabled else None
    write = _write_capacity(td.pending_throughput or td.throughput) if provisioned else None
    # Not a shared setting: in the digest so that a replica's own settings changed here are announced too.
    own_settings = sorted((r.region, r.overrides_version) for r in td.replicas if r.overrides_version is not None)
    return (
        td.billing_mode.value, write, tuple(gsis), ttl, _on_demand_units(td.on_demand), _warm_units(td.warm),
        tuple(own_settings),
    )  # fmt: skip


def settings_digest(td: TableDef) -> str:
    """A short digest of ``synchronized_settings(td)``."""
    return hashlib.sha256(orjson.dumps(synchronized_settings(td))).hexdigest()[:16]


def changed_settings(td: TableDef) -> bool | None:
    """Whether ``td``'s synchronized settings changed in its region since their version was set (None: they
    were never noted: the table just became global)."""
    if td.settings_digest is None:
        return None
    return settings_digest(td) != td.settings_digest


def stamp_settings(ctx: Context, table_name: str, version: tuple[int, str] | None) -> TableDef:
    """Note ``table_name``'s synchronized settings as they are now, of ``version`` (None: noted without a change
    to announce: the settings of a table that just became global, which its replicas were created with)."""

    def mutate(td: TableDef) -> TableDef:
        stamped = td.settings_version if version is None else version
        return dataclasses.replace(td, settings_version=stamped, settings_digest=settings_digest(td))

    return tables.change(ctx, table_name, mutate)


# ---- internals ----------------------------------------------------------------------------------------------


def _key_record(record: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(entry) for entry in record)


def _write_capacity(throughput: ProvisionedThroughput | None) -> int | None:
    return None if throughput is None else throughput.write


def _on_demand_units(on_demand: OnDemandThroughput | None) -> tuple[int | None, int | None] | None:
    return None if on_demand is None else (on_demand.max_read, on_demand.max_write)


def _warm_units(warm: WarmThroughput | None) -> tuple[int, int] | None:
    return None if warm is None else (warm.read, warm.write)


def _settings_version(definition: dict[str, Any]) -> tuple[int, str] | None:
    raw = definition.get("SettingsVersion")
    if raw is None or definition.get("Table") is None:
        return None
    return int(raw[0]), str(raw[1])


def _newer(incoming: tuple[int, str], local: tuple[int, str] | None) -> bool:
    return local is None or incoming > local


def _synchronized(ctx: Context, td: TableDef, source: TableDef, version: tuple[int, str]) -> TableDef:
    """``td`` (a replica) with ``source``'s synchronized settings, of ``version``: its GSIs created (backfilled)
    or deleted as the source's, its billing mode and write capacities the source's (its read capacities its
    own), the source's time to live, on-demand throughput and warm throughput (of the table and its GSIs)."""
    now = ctx.clock.now()
    provisioned = source.billing_mode is BillingMode.PROVISIONED
    throughput = td.throughput
    if provisioned:
        read = td.throughput.read if td.billing_mode is BillingMode.PROVISIONED else source.throughput.read
        write = (source.pending_throughput or source.throughput).write
        throughput = dataclasses.replace(td.throughput, read=read, write=write)
    gsis, changed = _synchronized_gsis(ctx, td, source, provisioned)
    defs = list(td.attribute_definitions)
    for attr in source.attribute_definitions:
        if td.attribute_type(attr.name) is None:
            defs.append(KeyAttr(attr.name, attr.type))
    new = dataclasses.replace(
        td,
        billing_mode=source.billing_mode,
        throughput=throughput,
        pending_throughput=None,
        gsis=gsis,
        attribute_definitions=tuple(defs),
        ttl=source.ttl,
        on_demand=source.on_demand,
        warm=source.warm,
        settings_version=version,
    )
    new = dataclasses.replace(new, settings_digest=settings_digest(new))
    if source.billing_mode is not td.billing_mode:
        new = dataclasses.replace(new, billing_mode_explicit=True)
        if source.billing_mode is BillingMode.PAY_PER_REQUEST:
            new = dataclasses.replace(new, last_update_to_pay_per_request=now)
    if changed and td.status == ACTIVE:
        new = dataclasses.replace(new, status=UPDATING, status_until=now + ctx.config.update_table_delay)
    return new


def _synchronized_gsis(
    ctx: Context, td: TableDef, source: TableDef, provisioned: bool
) -> tuple[tuple[IndexDef, ...], bool]:
    """The replica's GSIs after the source's: (the GSIs, whether one is created or deleted)."""
    wanted = {g.name: g for g in source.gsis if g.status != DELETING}
    out: list[IndexDef] = []
    changed = False
    for gsi in td.gsis:
        src = wanted.get(gsi.name)
        if gsi.status == DELETING:
            out.append(gsi)
        elif src is None:
            out.append(dataclasses.replace(gsi, status=DELETING))
            changed = True
        else:
            out.append(_synchronized_gsi(gsi, src, provisioned))
    for name, src in wanted.items():
        if td.index(name) is None:
            out.append(_created_gsi(ctx, src))
            changed = True
    return tuple(out), changed


def _synchronized_gsi(gsi: IndexDef, src: IndexDef, provisioned: bool) -> IndexDef:
    """A GSI both hold, with the source's write capacity (its read capacity this replica's own), on-demand
    throughput and warm throughput."""
    gsi = dataclasses.replace(gsi, on_demand=src.on_demand, warm=src.warm)
    if not provisioned:
        return gsi
    if gsi.throughput is not None and src.throughput is not None:
        write = (src.pending_throughput or src.throughput).write
        return dataclasses.replace(gsi, throughput=dataclasses.replace(gsi.throughput, write=write))
    return dataclasses.replace(gsi, throughput=src.throughput)


def _created_gsi(ctx: Context, source: IndexDef) -> IndexDef:
    """A GSI another region created: CREATING here until its backfill has copied this replica's items."""
    return copy_index_definition(ctx, source, status=CREATING, backfilling=True, online=True)


def _existing(td: TableDef, region: str) -> ReplicaDef:
    replica = td.replica(region)
    if replica is None:
        raise ValidationException(messages.GT_REPLICA_NOT_FOUND.format(region=region), bare=True)
    return replica


def _with_replica(td: TableDef, changed: ReplicaDef) -> TableDef:
    return dataclasses.replace(td, replicas=tuple(changed if r.region == changed.region else r for r in td.replicas))


def _settled(td: TableDef) -> TableDef:
    """UPDATING while a replica is being created, ACTIVE once none is; a strongly consistent table whose last
    replica left is a single-Region table again (no strong log, no witness)."""
    if not td.replicas and td.strong_log is not None:
        td = dataclasses.replace(td, strong_log=None, witness_region=None)
    creating = any(r.status == CREATING for r in td.replicas)
    if td.status == UPDATING and not creating and td.status_until is None:
        return dataclasses.replace(td, status=ACTIVE)
    return td


def _listed(
    td: TableDef, definition: dict[str, Any], listing: TableDef | None, own_region: str
) -> tuple[ReplicaDef, ...]:
    """The replica list ``td`` takes from ``definition``: every other region it names, with its own settings as
    ``td`` lists them or, when newer, as ``listing`` (the definition's table, None in a removal notice) does;
    or, for a removal notice, the current list without the removed regions."""
    removed = set(definition.get("Removed") or ())
    regions = definition.get("Regions")
    if regions is None:
        return tuple(r for r in td.replicas if r.region not in removed)
    out: list[ReplicaDef] = []
    for region, status in regions:
        if region == own_region or region in removed:
            continue
        known = td.replica(region)
        told = _newer_settings(
            None if listing is None else listing.replica(region), None if known is None else known.overrides_version
        )
        if told is not None:
            known = _own_settings_of(told, known)
        out.append(ReplicaDef(region, status) if known is None else dataclasses.replace(known, status=status))
    return tuple(out)


def _own_settings_of(told: ReplicaDef, known: ReplicaDef | None) -> ReplicaDef:
    """The entry ``known`` (None: a region not listed yet) with the replica settings ``told`` holds."""
    base = known if known is not None else ReplicaDef(told.region, told.status)
    return _with_settings(base, told, told.overrides_version)


def _newer_settings(listed: ReplicaDef | None, version: tuple[int, str] | None) -> ReplicaDef | None:
    """``listed`` (a region's entry in another region's list) if its replica settings are newer than ``version``
    (None: none known)."""
    if listed is None or listed.overrides_version is None:
        return None
    return listed if _newer(listed.overrides_version, version) else None


def _with_own_settings(
    ctx: Context, td: TableDef, own: ReplicaDef, source: TableDef, *, created: bool = False
) -> TableDef:
    """``td`` (this region's replica) with the settings another region lists for it: the read capacity of the
    table and of each GSI (a provisioned table's: the override, else the source's, as DynamoDB takes an override
    left out), the on-demand MaxReadRequestUnits of each (the override, else the set's: ``TableDef.on_demand_of``)
    and the table class (the override, else the source's). ``created``: a new replica's table, whose capacities
    start there rather than change."""
    throughput, pending, gsis = td.throughput, td.pending_throughput, td.gsis
    if td.billing_mode is BillingMode.PROVISIONED:
        read = source.throughput.read if own.read_capacity_override is None else own.read_capacity_override
        now = None if created else ctx.clock.now()
        throughput = _with_read(throughput, read, now)
        pending = None if pending is None else _with_read(pending, read, now)
        reads = dict(own.gsi_overrides)
        gsis = tuple(_gsi_with_read(g, reads.get(g.name), source.index(g.name), now) for g in td.gsis)
    table_class = own.table_class or source.table_class
    new = dataclasses.replace(
        td,
        throughput=throughput,
        pending_throughput=pending,
        gsis=gsis,
        own_overrides_version=own.overrides_version,
        own_max_read=own.max_read_override,
        own_gsi_max_reads=own.gsi_max_read_overrides,
    )
    if table_class != td.table_class:
        new = dataclasses.replace(new, table_class=table_class, table_class_updated_at=ctx.clock.now())
    return new


def _gsi_with_read(gsi: IndexDef, override: int | None, source: IndexDef | None, now: float | None) -> IndexDef:
    """A provisioned replica's GSI with its read capacity: the override, else the source's GSI's."""
    if gsi.throughput is None:
        return gsi
    read = override
    if read is None:
        if source is None or source.throughput is None:
            return gsi
        read = source.throughput.read
    return dataclasses.replace(gsi, throughput=_with_read(gsi.throughput, read, now))


def _with_read(throughput: ProvisionedThroughput, read: int, now: float | None) -> ProvisionedThroughput:
    """``throughput`` with ``read`` units, counted as an increase or a decrease as UpdateTable counts one (the
    daily limit on decreases is the changing region's to check: this one takes the change); ``now`` None: set,
    not counted (a new table's)."""
    if now is None:
        return dataclasses.replace(throughput, read=read)
    if read > throughput.read:
        return dataclasses.replace(throughput, read=read, last_increase=now)
    if read < throughput.read:
        decreases = throughput.decreases_on(now) + 1
        return dataclasses.replace(throughput, read=read, last_decrease=now, decreases_today=decreases)
    return throughput


def _new_replica_table(ctx: Context, definition: dict[str, Any]) -> TableDef:
    """A replica's definition from the source's record: the same schema, indexes, billing and stream, new ids,
    empty, ACTIVE, its own read capacities (table and GSIs) and table class when the source's list gives them
    overrides."""
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
    replica = dataclasses.replace(
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
        replicas=_listed(source, definition, source, own_region),
        global_table_version=GLOBAL_TABLE_VERSION,
        own_max_read=None,  # (the source's own maxima, if it is a replica that overrides them, are not this one's)
        own_gsi_max_reads=(),
    )
    if own is not None and own.overrides_version is not None:
        replica = _with_own_settings(ctx, replica, own, source, created=True)  # its GSIs' reads, the version
    # The source's settings version, with the digest of the settings as this replica holds them.
    return dataclasses.replace(replica, settings_digest=settings_digest(replica))


def _new_index(ctx: Context, index: IndexDef) -> IndexDef:
    """An index of a new replica table: ACTIVE with it (the seeding writes its entries, no backfill)."""
    return copy_index_definition(ctx, index, status=ACTIVE, backfilling=False, online=False)
