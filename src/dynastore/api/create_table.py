"""CreateTable: phase-3 semantic checks in DynamoDB's order, then a CREATING table in the catalog.

Order (dynalite's AWS-verified createTable checks, extended with later DynamoDB rules): billing mode vs
throughput, capacity bounds, key schema vs attribute definitions, then (with indexes) an LSI's need for a table
range key and every index key being defined, unused definitions, LSIs, GSIs, stream, SSE, table class,
on-demand throughput, tags, then the name (``Table already exists``). The unused-definitions rule comes after
the index-key checks because DynamoDB reports those first (dynalite's and moto's recorded cases); a table whose
two key attributes are not both defined fails with "Invalid KeySchema: Some index key attribute have no
definition" (dynalite).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from dynastore import limits, messages
from dynastore.api.resource_policies import checked_policy_text, new_revision
from dynastore.api.table_description import table_description
from dynastore.api.table_requests import (
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
    parse_tags,
    stream_label,
)
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.errors import ValidationException
from dynastore.model.table_schema import (
    CREATING,
    BillingMode,
    IndexDef,
    KeyAttr,
    ProvisionedThroughput,
    StreamSpec,
    TableDef,
)
from dynastore.model.warm_throughput import warm_from_request
from dynastore.security.policy_documents import TABLE

__all__ = ["handle"]


def _check_index_keys(key_schema: list[dict[str, Any]], defs: list[str]) -> None:
    """An LSI's key schema: every key defined, no name twice, HASH then RANGE."""
    keys = [k["AttributeName"] for k in key_schema]
    if any(k not in defs for k in keys):
        raise invalid(messages.KEY_ATTRS_NOT_DEFINED.format(keys=", ".join(map(str, keys)), defs=", ".join(defs)))
    if len(keys) > 1 and keys[0] == keys[1]:
        raise ValidationException(messages.HASH_RANGE_SAME_NAME, bare=True)
    if key_schema[0].get("KeyType") != "HASH":
        raise ValidationException(messages.FIRST_KEY_NOT_HASH, bare=True)
    if len(key_schema) > 1 and key_schema[1].get("KeyType") != "RANGE":
        raise ValidationException(messages.SECOND_KEY_NOT_RANGE, bare=True)


def _check_throughput(req: dict[str, Any], billing: BillingMode) -> None:
    pt = req.get("ProvisionedThroughput")
    if billing is BillingMode.PAY_PER_REQUEST:
        if pt is not None:
            raise invalid(messages.PPR_WITH_THROUGHPUT)
        return
    if pt is None or not pt.get("ReadCapacityUnits") or not pt.get("WriteCapacityUnits"):
        raise invalid(messages.PROVISIONED_WITHOUT_THROUGHPUT)
    check_capacity_bounds(pt)


def _check_table_keys(req: dict[str, Any], defs: list[str]) -> None:
    key_schema: list[dict[str, Any]] = req["KeySchema"]
    keys = [k["AttributeName"] for k in key_schema]
    if len(keys) > len(defs) or (len(keys) == 2 and any(k not in defs for k in keys)):
        raise ValidationException(messages.KEY_ATTR_NO_DEFINITION, bare=True)
    if any(k not in defs for k in keys):
        raise invalid(messages.KEY_ATTRS_NOT_DEFINED.format(keys=", ".join(map(str, keys)), defs=", ".join(defs)))
    seen: set[str] = set()
    for name in defs:
        if name in seen:
            raise ValidationException(messages.ATTRIBUTE_NAME_DUPLICATED.format(name=name), bare=True)
        seen.add(name)
    if len(keys) > 1 and keys[0] == keys[1]:
        raise ValidationException(messages.HASH_RANGE_SAME_NAME, bare=True)
    if key_schema[0].get("KeyType") != "HASH":
        raise ValidationException(messages.FIRST_KEY_NOT_HASH, bare=True)
    if len(key_schema) > 1 and key_schema[1].get("KeyType") != "RANGE":
        raise ValidationException(messages.SECOND_KEY_NOT_RANGE, bare=True)
    no_indexes = req.get("LocalSecondaryIndexes") is None and req.get("GlobalSecondaryIndexes") is None
    if no_indexes and len(keys) != len(defs):
        raise invalid(messages.KEY_COUNT_MISMATCH)


