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

import datetime
import uuid
from typing import Any

from dynastore import limits, messages
from dynastore.api.tags import parse_tags
from dynastore.engine.context import Context
from dynastore.errors import LimitExceededException, ValidationException
from dynastore.model.table_schema import (
    CREATING,
    SSE,
    BillingMode,
    IndexDef,
    KeyAttr,
    KeySchema,
    OnDemandThroughput,
    Projection,
    ProvisionedThroughput,
    StreamSpec,
    TableDef,
)
from dynastore.model.warm_throughput import warm_from_request

__all__ = [
    "handle",
    "invalid",
    "check_capacity_bounds",
    "check_gsi_key_schema",
    "check_index_keys",
    "check_projected_total",
    "check_projection",
    "stream_label",
]

MAX_CAPACITY_UNITS = 1_000_000_000_000
TABLE_CLASSES = ("STANDARD", "STANDARD_INFREQUENT_ACCESS")


def invalid(detail: str) -> ValidationException:
    """A ValidationException with DynamoDB's "One or more parameter values were invalid: " prefix."""
    return ValidationException(messages.INVALID_PARAMS.format(detail=detail))


def check_capacity_bounds(pt: dict[str, Any]) -> None:
    """The value range of both members, then the per-table quota DescribeLimits reports (a table or a GSI)."""
    values = [(member, pt.get(member)) for member in ("ReadCapacityUnits", "WriteCapacityUnits")]
    for member, value in values:
        if isinstance(value, int) and value > MAX_CAPACITY_UNITS:
            raise ValidationException(messages.CAPACITY_OUT_OF_BOUNDS.format(value=value, member=member))
    quotas = (limits.TABLE_MAX_READ_CAPACITY, limits.TABLE_MAX_WRITE_CAPACITY)
    for (member, value), quota in zip(values, quotas, strict=True):
        if isinstance(value, int) and value > quota:
            raise LimitExceededException(
                messages.CAPACITY_OVER_TABLE_QUOTA.format(member=member, value=value, quota=quota)
            )


def check_index_keys(key_schema: list[dict[str, Any]], defs: list[str]) -> None:
    """Definition, duplicate-name and HASH/RANGE order checks shared by every index."""
    keys = [k["AttributeName"] for k in key_schema]
    if any(k not in defs for k in keys):
        raise invalid(messages.KEY_ATTRS_NOT_DEFINED.format(keys=", ".join(map(str, keys)), defs=", ".join(defs)))
    if len(keys) > 1 and keys[0] == keys[1]:
        raise ValidationException(messages.HASH_RANGE_SAME_NAME)
    if key_schema[0].get("KeyType") != "HASH":
        raise ValidationException(messages.FIRST_KEY_NOT_HASH)
    if len(key_schema) > 1 and key_schema[1].get("KeyType") != "RANGE":
        raise ValidationException(messages.SECOND_KEY_NOT_RANGE)


def check_gsi_key_schema(key_schema: list[dict[str, Any]], index: str) -> None:
    """A GSI's KeySchema: HASH elements first (at least one), then RANGE elements, at most
    ``limits.MAX_GSI_KEY_ATTRIBUTES`` of each (multi-attribute keys), no name twice. Definitions are checked
    by the caller. A classic one- or two-element schema gets the classic texts."""
    if key_schema[0].get("KeyType") != "HASH":
        raise ValidationException(messages.FIRST_KEY_NOT_HASH)
    names = [k["AttributeName"] for k in key_schema]
    if len(key_schema) == 2 and names[0] == names[1]:
        raise ValidationException(messages.HASH_RANGE_SAME_NAME)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValidationException(messages.GSI_KEY_DUPLICATE)
        seen.add(name)
    kinds = [k.get("KeyType") for k in key_schema]
    first_range = kinds.index("RANGE") if "RANGE" in kinds else len(kinds)
    if "HASH" in kinds[first_range:]:
        raise ValidationException(messages.GSI_KEY_ORDER)
    for kind, count in (("HASH", first_range), ("RANGE", len(kinds) - first_range)):
        if count > limits.MAX_GSI_KEY_ATTRIBUTES:
            raise invalid(messages.GSI_TOO_MANY_KEY_ATTRIBUTES.format(kind=kind))


def check_projection(projection: dict[str, Any]) -> None:
    ptype = projection.get("ProjectionType")
    if ptype is None:
        raise invalid(messages.PROJECTION_TYPE_NULL)
    non_key = projection.get("NonKeyAttributes")
    if non_key is not None and ptype != "INCLUDE":
        raise invalid(messages.PROJECTION_NON_KEY_SPECIFIED.format(type=ptype))
    if ptype == "INCLUDE":
        if not non_key:
            raise invalid(messages.PROJECTION_INCLUDE_WITHOUT_NON_KEY)
        seen: set[str] = set()
        for name in non_key:
            if name in seen:
                raise invalid(messages.PROJECTION_DUPLICATE_NON_KEY.format(name=name))
            seen.add(name)


def build_key_schema(key_schema: list[dict[str, Any]], types: dict[str, str]) -> KeySchema:
    """A checked KeySchema (HASH elements first) as a model value; multi-attribute GSI keys included."""
    hashes = tuple(KeyAttr(k["AttributeName"], types[k["AttributeName"]]) for k in key_schema if k["KeyType"] == "HASH")
    ranges = tuple(
        KeyAttr(k["AttributeName"], types[k["AttributeName"]]) for k in key_schema if k["KeyType"] == "RANGE"
    )
    return KeySchema(hashes[0], ranges[0] if ranges else None, hashes[1:], ranges[1:])


