"""The endpoints another dynastore calls to keep this server's replicas of its global tables (the receiving end of
global_tables/peers.py's RemoteLink; docs/global-tables.md "Peers"):

* ``POST /dynastore/global-tables/changes``
  ``{"Region", "Account", "TableName", "Changes": [...]}`` (global_tables/changes.py's wire form): applied to
  the replica, last writer wins; answers ``{"Applied": n}``.
* ``POST /dynastore/global-tables/replica-set`` ``{"Region", "Account", "Definition": {...}}``: creates the
  replica table if it is missing, else gives it the set's regions; answers ``{}``.
* ``POST /dynastore/global-tables/drop`` ``{"Region", "Account", "TableName"}``: deletes the replica table (nothing
  if there is none); answers ``{}``.

``Region`` must be this server's ``--region`` (a sender whose ``--peer`` names this server for another region is
misconfigured, and is told so); the work is done in the namespace of ``Account`` in that region, as the
replication service (no capacity is charged, no policy is evaluated: the caller was authorized as a whole). Like
every ``/dynastore/`` endpoint, with ``--auth sigv4`` only a request signed by an admin user is served (protocol/
protocol.py refuses any other with 403 before it reaches this module). A body that is not what the endpoint takes
is answered 400 with ``{"error": text}`` naming what is wrong; a table that does not exist, 404; a batch with an
item a transaction of this region holds (global_tables/apply.py ``HeldByTransaction``), 409: sent again later; a
change this region will not take (its key does not fit the table, its item is not well-formed, the write path
refuses it, or the replica table is being deleted), 422 with ``{"error": text, "Refused": its position in the
batch or null for the whole batch, "Final": whether it can never be applied}`` (global_tables/changes.py
``ChangeRefused``): nothing of the batch is applied.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import orjson

from dynastore import messages
from dynastore.engine.context import Context
from dynastore.engine.keys import check_table_key
from dynastore.errors import DynamoError, ResourceNotFoundException
from dynastore.global_tables import apply, replicas
from dynastore.global_tables.changes import ChangeRefused, ReplicatedChange, from_wire
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.limits import TABLE_NAME_MAX, TABLE_NAME_MIN
from dynastore.model.table_schema import DELETING, TableDef
from dynastore.protocol.protocol import RawResponse
from dynastore.validation.attribute_values import check_item

__all__ = ["ENDPOINTS", "handle"]

log = logging.getLogger("dynastore")

_JSON = "application/json"
ENDPOINTS = ("changes", "replica-set", "drop")
_ACCOUNT = re.compile(r"\d{12}")
_TABLE_NAME = re.compile(rf"[a-zA-Z0-9_.-]{{{TABLE_NAME_MIN},{TABLE_NAME_MAX}}}")


class _Malformed(Exception):
    """The body is not what the endpoint takes: answered 400 with this text."""


def handle(ctx: Context, method: str, endpoint: str, body: bytes, clock: HybridClock | None = None) -> RawResponse:
    """``POST /dynastore/global-tables/<endpoint>``, in the server's default context ``ctx``; ``clock``: the hybrid
    clock of global tables, told every stamp received (so that later local writes are stamped after them)."""
    if method != "POST":
        return _answer(405, {"error": messages.PEER_POST_ONLY.format(method=method)})
    try:
        request = _object(body)
        target = _target(ctx, request)
        if endpoint == "changes":
            applied = _apply(target, request, body, clock)
            return _answer(200, {"Applied": applied})
        if endpoint == "replica-set":
            _put_replica_set(target, request)
        elif endpoint == "drop":
            replicas.drop_replica_table(target, _table_name(request))
        else:
            return _answer(404, {"error": messages.PEER_UNKNOWN_ENDPOINT.format(endpoint=endpoint)})
    except _Malformed as e:
        return _answer(400, {"error": str(e)})
    except apply.HeldByTransaction as e:
        return _answer(409, {"error": str(e)})  # the sender tries again shortly
    except ChangeRefused as e:
        return _answer(422, {"error": e.reason, "Refused": e.index, "Final": e.final})
    except ResourceNotFoundException as e:
        return _answer(404, {"error": _dynamo_text(e)})
    except DynamoError as e:
        return _answer(400, {"error": _dynamo_text(e)})
    return _answer(200, {})


def _target(ctx: Context, request: dict[str, Any]) -> Context:
    """The context of the namespace the request names: its account in this server's region, as the service."""
    region = request.get("Region")
    if not isinstance(region, str):
        raise _Malformed(messages.PEER_MEMBER_TYPE.format(member="Region", kind="a string"))
    served = ctx.config.region
    if region != served:
        raise _Malformed(messages.PEER_WRONG_REGION.format(region=region, served=served))
    account = request.get("Account")
    if not isinstance(account, str) or not _ACCOUNT.fullmatch(account):
        raise _Malformed(messages.PEER_MEMBER_TYPE.format(member="Account", kind="an account id of 12 digits"))
    return apply.as_replication(ctx.in_namespace(account, served))


