"""UpdateTable: throughput, billing mode, GSI create/update/delete, stream, SSE, class, deletion protection.

Request-shape rules run first (nothing to update, capacity bounds, GSI update structure, stream/SSE shapes,
members that must travel alone), then the table is looked up and the state rules run against it inside
``Catalog.update`` so the check and the change see the same definition. A change that DynamoDB performs
asynchronously leaves the table UPDATING for ``update_table_delay``; new throughput values (like DynamoDB)
show only once the table is ACTIVE again.

WarmThroughput (of the table, and of a GSI in an Update action) is stored and described (model/warm_throughput.py).
The global-table members (ReplicaUpdates, MultiRegionConsistency, GlobalTableWitnessUpdates) are
api/replica_updates.py's (multi-Region strong consistency's rules: api/multi_region_strong.py): a ReplicaUpdates
request changes one replica (an MRSC table's creation or deletion: its two other Regions) and nothing else. The
daily limit on throughput decreases is engine/capacity/decreases.py's ``check_throughput_decrease``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

from dynastore import limits, messages
from dynastore.api import replica_updates
from dynastore.api.table_description import table_description
from dynastore.api.table_requests import (
    MAX_CAPACITY_UNITS,
    build_key_schema,
    build_on_demand,
    build_projection,
    build_sse,
    build_throughput,
    check_capacity_bounds,
    check_gsi_key_schema,
    check_on_demand,
    check_projected_total,
    check_projection,
    check_sse,
    check_table_class,
    invalid,
    stream_label,
)
from dynastore.engine import tables
from dynastore.engine.capacity.decreases import check_throughput_decrease
from dynastore.engine.context import Context
from dynastore.errors import (
    LimitExceededException,
    ResourceInUseException,
    ResourceNotFoundException,
    ValidationException,
)
from dynastore.model.table_schema import (
    CREATING,
    DELETING,
    UPDATING,
    BillingMode,
    IndexDef,
    KeyAttr,
    ProvisionedThroughput,
    StreamSpec,
    TableDef,
)
from dynastore.model.warm_throughput import warm_from_request

__all__ = ["handle"]

_UPDATE_MEMBERS = (
    "ProvisionedThroughput",
    "BillingMode",
    "StreamSpecification",
    "SSESpecification",
    "DeletionProtectionEnabled",
    "OnDemandThroughput",
    "WarmThroughput",
    "TableClass",
    "MultiRegionConsistency",
)


def _present(req: dict[str, Any], member: str) -> bool:
    return req.get(member) is not None


def _check_request(req: dict[str, Any], region: str) -> None:
    gsi_updates: list[dict[str, Any]] = req.get("GlobalSecondaryIndexUpdates") or []
    if (
        not any(_present(req, m) for m in _UPDATE_MEMBERS)
        and not gsi_updates
        and not req.get("ReplicaUpdates")
        and not req.get("GlobalTableWitnessUpdates")
    ):
        raise ValidationException(messages.UPDATE_NOTHING, bare=True)
    others = [m for m in _UPDATE_MEMBERS if m != "MultiRegionConsistency" and _present(req, m)]
    replica_updates.check_request(req, region, [*others, *(["GlobalSecondaryIndexUpdates"] if gsi_updates else [])])
    pt = req.get("ProvisionedThroughput")
    if pt is not None:
        check_capacity_bounds(pt)
    seen: set[str] = set()
    for update in gsi_updates:
        actions = [a for a in ("Update", "Create", "Delete") if update.get(a) is not None]
        if not actions:
            raise invalid(messages.GSI_UPDATE_NO_ACTION)
        if len(actions) > 1:
            raise invalid(messages.GSI_UPDATE_MANY_ACTIONS)
        name = update[actions[0]]["IndexName"]
        if name in seen:
            raise invalid(messages.GSI_UPDATE_DUPLICATE.format(index=name))
        seen.add(name)
    stream = req.get("StreamSpecification")
    if stream is not None:
        if stream.get("StreamEnabled"):
            if stream.get("StreamViewType") is None:
                raise invalid(messages.UPDATE_STREAM_NEEDS_VIEW_TYPE)
        elif stream.get("StreamViewType") is not None:
            raise invalid(messages.UPDATE_STREAM_DISABLED_VIEW_TYPE)
    check_sse(req.get("SSESpecification"))
    check_table_class(req.get("TableClass"))
    _check_alone(req, gsi_updates)


def _check_alone(req: dict[str, Any], gsi_updates: list[dict[str, Any]]) -> None:
    members = [m for m in _UPDATE_MEMBERS if _present(req, m)]
    if gsi_updates:
        members.append("GlobalSecondaryIndexUpdates")
    for member, what in (
        ("SSESpecification", "Server-Side Encryption"),
        ("TableClass", "TableClass"),
        ("DeletionProtectionEnabled", "DeletionProtection"),
    ):
        if member in members and len(members) > 1:
            raise invalid(messages.UPDATE_ONLY_OPERATION.format(what=what))
    if "OnDemandThroughput" in members and any(m not in ("OnDemandThroughput", "BillingMode") for m in members):
        raise invalid(messages.UPDATE_ON_DEMAND_WITH_OTHERS)
    creates_or_deletes = any(u.get("Create") is not None or u.get("Delete") is not None for u in gsi_updates)
    if "ProvisionedThroughput" in members and "StreamSpecification" in members:
        raise invalid(messages.UPDATE_STREAM_WHILE_IOPS)
    if "ProvisionedThroughput" in members and creates_or_deletes:
        raise invalid(messages.UPDATE_INDEX_WHILE_IOPS)
    if "StreamSpecification" in members and creates_or_deletes:
        raise invalid(messages.UPDATE_INDEX_WHILE_STREAM)


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    _check_request(req, ctx.namespace.region)
    if req.get("ReplicaUpdates"):
        return replica_updates.handle(req, ctx)
    name: str = req["TableName"]
    now = ctx.clock.now()

    def mutate(td: TableDef) -> TableDef:
        return _Update(req, td, ctx, now).apply()

    new = tables.update(ctx, name, mutate)
    return {"TableDescription": table_description(ctx, new)}


class _Update:
    """One UpdateTable applied to one TableDef: checks in DynamoDB's order, then the new definition."""

    def __init__(self, req: dict[str, Any], td: TableDef, ctx: Context, now: float) -> None:
        self.req = req
        self.td = td
        self.ctx = ctx
        self.now = now
        self.async_change = False
        self.billing = BillingMode(req["BillingMode"]) if req.get("BillingMode") else td.billing_mode
        self.to_provisioned = td.billing_mode is BillingMode.PAY_PER_REQUEST and self.billing is BillingMode.PROVISIONED
        self.to_ppr = td.billing_mode is BillingMode.PROVISIONED and self.billing is BillingMode.PAY_PER_REQUEST
        self.gsi_updates: list[dict[str, Any]] = req.get("GlobalSecondaryIndexUpdates") or []

    def apply(self) -> TableDef:
        td = self.td
        if td.status == CREATING:
            raise ResourceInUseException(messages.TABLE_BEING_CREATED.format(name=td.name))
        if td.status == UPDATING:
            raise ResourceInUseException(messages.TABLE_BEING_UPDATED.format(name=td.name))
        if td.status == DELETING:
            raise ResourceInUseException(messages.TABLE_BEING_DELETED.format(name=td.name))
        td = self._billing_and_throughput(td)
        td = self._gsi_updates(td)
        td = self._stream(td)
        td = self._simple_members(td)
        if self.async_change:
            td = replace(td, status=UPDATING, status_until=self.now + self.ctx.config.update_table_delay)
        return td

    # ---- throughput and billing ---------------------------------------------------------------------------
    def _billing_and_throughput(self, td: TableDef) -> TableDef:
        pt_req = self.req.get("ProvisionedThroughput")
        if self.billing is BillingMode.PAY_PER_REQUEST and pt_req is not None:
            raise invalid(messages.PPR_WITH_THROUGHPUT)
        if self.to_provisioned:
            if pt_req is None:
                raise invalid(messages.UPDATE_PROVISIONED_WITHOUT_THROUGHPUT)
            updated = {
                u["Update"]["IndexName"]
                for u in self.gsi_updates
                if u.get("Update") is not None and u["Update"].get("ProvisionedThroughput") is not None
            }
            for gsi in td.gsis:
                if gsi.status != DELETING and gsi.name not in updated:
                    raise invalid(messages.GSI_THROUGHPUT_MUST_BE_SPECIFIED.format(index=gsi.name))
        check_on_demand(self.req.get("OnDemandThroughput"), self.billing, allow_clear=True)
        if self.to_ppr:
            self.async_change = True
            td = replace(td, billing_mode=self.billing, last_update_to_pay_per_request=self.now)
        elif self.to_provisioned:
            assert pt_req is not None
            self.async_change = True
            td = replace(
                td,
                billing_mode=self.billing,
                throughput=replace(td.throughput, read=pt_req["ReadCapacityUnits"], write=pt_req["WriteCapacityUnits"]),
                on_demand=None,
            )
        elif pt_req is not None:
            current = td.throughput
            read, write = pt_req["ReadCapacityUnits"], pt_req["WriteCapacityUnits"]
            if read == current.read and write == current.write:
                raise ValidationException(
                    messages.THROUGHPUT_WILL_NOT_CHANGE.format(
                        cur_read=current.read, req_read=read, cur_write=current.write, req_write=write
                    ),
                    bare=True,
                )
            shown, pending = _throughput_change(current, read, write, self.now)
            self.async_change = True
            td = replace(td, throughput=shown, pending_throughput=pending)
        odt = self.req.get("OnDemandThroughput")
        if odt:
            td = replace(td, on_demand=build_on_demand(odt, td.on_demand))
        if self.req.get("BillingMode") is not None:
            td = replace(td, billing_mode_explicit=True)
        return td

    # ---- global secondary indexes -------------------------------------------------------------------------
    def _gsi_updates(self, td: TableDef) -> TableDef:
        if not self.gsi_updates:
            return td
        online = sum(1 for u in self.gsi_updates if u.get("Create") is not None or u.get("Delete") is not None)
        # The Developer Guide: "During the backfilling phase, you can delete the index that is being created".
        deleting = {u["Delete"]["IndexName"] for u in self.gsi_updates if u.get("Delete") is not None}
        busy = any(g.status == DELETING or (g.status == CREATING and g.name not in deleting) for g in td.gsis)
        if online > 1 or (online and busy):
            raise LimitExceededException(messages.GSI_ONLINE_INDEX_LIMIT)
        for update in self.gsi_updates:
            if update.get("Update") is not None:
                td = self._gsi_update(td, update["Update"])
            elif update.get("Create") is not None:
                td = self._gsi_create(td, update["Create"])
            else:
                td = self._gsi_delete(td, update["Delete"])
        return td

    def _existing_gsi(self, td: TableDef, name: str, not_gsi_message: str) -> IndexDef:
        idx = td.index(name)
        if idx is None:
            raise ResourceNotFoundException(messages.INDEX_NOT_FOUND_FOR_TABLE.format(index=name, name=td.name))
        if idx.kind != "GSI":
            raise ValidationException(not_gsi_message.format(index=name), bare=True)
        return idx

    def _gsi_update(self, td: TableDef, action: dict[str, Any]) -> TableDef:
        name = action["IndexName"]
        pt_req = action.get("ProvisionedThroughput")
        if pt_req is not None and any(
            (pt_req.get(m) or 0) > MAX_CAPACITY_UNITS for m in ("ReadCapacityUnits", "WriteCapacityUnits")
        ):
            raise ValidationException(messages.GSI_INDEX_UPDATE_BLOCKED, bare=True)
        idx = self._existing_gsi(td, name, messages.GSI_UPDATE_NOT_GSI)
        if pt_req is not None and self.billing is BillingMode.PAY_PER_REQUEST:
            raise invalid(messages.GSI_UPDATE_PPR_WITH_THROUGHPUT.format(index=name))
        check_on_demand(action.get("OnDemandThroughput"), self.billing, allow_clear=True)
        new = idx
        if pt_req is not None:
            read, write = pt_req["ReadCapacityUnits"], pt_req["WriteCapacityUnits"]
            current = idx.throughput or ProvisionedThroughput(0, 0)
            if self.to_provisioned:
                new = replace(new, throughput=replace(current, read=read, write=write), status=UPDATING)
            else:
                if read == current.read and write == current.write:
                    raise ValidationException(
                        messages.INDEX_THROUGHPUT_WILL_NOT_CHANGE.format(
                            index=name,
                            cur_read=current.read,
                            req_read=read,
                            cur_write=current.write,
                            req_write=write,
                        ),
                        bare=True,
                    )
                shown, pending = _throughput_change(current, read, write, self.now)
                new = replace(new, throughput=shown, pending_throughput=pending, status=UPDATING)
            self.async_change = True
        if action.get("OnDemandThroughput"):
            new = replace(new, on_demand=build_on_demand(action["OnDemandThroughput"], new.on_demand))
        if action.get("WarmThroughput") is not None:
            new = replace(new, warm=warm_from_request(action["WarmThroughput"], new.warm))
        return _replace_gsi(td, new)

    def _gsi_create(self, td: TableDef, action: dict[str, Any]) -> TableDef:
        name = action["IndexName"]
        if td.index(name) is not None:
            raise ValidationException(messages.GSI_ALREADY_EXISTS, bare=True)
        types = {a.name: a.type for a in td.attribute_definitions}
        for d in self.req.get("AttributeDefinitions") or []:
            types.setdefault(d["AttributeName"], d["AttributeType"])
        key_schema: list[dict[str, Any]] = action["KeySchema"]
        keys = [k["AttributeName"] for k in key_schema]
        if any(k not in types for k in keys):
            raise invalid(messages.GSI_CREATE_ATTRIBUTE_NOT_DEFINED.format(index=name))
        check_gsi_key_schema(key_schema, name)
        check_projection(action["Projection"])
        existing = sum(len(i.projection.non_key_attributes) for i in (*td.lsis, *td.gsis) if i.status != DELETING)
        check_projected_total([action["Projection"]], existing)
        pt_req = action.get("ProvisionedThroughput")
        if self.billing is BillingMode.PAY_PER_REQUEST:
            if pt_req is not None:
                raise invalid(messages.GSI_UPDATE_PPR_WITH_THROUGHPUT.format(index=name))
        elif pt_req is None:
            raise invalid(messages.GSI_THROUGHPUT_MUST_BE_SPECIFIED.format(index=name))
        else:
            check_capacity_bounds(pt_req)
        check_on_demand(action.get("OnDemandThroughput"), self.billing, allow_clear=False)
        if len(td.gsis) >= limits.MAX_GSI_PER_TABLE:
            raise LimitExceededException(
                messages.INVALID_PARAMS.format(detail=messages.TOO_MANY_GSIS.format(limit=limits.MAX_GSI_PER_TABLE))
            )
        index = IndexDef(
            name=name,
            kind="GSI",
            key_schema=build_key_schema(key_schema, types),
            projection=build_projection(action["Projection"]),
            index_id=self.ctx.catalog.next_table_id(),
            throughput=build_throughput(pt_req),
            on_demand=build_on_demand(action.get("OnDemandThroughput")),
            warm=warm_from_request(action.get("WarmThroughput")),
            status=CREATING,
            backfilling=True,  # engine/indexes.maintain copies the existing items, then clears it
            online=True,
        )
        defs = list(td.attribute_definitions)
        for k in keys:
            if td.attribute_type(k) is None:
                defs.append(KeyAttr(k, types[k]))
        self.async_change = True
        return replace(td, gsis=(*td.gsis, index), attribute_definitions=tuple(defs))

    def _gsi_delete(self, td: TableDef, action: dict[str, Any]) -> TableDef:
        idx = self._existing_gsi(td, action["IndexName"], messages.GSI_DELETE_NOT_GSI)
        self.async_change = True
        return _replace_gsi(td, replace(idx, status=DELETING))

    # ---- stream, SSE, class, protection -------------------------------------------------------------------
    def _stream(self, td: TableDef) -> TableDef:
        spec = self.req.get("StreamSpecification")
        if spec is None:
            return td
        enabled_now = td.stream is not None and td.stream.enabled
        if spec.get("StreamEnabled"):
            if enabled_now:
                raise ValidationException(messages.STREAM_ALREADY_ENABLED.format(name=td.name), bare=True)
            previous = td.stream.label if td.stream is not None else None
            stream = StreamSpec(True, spec["StreamViewType"], stream_label(self.now, previous))
        else:
            if not enabled_now:
                raise ValidationException(messages.STREAM_NOTHING_TO_DISABLE.format(name=td.name), bare=True)
            if any(r.status != DELETING for r in td.replicas) and not td.is_strong:
                # An MREC global table keeps its stream (DynamoDB's rule: its replication reads it); an MRSC
                # table's stream is its own to enable and disable (MRSC replication does not use it).
                raise ValidationException(messages.REPLICA_STREAM_DISABLE.format(name=td.name), bare=True)
            stream = StreamSpec(False, None, td.stream.label if td.stream is not None else None)
        self.async_change = True
        return replace(td, stream=stream)

    def _simple_members(self, td: TableDef) -> TableDef:
        namespace = self.ctx.namespace
        if self.req.get("SSESpecification") is not None:
            td = replace(td, sse=build_sse(self.req["SSESpecification"], namespace.region, namespace.account_id))
        if self.req.get("TableClass") is not None:
            td = replace(td, table_class=self.req["TableClass"], table_class_updated_at=self.now)
            self.async_change = True
        if self.req.get("DeletionProtectionEnabled") is not None:
            td = replace(td, deletion_protection=bool(self.req["DeletionProtectionEnabled"]))
        if self.req.get("WarmThroughput") is not None:
            td = replace(td, warm=warm_from_request(self.req["WarmThroughput"], td.warm))
        return td


def _throughput_change(
    current: ProvisionedThroughput, read: int, write: int, now: float
) -> tuple[ProvisionedThroughput, ProvisionedThroughput]:
    """(what DescribeTable shows while UPDATING, what applies once ACTIVE) for a throughput change."""
    increase = read > current.read or write > current.write
    decrease = read < current.read or write < current.write
    if decrease:
        check_throughput_decrease(current, now)  # the daily limit (LimitExceededException)
    shown = dataclasses.replace(
        current,
        last_increase=now if increase else current.last_increase,
        last_decrease=now if decrease else current.last_decrease,
    )
    decreases = shown.decreases_on(now) if not decrease else current.decreases_on(now) + 1
    pending = dataclasses.replace(shown, read=read, write=write, decreases_today=decreases)
    shown = dataclasses.replace(shown, decreases_today=current.decreases_on(now))
    return shown, pending


def _replace_gsi(td: TableDef, new: IndexDef) -> TableDef:
    return replace(td, gsis=tuple(new if g.name == new.name else g for g in td.gsis))
