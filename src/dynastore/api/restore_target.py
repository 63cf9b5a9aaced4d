"""The table a restore creates: the source's schema, indexes, capacity and encryption, with the request's
overrides (GlobalSecondaryIndexOverride, LocalSecondaryIndexOverride, BillingModeOverride,
ProvisionedThroughputOverride, OnDemandThroughputOverride, SSESpecificationOverride). What DynamoDB does not
carry over (tags, stream, time to live, point-in-time recovery, policies, deletion protection) starts unset."""

from __future__ import annotations

import dataclasses
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
from dynastore.engine.restore import restored_definition
from dynastore.model.table_schema import CREATING, BillingMode, IndexDef, KeyAttr, TableDef

__all__ = ["restored_table"]


def restored_table(ctx: Context, source: TableDef, name: str, req: dict[str, Any]) -> TableDef:
    """The new table ``name`` (CREATING, empty) a restore of ``source`` fills, with the overrides of ``req``."""
    check_sse(req.get("SSESpecificationOverride"))
    config = ctx.config
    table = dataclasses.replace(restored_definition(ctx, source, name), pitr=None)
    types = {a.name: a.type for a in source.attribute_definitions}
    if req.get("LocalSecondaryIndexOverride") is not None:
        lsis = tuple(_lsi(ctx, index, types) for index in req["LocalSecondaryIndexOverride"])
        table = dataclasses.replace(table, lsis=lsis)
    if req.get("GlobalSecondaryIndexOverride") is not None:
        gsis = tuple(_gsi(ctx, index, types) for index in req["GlobalSecondaryIndexOverride"])
        table = dataclasses.replace(table, gsis=gsis)
    if req.get("BillingModeOverride") is not None:
        billing = BillingMode(req["BillingModeOverride"])
        table = dataclasses.replace(
            table,
            billing_mode=billing,
            billing_mode_explicit=True,
            last_update_to_pay_per_request=table.created_at if billing is BillingMode.PAY_PER_REQUEST else None,
        )
    throughput = build_throughput(req.get("ProvisionedThroughputOverride"))
    if throughput is not None:
        table = dataclasses.replace(table, throughput=throughput)
    if table.billing_mode is BillingMode.PROVISIONED:
        table = _provisioned(table, req)
    on_demand = build_on_demand(req.get("OnDemandThroughputOverride"))
    if on_demand is not None:
        table = dataclasses.replace(table, on_demand=on_demand)
    if req.get("SSESpecificationOverride") is not None:
        sse = build_sse(req["SSESpecificationOverride"], config.region, config.account_id)
        table = dataclasses.replace(table, sse=sse)
    return dataclasses.replace(table, attribute_definitions=_used_definitions(source, table.lsis, table.gsis))


def _provisioned(table: TableDef, req: dict[str, Any]) -> TableDef:
    """A restored table billed PROVISIONED (the source's mode or the override's) needs its throughput; its GSIs
    without one of their own (an on-demand source's) take the table's."""
    if table.throughput.read == 0 or table.throughput.write == 0:
        raise invalid(messages.PROVISIONED_WITHOUT_THROUGHPUT)
    gsis = tuple(
        index if index.throughput is not None else dataclasses.replace(index, throughput=table.throughput)
        for index in table.gsis
    )
    return dataclasses.replace(table, gsis=gsis)


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