def _apply(ctx: Context, request: dict[str, Any], body: bytes, clock: HybridClock | None) -> int:
    table = ctx.catalog.get(_table_name(request))
    if table.status == DELETING:
        raise ChangeRefused(messages.PEER_REPLICA_DELETING.format(table=table.name), None)
    if not isinstance(request.get("Changes"), list):
        raise _Malformed(messages.PEER_MEMBER_TYPE.format(member="Changes", kind="a list of changes"))
    try:
        changes = from_wire(body)
    except (ValueError, KeyError, TypeError) as e:
        raise _Malformed(messages.PEER_BAD_CHANGES.format(reason=_reason(e))) from None
    for index, change in enumerate(changes):
        _check_change(table, change, index)
    return apply.apply_changes(ctx, table, changes, clock)


def _check_change(table: TableDef, change: ReplicatedChange, index: int) -> None:
    """Each change's key fits the table and its item is well-formed, as a PutItem's would have to be (else the
    change at ``index`` is refused for good)."""
    try:
        check_item(change.key)
        check_table_key(table, change.key, is_full_item=False)
        if change.item is not None:
            check_item(change.item)
            check_table_key(table, change.item, is_full_item=True)
    except DynamoError as e:
        reason = messages.PEER_BAD_CHANGE.format(reason=e.message or type(e).__name__)
        raise ChangeRefused(reason, index, final=True) from None


def _put_replica_set(ctx: Context, request: dict[str, Any]) -> None:
    definition = request.get("Definition")
    if not isinstance(definition, dict):
        raise _Malformed(messages.PEER_MEMBER_TYPE.format(member="Definition", kind="an object"))
    _table_name(definition)
    try:
        replicas.ensure_replica_table(ctx, definition)
    except (KeyError, TypeError, ValueError) as e:
        # A definition another dynastore sent lacks a member or holds one of the wrong kind: the sender's fault.
        log.warning("a peer's replica-set definition is malformed: %r", e)
        raise _Malformed(messages.PEER_BAD_DEFINITION.format(reason=_reason(e))) from None


def _table_name(request: dict[str, Any]) -> str:
    name = request.get("TableName")
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise _Malformed(messages.PEER_MEMBER_TYPE.format(member="TableName", kind="a table name"))
    return name


def _object(body: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise _Malformed(messages.PEER_NOT_JSON) from None
    if not isinstance(data, dict):
        raise _Malformed(messages.PEER_NOT_JSON)
    return data


def _dynamo_text(error: DynamoError) -> str:
    return f"{type(error).__name__}: {error.message}" if error.message else type(error).__name__


def _reason(error: BaseException) -> str:
    if isinstance(error, KeyError):
        return f"missing member {error.args[0]!r}" if error.args else "a member is missing"
    return str(error) or type(error).__name__


def _answer(status: int, payload: dict[str, Any]) -> RawResponse:
    return RawResponse(status, orjson.dumps(payload), _JSON)
