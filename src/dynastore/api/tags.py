"""TagResource, UntagResource, ListTagsOfResource (table ARNs only; tags live on the TableDef).

Check order: the ARN, the tag list, then the table (a CREATING or DELETING table is "not found" through its
ARN, as DynamoDB reports it for most of those windows).
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from typing import Any

from dynastore import limits, messages
from dynastore.engine.context import Context
from dynastore.errors import ResourceNotFoundException, ValidationException
from dynastore.model.table_schema import CREATING, DELETING, TableDef
from dynastore.util.arn import table_name_from_arn

__all__ = [
    "handle_list_tags_of_resource",
    "handle_tag_resource",
    "handle_untag_resource",
    "parse_tags",
]

MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256
_TAG_PUNCTUATION = frozenset("_.:/=+-@")


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
        raise ValidationException(messages.TAG_KEY_INVALID.format(key="null" if key is None else key))
    if key.startswith("aws:"):
        raise ValidationException(messages.TAG_KEY_AWS_PREFIX.format(key=key))
    return key


def parse_tags(
    tags: list[dict[str, Any]], existing: tuple[tuple[str, str], ...], *, require: bool
) -> tuple[tuple[str, str], ...]:
    """Validate ``tags`` and merge them over ``existing`` (a new value replaces the old one, order kept)."""
    if require and not tags:
        raise ValidationException(messages.TAGS_EMPTY)
    seen: set[str] = set()
    parsed: list[tuple[str, str]] = []
    for tag in tags:
        key = _check_key(tag.get("Key"))
        value = tag.get("Value")
        if not isinstance(value, str) or len(value) > MAX_TAG_VALUE_LENGTH or not _is_tag_text(value):
            raise ValidationException(messages.TAG_VALUE_INVALID.format(value="null" if value is None else value))
        if key in seen:
            raise ValidationException(messages.TAG_KEYS_DUPLICATE.format(key=key))
        seen.add(key)
        parsed.append((key, value))
    merged = dict(existing)
    merged.update(parsed)
    if len(merged) > limits.MAX_TAGS_PER_RESOURCE:
        raise ValidationException(messages.TAGS_TOO_MANY)
    return tuple(merged.items())


def _resolve(req: dict[str, Any], ctx: Context) -> tuple[str, str, bool]:
    arn: str = req.get("ResourceArn") or ""
    name, is_stream = table_name_from_arn(arn, ctx.config.region, ctx.config.account_id)
    return arn, name, is_stream


def _table(ctx: Context, name: str, arn: str, is_stream: bool) -> TableDef:
    td = ctx.catalog.find(name)
    if td is None or is_stream or td.status in (CREATING, DELETING):
        raise ResourceNotFoundException(messages.RESOURCE_ARN_NOT_FOUND.format(arn=arn))
    return td


# DynamoDB answers TagResource and UntagResource with an empty body (not "{}"): they have no output members.
EMPTY_RESPONSE = b""


def handle_tag_resource(req: dict[str, Any], ctx: Context) -> bytes:
    arn, name, is_stream = _resolve(req, ctx)
    new_tags: list[dict[str, Any]] = req.get("Tags") or []
    parse_tags(new_tags, (), require=True)
    td = _table(ctx, name, arn, is_stream)
    merged = parse_tags(new_tags, td.tags, require=True)
    ctx.catalog.update(name, lambda cur: replace(cur, tags=merged))
    return EMPTY_RESPONSE


def handle_untag_resource(req: dict[str, Any], ctx: Context) -> bytes:
    arn, name, is_stream = _resolve(req, ctx)
    keys: list[Any] = req.get("TagKeys") or []
    if not keys:
        raise ValidationException(messages.TAG_KEYS_EMPTY)
    if len(keys) > limits.MAX_TAGS_PER_RESOURCE:
        raise ValidationException(messages.TAGS_TOO_MANY)
    for key in keys:
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_TAG_KEY_LENGTH:
            raise ValidationException(messages.TAG_KEY_INVALID.format(key="null" if key is None else key))
    td = _table(ctx, name, arn, is_stream)
    removed = set(keys)
    remaining = tuple((k, v) for k, v in td.tags if k not in removed)
    if remaining != td.tags:
        ctx.catalog.update(name, lambda cur: replace(cur, tags=remaining))
    return EMPTY_RESPONSE


def handle_list_tags_of_resource(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """All tags in one page (at most 50 exist, so NextToken is never needed)."""
    arn, name, is_stream = _resolve(req, ctx)
    td = _table(ctx, name, arn, is_stream)
    return {"Tags": [{"Key": k, "Value": v} for k, v in td.tags]}
