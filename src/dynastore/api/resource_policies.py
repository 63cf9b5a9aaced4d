"""PutResourcePolicy, GetResourcePolicy, DeleteResourcePolicy: resource-based policies of tables and streams.

A table's policy (which also governs its indexes) and its stream's policy live on the table's definition
(TableDef.resource_policy / stream_policy), written in the catalog's transaction like any table change, and go
with the table when it is deleted. Policies are stored without insignificant whitespace (DynamoDB returns them
so) and applied at once (DynamoDB applies them eventually).

Revision ids are the milliseconds of the change (always greater than the one before, compared as strings of
equal length for centuries); putting the same policy again keeps its revision id. ``ExpectedRevisionId`` must
equal the current one (``NO_POLICY``: none may be attached).

Check order: the ARN's form, its account, the table (and stream), the document's size and content, then the
expected revision.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dynastore import limits, messages
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.errors import PolicyNotFoundException, ResourceNotFoundException, ValidationException
from dynastore.model.table_schema import DELETING, TableDef
from dynastore.security.policy_documents import STREAM, TABLE, PolicyDocumentError, parse_policy

__all__ = ["checked_policy_text", "handle_delete", "handle_get", "handle_put"]

NO_POLICY = "NO_POLICY"


def _invalid(detail: str) -> ValidationException:
    return ValidationException(messages.INVALID_PARAMS.format(detail=detail), bare=True)


class _Resource:
    __slots__ = ("arn", "table_name", "stream_label")

    def __init__(self, arn: str, table_name: str, stream_label: str | None) -> None:
        self.arn = arn
        self.table_name = table_name
        self.stream_label = stream_label


def _resource(arn: str, ctx: Context) -> _Resource:
    if not arn.startswith("arn:"):
        raise _invalid(messages.ARN_MUST_START_WITH_ARN.format(arn=arn))
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[2] != "dynamodb":
        raise _invalid(messages.ARN_NOT_DYNAMODB.format(arn=arn))
    _, partition, _, region, account, relative = parts
    if partition != "aws" or region != ctx.namespace.region:
        raise _invalid(messages.RESOURCE_POLICY_INVALID_ARN.format(arn=arn))
    if account != ctx.namespace.account_id:
        raise ValidationException(messages.RESOURCE_POLICY_OTHER_ACCOUNT, bare=True)
    segments = relative.split("/")
    if segments[0] != "table" or len(segments) not in (2, 4) or not all(segments):
        raise _invalid(messages.ARN_NOT_DYNAMODB.format(arn=arn))
    if len(segments) == 4:
        if segments[2] == "index":
            raise _invalid(messages.RESOURCE_POLICY_INDEX_ARN.format(arn=arn))
        if segments[2] != "stream":
            raise _invalid(messages.ARN_NOT_DYNAMODB.format(arn=arn))
        return _Resource(arn, segments[1], segments[3])
    return _Resource(arn, segments[1], None)


def _table(ctx: Context, res: _Resource) -> TableDef:
    td = ctx.catalog.find(res.table_name)
    if td is None or td.status == DELETING:
        raise ResourceNotFoundException(messages.TABLE_NOT_FOUND.format(name=res.table_name))
    if res.stream_label is not None and (td.stream is None or td.stream.label != res.stream_label):
        raise ResourceNotFoundException(
            messages.STREAM_NOT_FOUND_FOR_TABLE.format(label=res.stream_label, table=res.table_name)
        )
    return td


def _current(td: TableDef, res: _Resource) -> tuple[str, str] | None:
    """(policy text, revision id) attached to the resource, if any."""
    if res.stream_label is None:
        return td.resource_policy
    sp = td.stream_policy
    return (sp[1], sp[2]) if sp is not None and sp[0] == res.stream_label else None


def checked_policy_text(text: str, kind: str, arn: str) -> str:
    """The policy as stored (no insignificant whitespace); ValidationException with DynamoDB's texts if the
    document is too large or invalid."""
    if len(text.encode()) > limits.MAX_RESOURCE_POLICY_BYTES:
        raise _invalid(messages.POLICY_TOO_LARGE.format(limit=limits.MAX_RESOURCE_POLICY_BYTES))
    try:
        return parse_policy(text, kind, arn).text
    except PolicyDocumentError as exc:
        if exc.whole:
            raise ValidationException(exc.detail, bare=True) from None
        raise _invalid(messages.INVALID_POLICY_DOCUMENT.format(detail=exc.detail)) from None


def new_revision(ctx: Context, previous: str | None) -> str:
    revision = int(ctx.clock.now() * 1000)
    if previous is not None and previous.isdigit() and int(previous) >= revision:
        revision = int(previous) + 1
    return str(revision)


def _check_expected(expected: Any, current: tuple[str, str] | None, res: _Resource) -> None:
    if expected is None:
        return
    if expected == NO_POLICY:
        if current is not None:
            raise PolicyNotFoundException(
                messages.RESOURCE_POLICY_EXPECTED_NONE.format(table=res.table_name, current=current[1])
            )
        return
    if current is None:
        raise PolicyNotFoundException(messages.RESOURCE_POLICY_NOT_FOUND.format(arn=res.arn))
    if current[1] != expected:
        text = messages.RESOURCE_POLICY_REVISION_MISMATCH
        raise PolicyNotFoundException(text.format(expected=expected, table=res.table_name, current=current[1]))


def _store(ctx: Context, res: _Resource, policy: tuple[str, str] | None) -> None:
    label = res.stream_label

    def mutate(cur: TableDef) -> TableDef:
        if label is None:
            return replace(cur, resource_policy=policy)
        return replace(cur, stream_policy=None if policy is None else (label, policy[0], policy[1]))

    tables.change(ctx, res.table_name, mutate)


def handle_put(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    res = _resource(req["ResourceArn"], ctx)
    td = _table(ctx, res)
    text = checked_policy_text(req["Policy"], TABLE if res.stream_label is None else STREAM, res.arn)
    current = _current(td, res)
    _check_expected(req.get("ExpectedRevisionId"), current, res)
    if current is not None and current[0] == text:
        return {"RevisionId": current[1]}
    revision = new_revision(ctx, None if current is None else current[1])
    _store(ctx, res, (text, revision))
    return {"RevisionId": revision}


def handle_get(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    res = _resource(req["ResourceArn"], ctx)
    current = _current(_table(ctx, res), res)
    if current is None:
        raise PolicyNotFoundException(messages.RESOURCE_POLICY_NOT_FOUND.format(arn=res.arn))
    return {"Policy": current[0], "RevisionId": current[1]}


def handle_delete(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    res = _resource(req["ResourceArn"], ctx)
    current = _current(_table(ctx, res), res)
    _check_expected(req.get("ExpectedRevisionId"), current, res)
    if current is None:
        return {}  # DynamoDB: the RevisionId "will be empty if you make a request against a resource without a policy"
    _store(ctx, res, None)
    return {"RevisionId": new_revision(ctx, current[1])}
