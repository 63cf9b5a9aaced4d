"""TagResource, UntagResource, ListTagsOfResource (table ARNs only; tags live on the TableDef).

Check order: the ARN, the tag list, then the table (a CREATING or DELETING table is "not found" through its
ARN, as DynamoDB reports it for most of those windows).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dynastore import limits, messages
from dynastore.api.table_requests import MAX_TAG_KEY_LENGTH, parse_tags
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.errors import ResourceNotFoundException, ValidationException
from dynastore.model.table_schema import CREATING, DELETING, TableDef
from dynastore.util.arn import table_name_from_arn

__all__ = [
    "handle_list_tags_of_resource",
    "handle_tag_resource",
    "handle_untag_resource",
]


def _resolve(req: dict[str, Any], ctx: Context) -> tuple[str, str, bool]:
    arn: str = req.get("ResourceArn") or ""
    name, is_stream = table_name_from_arn(arn, ctx.namespace.region, ctx.namespace.account_id)
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
    tables.change(ctx, name, lambda cur: replace(cur, tags=merged))
    return EMPTY_RESPONSE


def handle_untag_resource(req: dict[str, Any], ctx: Context) -> bytes:
    arn, name, is_stream = _resolve(req, ctx)
    keys: list[Any] = req.get("TagKeys") or []
    if not keys:
        raise ValidationException(messages.TAG_KEYS_EMPTY, bare=True)
    if len(keys) > limits.MAX_TAGS_PER_RESOURCE:
        raise ValidationException(messages.TAGS_TOO_MANY, bare=True)
    for key in keys:
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_TAG_KEY_LENGTH:
            raise ValidationException(messages.TAG_KEY_INVALID.format(key="null" if key is None else key), bare=True)
    td = _table(ctx, name, arn, is_stream)
    removed = set(keys)
    remaining = tuple((k, v) for k, v in td.tags if k not in removed)
    if remaining != td.tags:
        tables.change(ctx, name, lambda cur: replace(cur, tags=remaining))
    return EMPTY_RESPONSE


def handle_list_tags_of_resource(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """All tags in one page (at most 50 exist, so NextToken is never needed)."""
    arn, name, is_stream = _resolve(req, ctx)
    td = _table(ctx, name, arn, is_stream)
    return {"Tags": [{"Key": k, "Value": v} for k, v in td.tags]}