def _check_definitions_used(req: dict[str, Any], defs: list[str]) -> None:
    """With indexes, every definition must be some key. Runs after the checks that an LSI needs a table range key
    and that every index key is defined (AWS reports those first: dynalite's and moto's verified cases)."""
    lsis = req.get("LocalSecondaryIndexes")
    gsis = req.get("GlobalSecondaryIndexes")
    if lsis is None and gsis is None:
        return
    if lsis and len(req["KeySchema"]) != 2:
        raise invalid(messages.LSI_NEEDS_TABLE_RANGE)
    for index in (lsis or []) + (gsis or []):
        index_keys = [k["AttributeName"] for k in index["KeySchema"]]
        if any(k not in defs for k in index_keys):
            raise invalid(
                messages.KEY_ATTRS_NOT_DEFINED.format(keys=", ".join(map(str, index_keys)), defs=", ".join(defs))
            )
    used: list[str] = [k["AttributeName"] for k in req["KeySchema"]]
    for index in (lsis or []) + (gsis or []):
        for k in index.get("KeySchema") or []:
            name = k.get("AttributeName")
            if name not in used:
                used.append(name)
    if any(d not in used for d in defs):
        raise invalid(messages.ATTRIBUTE_DEFINITIONS_UNUSED.format(defs=", ".join(defs), keys=", ".join(used)))


def _check_lsis(req: dict[str, Any], defs: list[str], names: set[str]) -> None:
    lsis = req.get("LocalSecondaryIndexes")
    if lsis is None:
        return
    if not lsis:
        raise invalid(messages.INDEX_LIST_EMPTY.format(member="LocalSecondaryIndexes"))
    table_keys = req["KeySchema"]
    if len(table_keys) != 2:
        raise invalid(messages.LSI_NEEDS_TABLE_RANGE)
    table_hash = table_keys[0]["AttributeName"]
    for lsi in lsis:
        name = lsi["IndexName"]
        _check_index_keys(lsi["KeySchema"], defs)
        if len(lsi["KeySchema"]) != 2:
            raise invalid(messages.LSI_NEEDS_RANGE.format(index=name))
        index_hash = lsi["KeySchema"][0]["AttributeName"]
        if index_hash != table_hash:
            raise invalid(messages.LSI_HASH_MISMATCH.format(index=name, index_hash=index_hash, table_hash=table_hash))
        check_projection(lsi["Projection"])
        if name in names:
            raise invalid(messages.DUPLICATE_INDEX_NAME.format(index=name))
        names.add(name)
    if len(lsis) > limits.MAX_LSI_PER_TABLE:
        raise invalid(messages.TOO_MANY_LSIS.format(limit=limits.MAX_LSI_PER_TABLE))


def _check_gsis(req: dict[str, Any], defs: list[str], names: set[str], billing: BillingMode) -> None:
    gsis = req.get("GlobalSecondaryIndexes")
    if gsis is None:
        return
    if not gsis:
        raise invalid(messages.INDEX_LIST_EMPTY.format(member="GlobalSecondaryIndexes"))
    for gsi in gsis:
        name = gsi["IndexName"]
        keys = [k["AttributeName"] for k in gsi["KeySchema"]]
        if any(k not in defs for k in keys):
            raise invalid(messages.KEY_ATTRS_NOT_DEFINED.format(keys=", ".join(keys), defs=", ".join(defs)))
        check_gsi_key_schema(gsi["KeySchema"], name)
        check_projection(gsi["Projection"])
        pt = gsi.get("ProvisionedThroughput")
        if billing is BillingMode.PAY_PER_REQUEST:
            if pt is not None:
                raise invalid(messages.GSI_PPR_WITH_THROUGHPUT.format(index=name))
        elif pt is None:
            raise invalid(messages.GSI_THROUGHPUT_NOT_SPECIFIED.format(index=name))
        else:
            check_capacity_bounds(pt)
        check_on_demand(gsi.get("OnDemandThroughput"), billing, allow_clear=False)
        if name in names:
            raise invalid(messages.DUPLICATE_INDEX_NAME.format(index=name))
        names.add(name)
    if len(gsis) > limits.MAX_GSI_PER_TABLE:
        raise invalid(messages.TOO_MANY_GSIS.format(limit=limits.MAX_GSI_PER_TABLE))


