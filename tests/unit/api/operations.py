"""Operations driven through the api layer (``dispatch.bind``) on an in-memory dynastore with a ManualClock, for
the api tests whose point is an operation's behaviour as a client sees it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dynastore.api.services import RequestServices
from dynastore.app import build_context, request_services
from dynastore.config import Config
from dynastore.engine.context import Context
from dynastore.protocol import dispatch
from dynastore.protocol.protocol import Operation
from dynastore.security.caller import Caller, anonymous
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

T0 = 1_700_000_000.0
ANYONE = anonymous("000000000000", "us-east-1")  # the caller of a server without authentication


def make_ctx(now: float = T0, **config: Any) -> tuple[Context, dict[str, Any], ManualClock]:
    """A dynastore's engine context, its operations (request dict -> response) and its clock."""
    clock = ManualClock(now)
    cfg = Config(in_memory=True, clock=clock, **config)
    kv = MemoryKV()
    ctx = build_context(cfg, kv, Catalog.load(kv, cfg))
    return ctx, bound(ctx), clock


def bound(
    ctx: Context, caller: Caller = ANYONE, services: RequestServices | None = None
) -> dict[str, Callable[[Any], Any]]:
    """The api's operations of ``ctx``, each a function of the request dict, run as ``caller`` (by default the
    anonymous caller); the Streams API's operations are among them. ``services``: the request-side services
    they use (None: new ones, as app.py builds them for ``ctx``'s config)."""
    if services is None:
        services = request_services(ctx.config)
    operations = {**dispatch.bind(ctx, services), **dispatch.bind_streams(ctx, services)}
    return {name: _as(caller, operation) for name, operation in operations.items()}


def user(account_id: str, region: str, name: str = "alice") -> Caller:
    """An authenticated caller of ``account_id`` whose request's credential scope names ``region``."""
    return Caller(
        account_id,
        region,
        user_name=name,
        arn=f"arn:aws:iam::{account_id}:user/{name}",
        access_key_id="AKIA" + account_id,
        authenticated=True,
    )


def _as(caller: Caller, operation: Operation) -> Callable[[Any], Any]:
    def run(body: Any) -> Any:
        return operation.run(body, caller)

    return run


def call(ops: dict[str, Any], op: str, **body: Any) -> Any:
    return ops[op](body)


def create(ops: dict[str, Any], name: str, read: int, write: int, **extra: Any) -> None:
    """A provisioned table of partition key ``pk`` (S)."""
    call(
        ops,
        "CreateTable",
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        **extra,
    )
