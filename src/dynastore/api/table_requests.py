"""Request parsing and checks shared by the table operations: CreateTable and UpdateTable (key schemas,
projections, throughput, on-demand limits, streams, SSE, table class) and CreateTable and TagResource (tags).

Each check raises DynamoDB's error for the first rule a request breaks; each ``build_*`` turns a checked
request member into its model value (model/table_schema.py).
"""

from __future__ import annotations

import datetime
import unicodedata
import uuid
from typing import Any

from dynastore import limits, messages
from dynastore.errors import LimitExceededException, ValidationException
from dynastore.model.table_schema import (
    SSE,
    BillingMode,
    KeyAttr,
    KeySchema,
    OnDemandThroughput,
    Projection,
    ProvisionedThroughput,
)

__all__ = [
    "MAX_CAPACITY_UNITS",
    "MAX_TAG_KEY_LENGTH",
    "MAX_TAG_VALUE_LENGTH",
    "TABLE_CLASSES",
    "build_key_schema",
    "build_on_demand",
    "build_projection",
    "build_sse",
    "build_throughput",
    "check_capacity_bounds",
    "check_gsi_key_schema",
    "check_on_demand",
    "check_projected_total",
    "check_projection",
    "check_sse",
    "check_table_class",
    "invalid",
    "parse_tags",
    "stream_label",
]

MAX_CAPACITY_UNITS = 1_000_000_000_000
TABLE_CLASSES = ("STANDARD", "STANDARD_INFREQUENT_ACCESS")
MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256
_TAG_PUNCTUATION = frozenset("_.:/=+-@")


def invalid(detail: str) -> ValidationException:
    """A ValidationException with DynamoDB's "One or more parameter values were invalid: " prefix."""
    return ValidationException(messages.INVALID_PARAMS.format(detail=detail), bare=True)


def check_capacity_bounds(pt: dict[str, Any]) -> None:
    """The value range of both members, then the per-table quota DescribeLimits reports (a table or a GSI)."""
    values = [(member, pt.get(member)) for member in ("ReadCapacityUnits", "WriteCapacityUnits")]
    for member, value in values:
        if isinstance(value, int) and value > MAX_CAPACITY_UNITS:
            raise ValidationException(messages.CAPACITY_OUT_OF_BOUNDS.format(value=value, member=member), bare=True)
    quotas = (limits.TABLE_MAX_READ_CAPACITY, limits.TABLE_MAX_WRITE_CAPACITY)
    for (member, value), quota in zip(values, quotas, strict=True):
        if isinstance(value, int) and value > quota:
            raise LimitExceededException(
                messages.CAPACITY_OVER_TABLE_QUOTA.format(member=member, value=value, quota=quota)
            )


def check_gsi_key_schema(key_schema: list[dict[str, Any]], index: str) -> None:
    """A GSI's KeySchema: HASH elements first (at least one), then RANGE elements, at most
    ``limits.MAX_GSI_KEY_ATTRIBUTES`` of each (multi-attribute keys), no name twice. Definitions are checked
    by the caller. A classic one- or two-element schema gets the classic texts."""
    if key_schema[0].get("KeyType") != "HASH":
        raise ValidationException(messages.FIRST_KEY_NOT_HASH, bare=True)
    names = [k["AttributeName"] for k in key_schema]
    if len(key_schema) == 2 and names[0] == names[1]:
        raise ValidationException(messages.HASH_RANGE_SAME_NAME, bare=True)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValidationException(messages.GSI_KEY_DUPLICATE, bare=True)
        seen.add(name)
    kinds = [k.get("KeyType") for k in key_schema]
    first_range = kinds.index("RANGE") if "RANGE" in kinds else len(kinds)
    if "HASH" in kinds[first_range:]:
        raise ValidationException(messages.GSI_KEY_ORDER, bare=True)
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


def build_on_demand(odt: dict[str, Any] | None, current: OnDemandThroughput | None = None) -> OnDemandThroughput | None:
    """An ``OnDemandThroughput`` member as the model holds it; a maximum it leaves out is ``current``'s (UpdateTable
    changes the ones it names: -1 removes one)."""
    if not odt:
        return None
    read, write = (None, None) if current is None else (current.max_read, current.max_write)
    return OnDemandThroughput(odt.get("MaxReadRequestUnits", read), odt.get("MaxWriteRequestUnits", write))


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


def stream_label(now: float, previous: str | None = None) -> str:
    """A stream label: the enable time as ISO 8601 with milliseconds (DynamoDB's format). A table's labels name
    its streams, so a new one comes after the ``previous`` one even when the clock has not moved a millisecond
    since (a manual clock): a millisecond later than it."""
    moment = datetime.datetime.fromtimestamp(now, tz=datetime.UTC)
    label = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    if previous is not None and label <= previous:
        last = datetime.datetime.strptime(previous, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.UTC)
        return stream_label(last.timestamp() + 0.001)
    return label


def check_projected_total(projections: list[dict[str, Any]], existing: int = 0) -> None:
    """At most 100 NonKeyAttributes over all indexes of a table (one attribute in two indexes counts twice)."""
    total = existing
    for projection in projections:
        total += len(projection.get("NonKeyAttributes") or ())
    if total > limits.MAX_PROJECTED_NON_KEY_ATTRIBUTES:
        raise invalid(messages.PROJECTION_TOO_MANY_NON_KEY.format(limit=limits.MAX_PROJECTED_NON_KEY_ATTRIBUTES))


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
        raise ValidationException(messages.INVALID_TABLE_CLASS, bare=True)


# ---- tags ----------------------------------------------------------------------------------------------------


def _is_tag_text(text: str) -> bool:
    """AWS's tag character set: letters, digits and spaces of any script, plus ``_ . : / = + - @``."""
    for ch in text:
        if ch in _TAG_PUNCTUATION:
            continue
        category = unicodedata.category(ch)
        if category[0] not in ("L", "N", "Z"):
            return False
    return True


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_TAG_KEY_LENGTH or not _is_tag_text(key):
        raise ValidationException(messages.TAG_KEY_INVALID.format(key="null" if key is None else key), bare=True)
    if key.startswith("aws:"):
        raise ValidationException(messages.TAG_KEY_AWS_PREFIX.format(key=key), bare=True)
    return key


def parse_tags(
    tags: list[dict[str, Any]], existing: tuple[tuple[str, str], ...], *, require: bool
) -> tuple[tuple[str, str], ...]:
    """Validate ``tags`` and merge them over ``existing`` (a new value replaces the old one, order kept)."""
    if require and not tags:
        raise ValidationException(messages.TAGS_EMPTY, bare=True)
    seen: set[str] = set()
    parsed: list[tuple[str, str]] = []
    for tag in tags:
        key = _check_key(tag.get("Key"))
        value = tag.get("Value")
        if not isinstance(value, str) or len(value) > MAX_TAG_VALUE_LENGTH or not _is_tag_text(value):
            raise ValidationException(
                messages.TAG_VALUE_INVALID.format(value="null" if value is None else value), bare=True
            )
        if key in seen:
            raise ValidationException(messages.TAG_KEYS_DUPLICATE.format(key=key), bare=True)
        seen.add(key)
        parsed.append((key, value))
    merged = dict(existing)
    merged.update(parsed)
    if len(merged) > limits.MAX_TAGS_PER_RESOURCE:
        raise ValidationException(messages.TAGS_TOO_MANY, bare=True)
    return tuple(merged.items())