def _check_stream(spec: dict[str, Any] | None) -> None:
    if spec is None:
        return
    if spec.get("StreamEnabled"):
        if spec.get("StreamViewType") is None:
            raise invalid(messages.CREATE_STREAM_NEEDS_VIEW_TYPE)
    elif spec.get("StreamViewType") is not None:
        raise invalid(messages.CREATE_STREAM_DISABLED_VIEW_TYPE)


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    billing = BillingMode(req.get("BillingMode") or "PROVISIONED")
    _check_throughput(req, billing)
    defs = [d["AttributeName"] for d in req["AttributeDefinitions"]]
    _check_table_keys(req, defs)
    _check_definitions_used(req, defs)
    names: set[str] = set()
    _check_lsis(req, defs, names)
    _check_gsis(req, defs, names, billing)
    indexes = (req.get("LocalSecondaryIndexes") or []) + (req.get("GlobalSecondaryIndexes") or [])
    check_projected_total([index["Projection"] for index in indexes])
    _check_stream(req.get("StreamSpecification"))
    check_sse(req.get("SSESpecification"))
    check_table_class(req.get("TableClass"))
    check_on_demand(req.get("OnDemandThroughput"), billing, allow_clear=False)
    tags = parse_tags(req.get("Tags") or [], existing=(), require=False)

    table = _build(req, ctx, billing, tags)
    policy = req.get("ResourcePolicy")
    if policy is not None:
        arn = ctx.namespace.table_arn(table.name)
        text = checked_policy_text(policy, TABLE, arn)
        table = replace(table, resource_policy=(text, new_revision(ctx, None)))
    tables.create(ctx, table)
    # A CreateTable response carries WarmThroughput only where the request configured it (DynamoDB's).
    return {"TableDescription": table_description(ctx, table, warm=False, created=True)}


def _build(req: dict[str, Any], ctx: Context, billing: BillingMode, tags: tuple[tuple[str, str], ...]) -> TableDef:
    cat, config = ctx.catalog, ctx.config
    now = ctx.clock.now()
    types = {d["AttributeName"]: d["AttributeType"] for d in req["AttributeDefinitions"]}
    table_id = cat.next_table_id()
    lsis = tuple(
        IndexDef(
            name=lsi["IndexName"],
            kind="LSI",
            key_schema=build_key_schema(lsi["KeySchema"], types),
            projection=build_projection(lsi["Projection"]),
            index_id=cat.next_table_id(),
        )
        for lsi in req.get("LocalSecondaryIndexes") or ()
    )
    gsis = tuple(
        IndexDef(
            name=gsi["IndexName"],
            kind="GSI",
            key_schema=build_key_schema(gsi["KeySchema"], types),
            projection=build_projection(gsi["Projection"]),
            index_id=cat.next_table_id(),
            throughput=build_throughput(gsi.get("ProvisionedThroughput")),
            on_demand=build_on_demand(gsi.get("OnDemandThroughput")),
            warm=warm_from_request(gsi.get("WarmThroughput")),
            status=CREATING,
        )
        for gsi in req.get("GlobalSecondaryIndexes") or ()
    )
    stream_req = req.get("StreamSpecification")
    stream = None
    if stream_req is not None and stream_req.get("StreamEnabled"):
        stream = StreamSpec(True, stream_req["StreamViewType"], stream_label(now))
    throughput = build_throughput(req.get("ProvisionedThroughput")) or ProvisionedThroughput(0, 0)
    return TableDef(
        name=ctx.catalog.table_name(req["TableName"]),
        table_id=table_id,
        uuid=str(uuid.uuid4()),
        key_schema=build_key_schema(req["KeySchema"], types),
        attribute_definitions=tuple(KeyAttr(n, t) for n, t in types.items()),
        created_at=now,
        billing_mode=billing,
        billing_mode_explicit=req.get("BillingMode") is not None,
        last_update_to_pay_per_request=now if billing is BillingMode.PAY_PER_REQUEST else None,
        throughput=throughput,
        on_demand=build_on_demand(req.get("OnDemandThroughput")),
        warm=warm_from_request(req.get("WarmThroughput")),
        lsis=lsis,
        gsis=gsis,
        stream=stream,
        sse=build_sse(req.get("SSESpecification"), ctx.namespace.region, ctx.namespace.account_id),
        table_class=req.get("TableClass"),
        deletion_protection=bool(req.get("DeletionProtectionEnabled", False)),
        tags=tags,
        status=CREATING,
        status_until=now + config.create_table_delay,
    )


def table_from_parameters(req: dict[str, Any], ctx: Context) -> TableDef:
    """ImportTable's TableCreationParameters (a CreateTable request's key schema, billing, throughput, SSE and
    GSIs), checked as CreateTable checks them, as a CREATING table not stored yet."""
    billing = BillingMode(req.get("BillingMode") or "PROVISIONED")
    _check_throughput(req, billing)
    defs = [d["AttributeName"] for d in req["AttributeDefinitions"]]
    _check_table_keys(req, defs)
    _check_definitions_used(req, defs)
    _check_gsis(req, defs, set(), billing)
    check_projected_total([index["Projection"] for index in req.get("GlobalSecondaryIndexes") or []])
    check_sse(req.get("SSESpecification"))
    check_on_demand(req.get("OnDemandThroughput"), billing, allow_clear=False)
    return _build(req, ctx, billing, ())