def build_projection(projection: dict[str, Any]) -> Projection:
    return Projection(projection["ProjectionType"], tuple(projection.get("NonKeyAttributes") or ()))


def build_throughput(pt: dict[str, Any] | None) -> ProvisionedThroughput | None:
    if pt is None:
        return None
    return ProvisionedThroughput(pt["ReadCapacityUnits"], pt["WriteCapacityUnits"])


def build_on_demand(odt: dict[str, Any] | None) -> OnDemandThroughput | None:
    if not odt:
        return None
    return OnDemandThroughput(odt.get("MaxReadRequestUnits"), odt.get("MaxWriteRequestUnits"))


def check_on_demand(odt: dict[str, Any] | None, billing: BillingMode, *, allow_clear: bool) -> None:
    if not odt:
        return
    for member in ("MaxReadRequestUnits", "MaxWriteRequestUnits"):
        value = odt.get(member)
        if value is None:
            continue
        if billing is BillingMode.PROVISIONED:
            raise invalid(messages.ON_DEMAND_WITH_PROVISIONED.format(member=member))
        if value < 1 and not (allow_clear and value == -1):
            raise invalid(messages.ON_DEMAND_OUT_OF_RANGE.format(member=member))


def stream_label(now: float) -> str:
    """A stream label: the enable time as ISO 8601 with milliseconds (DynamoDB's format)."""
    moment = datetime.datetime.fromtimestamp(now, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


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
        raise ValidationException(messages.KEY_ATTR_NO_DEFINITION)
    if any(k not in defs for k in keys):
        raise invalid(messages.KEY_ATTRS_NOT_DEFINED.format(keys=", ".join(map(str, keys)), defs=", ".join(defs)))
    seen: set[str] = set()
    for name in defs:
        if name in seen:
            raise ValidationException(messages.ATTRIBUTE_NAME_DUPLICATED.format(name=name))
        seen.add(name)
    if len(keys) > 1 and keys[0] == keys[1]:
        raise ValidationException(messages.HASH_RANGE_SAME_NAME)
    if key_schema[0].get("KeyType") != "HASH":
        raise ValidationException(messages.FIRST_KEY_NOT_HASH)
    if len(key_schema) > 1 and key_schema[1].get("KeyType") != "RANGE":
        raise ValidationException(messages.SECOND_KEY_NOT_RANGE)
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
        check_index_keys(lsi["KeySchema"], defs)
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


def check_projected_total(projections: list[dict[str, Any]], existing: int = 0) -> None:
    """At most 100 NonKeyAttributes over all indexes of a table (one attribute in two indexes counts twice)."""
    total = existing
    for projection in projections:
        total += len(projection.get("NonKeyAttributes") or ())
    if total > limits.MAX_PROJECTED_NON_KEY_ATTRIBUTES:
        raise invalid(messages.PROJECTION_TOO_MANY_NON_KEY.format(limit=limits.MAX_PROJECTED_NON_KEY_ATTRIBUTES))


def _check_stream(spec: dict[str, Any] | None) -> None:
    if spec is None:
        return
    if spec.get("StreamEnabled"):
        if spec.get("StreamViewType") is None:
            raise invalid(messages.CREATE_STREAM_NEEDS_VIEW_TYPE)
    elif spec.get("StreamViewType") is not None:
        raise invalid(messages.CREATE_STREAM_DISABLED_VIEW_TYPE)


def check_sse(spec: dict[str, Any] | None) -> None:
    if spec is None:
        return
    enabled = spec.get("Enabled")
    if enabled is False:
        if spec.get("SSEType") is not None:
            raise invalid(messages.SSE_TYPE_WITHOUT_ENABLED)
        if spec.get("KMSMasterKeyId") is not None:
            raise invalid(messages.SSE_KMS_KEY_WITHOUT_ENABLED)
        return
    if spec.get("SSEType") == "AES256":
        raise invalid(messages.SSE_AES256_UNSUPPORTED)
    if spec.get("KMSMasterKeyId") is not None and spec.get("SSEType") != "KMS":
        raise invalid(messages.SSE_KMS_KEY_NEEDS_KMS)


def build_sse(spec: dict[str, Any] | None, region: str, account_id: str) -> SSE | None:
    """KMS encryption when enabled; None (AWS-owned key, no SSEDescription) otherwise."""
    if spec is None or not spec.get("Enabled"):
        return None
    key = spec.get("KMSMasterKeyId")
    if key is None:
        key = f"arn:aws:kms:{region}:{account_id}:key/{uuid.uuid4()}"
    elif not key.startswith("arn:"):
        key = f"arn:aws:kms:{region}:{account_id}:key/{key}"
    return SSE("KMS", key)


def check_table_class(value: str | None) -> None:
    if value is not None and value not in TABLE_CLASSES:
        raise ValidationException(messages.INVALID_TABLE_CLASS)


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
    ctx.catalog.create(table)
    # A CreateTable response carries WarmThroughput only where the request configured it (DynamoDB's).
    return {"TableDescription": ctx.catalog.describe(table, warm=False)}


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
        sse=build_sse(req.get("SSESpecification"), config.region, config.account_id),
        table_class=req.get("TableClass"),
        deletion_protection=bool(req.get("DeletionProtectionEnabled", False)),
        tags=tags,
        status=CREATING,
        status_until=now + config.create_table_delay,
    )
