"""The item requests of global tables with multi-region strong consistency (global_tables/strong.py;
docs/global-tables.md "Multi-Region strong consistency").

A request on such a table is checked as any request is; its write, or its strongly consistent read, then runs
through the server's ``StrongTables``:

- with a strong log, asynchronously: the handler returns a future of its response (protocol/protocol.py sends
  it once made), so the server serves other requests while the log answers;
- without one (every region of the set served by this server), in the request's turn: the write path, then
  its result applied to the set's other regions before the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from dynastore.api.item_requests import conditional_check_failed
from dynastore.api.services import RequestServices, ServicesHandler
from dynastore.engine import writes
from dynastore.engine.context import Context
from dynastore.engine.keys import key_attributes, storage_key
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item

__all__ = ["Answer", "Response", "consistently", "read", "write"]

Response = dict[str, Any] | bytes
# What a request answers with (a response, or a future of it for protocol/protocol.py to send once made).
Answer = Response | asyncio.Future[Response]


def write(
    req: dict[str, Any],
    ctx: Context,
    services: RequestServices,
    table: TableDef,
    item: Item,
    plan: writes.Plan,
    respond: Callable[[writes.WriteResult], Response],
) -> Answer:
    """Run ``plan`` on the item of ``table`` whose key ``item`` holds, then ``respond`` with its result."""
    strong = services.strong
    key = key_attributes(table, item)
    if not strong.logged:
        try:
            result = writes.perform(ctx, table, storage_key(table, key), plan)
        except writes.ConditionFailedError as e:
            raise conditional_check_failed(req, e) from None
        strong.spread(ctx, table, key)
        return respond(result)

    async def logged() -> Response:
        try:
            result = await strong.write(ctx, table, key, plan)
        except writes.ConditionFailedError as e:
            raise conditional_check_failed(req, e) from None
        return respond(result)

    return asyncio.ensure_future(logged())


def read(ctx: Context, services: RequestServices, tables: list[TableDef], run: Callable[[], Response]) -> Answer:
    """A strongly consistent read of ``tables`` (those of them that are MRSC replicas): ``run`` once each replica
    holds every write its strong log acknowledged before."""
    strong = services.strong
    if not strong.logged:
        return run()

    async def caught_up() -> Response:
        for table in tables:
            if table.strong_log is not None:
                await strong.catch_up(ctx, table)
        return run()

    return asyncio.ensure_future(caught_up())


def consistently(handler: Callable[[dict[str, Any], Context], Response]) -> ServicesHandler:
    """``handler`` (Query, Scan, BatchGetItem) with its strongly consistent reads of MRSC tables made after their
    replicas caught up with the strong log (``read``)."""

    def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> Answer:
        if services.strong.logged:
            tables = _strongly_read(req, ctx)
            if tables:
                return read(ctx, services, tables, lambda: handler(req, ctx))
        return handler(req, ctx)

    return handle


def _strongly_read(req: dict[str, Any], ctx: Context) -> list[TableDef]:
    """The MRSC tables ``req`` reads with ConsistentRead (by name; a table named by its ARN is read as it is)."""
    named: list[str] = []
    if req.get("ConsistentRead") and isinstance(req.get("TableName"), str):
        named.append(req["TableName"])
    for name, spec in (req.get("RequestItems") or {}).items():
        if isinstance(spec, dict) and spec.get("ConsistentRead"):
            named.append(name)
    found = (ctx.catalog.find(name) for name in named)
    return [table for table in found if table is not None and table.strong_log is not None]
