"""ExecuteStatement: one PartiQL statement: a SELECT (a Query or a Scan page) or a single-item write.

Checks in order: the statement parses (cached) and its parameters match its ``?`` in number; then the table,
the index, the key and the values; then it runs on the engine calls the JSON API uses (api/partiql_reads.py,
api/partiql_writes.py). EXISTS is a transaction's condition check, refused here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from dynastore import messages
from dynastore.api import strong_items
from dynastore.api.partiql_reads import execute_select, select_capacity, select_response
from dynastore.api.partiql_requests import parameters, parsed_statement
from dynastore.api.partiql_writes import (
    PreparedWrite,
    perform,
    perform_logged,
    prepare_write,
    returned_items,
    write_capacity,
)
from dynastore.api.services import RequestServices
from dynastore.api.strong_items import Answer, Response
from dynastore.engine.context import Context
from dynastore.engine.writes import WriteResult
from dynastore.errors import ValidationException
from dynastore.partiql import ast


def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> Answer:
    text = req["Statement"]
    params = parameters(req)
    statement = parsed_statement(services.statements, text, params).statement
    mode = req.get("ReturnConsumedCapacity")
    if isinstance(statement, ast.Select):
        select = statement
        consistent = bool(req.get("ConsistentRead"))
        table = ctx.catalog.find(select.table) if consistent and services.strong.logged else None
        if table is not None and table.strong_log is not None:
            return strong_items.read(ctx, services, [table], lambda: _select(req, ctx, select, params, text))
        return _select(req, ctx, select, params, text)
    if isinstance(statement, ast.Exists):
        raise ValidationException(messages.PARTIQL_EXISTS_OUTSIDE_TRANSACTION, bare=True)
    prepared = prepare_write(ctx, statement, params)
    return_old = req.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
    strong = services.strong
    if prepared.table.strong_log is not None and strong.logged:

        async def logged() -> Response:
            written = await perform_logged(ctx, prepared, strong, return_old_on_failure=return_old)
            return _written(prepared, statement.table, written, mode)

        return asyncio.ensure_future(logged())
    written = perform(ctx, prepared, strong, return_old_on_failure=return_old)
    return _written(prepared, statement.table, written, mode)


def _select(req: dict[str, Any], ctx: Context, statement: ast.Select, params: Any, text: str) -> bytes:
    page = execute_select(
        ctx,
        statement,
        params,
        text=text,
        consistent=bool(req.get("ConsistentRead")),
        limit=req.get("Limit"),
        next_token=req.get("NextToken"),
    )
    return select_response(page, select_capacity(req.get("ReturnConsumedCapacity"), statement.table, page))


def _written(prepared: PreparedWrite, table_name: str, result: WriteResult, mode: str | None) -> bytes:
    response: dict[str, Any] = {"Items": returned_items(prepared, result)}
    consumed = write_capacity(mode, table_name, result)
    if consumed is not None:
        response["ConsumedCapacity"] = consumed
    return orjson.dumps(response)
