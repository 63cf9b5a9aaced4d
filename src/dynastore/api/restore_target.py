"""The table a restore creates: the source's schema, indexes, capacity and encryption, with the request's
overrides (GlobalSecondaryIndexOverride, LocalSecondaryIndexOverride, BillingModeOverride,
ProvisionedThroughputOverride, OnDemandThroughputOverride, SSESpecificationOverride). What DynamoDB does not
carry over (tags, stream, time to live, point-in-time recovery, policies, deletion protection) starts unset."""

from __future__ import annotations

import uuid
from typing import Any

from dynastore import messages
from dynastore.api.table_requests import (
    build_key_schema,
    build_on_demand,
    build_projection,
    build_sse,
    build_throughput,
    check_gsi_key_schema,
    check_projection,
    check_sse,
    invalid,
)
from dynastore.engine.context import Context
from dynastore.model.table_schema import CREATING, BillingMode, IndexDef, KeyAttr, TableDef

__all__ = ["restored_table"]


def restored_table(ctx: Context, source: TableDef, name: str, req: dict[str, Any]) -> TableDef:
    """The new table ``name`` (CREATING, empty) a restore of ``source`` fills, with the overrides of ``req``."""
    check_sse(req.get("SSESpecificationOverride"))
    catalog, config = ctx.catalog, ctx.config
    now = ctx.clock.now()
    types = {a.name: a.type for a in source.attribute_definitions}
    billing = BillingMode(req.get("BillingModeOverride") or source.billing_mode.value)
    throughput = build_throughput(req.get("ProvisionedThroughputOverride")) or source.throughput
    if req.get("LocalSecondaryIndexOverride") is not None:
        lsis = tuple(_lsi(ctx, index, types) for index in req["LocalSecondaryIndexOverride"])
    else:
        lsis = tuple(_renumbered(ctx, index) for index in source.lsis)
    if req.get("GlobalSecondaryIndexOverride") is not None:
        gsis = tuple(_gsi(ctx, index, types) for index in req["GlobalSecondaryIndexOverride"])
    else:
        gsis = tuple(_renumbered(ctx, index) for index in source.gsis)
    sse = source.sse
    if req.get("SSESpecificationOverride") is not None:
        sse = build_sse(req["SSESpecificationOverride"], config.region, config.account_id)
    on_demand = build_on_demand(req.get("OnDemandThroughputOverride")) or source.on_demand
    return TableDef(
        name=name,
        table_id=catalog.next_table_id(),
        uuid=str(uuid.uuid4()),
        key_schema=source.key_schema,
        attribute_definitions=_used_definitions(source, lsis, gsis),
        created_at=now,
        billing_mode=billing,
        billing_mode_explicit=source.billing_mode_explicit or req.get("BillingModeOverride") is not None,
        last_update_to_pay_per_request=now if billing is BillingMode.PAY_PER_REQUEST else None,
        throughput=throughput,
        on_demand=on_demand,
        lsis=lsis,
        gsis=gsis,
        sse=sse,
        table_class=source.table_class,
        warm=source.warm,
        status=CREATING,
    )


def _renumbered(ctx: Context, index: IndexDef) -> IndexDef:
    return IndexDef(
        name=index.name,
        kind=index.kind,
        key_schema=index.key_schema,
        projection=index.projection,
        index_id=ctx.catalog.next_table_id(),
        throughput=index.throughput,
        on_demand=index.on_demand,
        warm=index.warm,
        status=CREATING if index.kind == "GSI" else index.status,
    )


def _checked_types(key_schema: list[dict[str, Any]], types: dict[str, str]) -> None:
    for element in key_schema:
        if element["AttributeName"] not in types:
            raise invalid(messages.PITR_OVERRIDE_KEY_UNDEFINED.format(name=element["AttributeName"]))


def _lsi(ctx: Context, index: dict[str, Any], types: dict[str, str]) -> IndexDef:
    _checked_types(index["KeySchema"], types)
    check_projection(index["Projection"])
    return IndexDef(
        name=index["IndexName"],
        kind="LSI",
        key_schema=build_key_schema(index["KeySchema"], types),
        projection=build_projection(index["Projection"]),
        index_id=ctx.catalog.next_table_id(),
    )


def _gsi(ctx: Context, index: dict[str, Any], types: dict[str, str]) -> IndexDef:
    check_gsi_key_schema(index["KeySchema"], index["IndexName"])
    _checked_types(index["KeySchema"], types)
    check_projection(index["Projection"])
    return IndexDef(
        name=index["IndexName"],
        kind="GSI",
        key_schema=build_key_schema(index["KeySchema"], types),
        projection=build_projection(index["Projection"]),
        index_id=ctx.catalog.next_table_id(),
        throughput=build_throughput(index.get("ProvisionedThroughput")),
        on_demand=build_on_demand(index.get("OnDemandThroughput")),
        status=CREATING,
    )


def _used_definitions(source: TableDef, lsis: tuple[IndexDef, ...], gsis: tuple[IndexDef, ...]) -> tuple[KeyAttr, ...]:
    used = set(source.key_schema.names)
    for index in lsis + gsis:
        used.update(index.key_schema.names)
    return tuple(a for a in source.attribute_definitions if a.name in used)
