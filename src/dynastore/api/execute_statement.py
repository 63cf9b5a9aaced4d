"""ExecuteStatement: one PartiQL statement: a SELECT (a Query or a Scan page) or a single-item write.

Checks in order: the statement parses (cached) and its parameters match its ``?`` in number; then the table,
the index, the key and the values; then it runs on the engine calls the JSON API uses (api/partiql_reads.py,
api/partiql_writes.py). EXISTS is a transaction's condition check, refused here.
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore import messages
from dynastore.api.partiql_reads import execute_select, select_capacity, select_response
from dynastore.api.partiql_requests import parameters, parsed_statement
from dynastore.api.partiql_writes import perform, prepare_write, returned_items, write_capacity
from dynastore.api.services import RequestServices
from dynastore.engine.context import Context
from dynastore.errors import ValidationException
from dynastore.partiql import ast


def handle(req: dict[str, Any], ctx: Context, services: RequestServices) -> bytes:
    text = req["Statement"]
    params = parameters(req)
    statement = parsed_statement(services.statements, text, params).statement
    mode = req.get("ReturnConsumedCapacity")
    if isinstance(statement, ast.Select):
        page = execute_select(
            ctx,
            statement,
            params,
            text=text,
            consistent=bool(req.get("ConsistentRead")),
            limit=req.get("Limit"),
            next_token=req.get("NextToken"),
        )
        return select_response(page, select_capacity(mode, statement.table, page))
    if isinstance(statement, ast.Exists):
        raise ValidationException(messages.PARTIQL_EXISTS_OUTSIDE_TRANSACTION, bare=True)
    prepared = prepare_write(ctx, statement, params)
    result = perform(ctx, prepared, return_old_on_failure=req.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD")
    response: dict[str, Any] = {"Items": returned_items(prepared, result)}
    consumed = write_capacity(mode, statement.table, result)
    if consumed is not None:
        response["ConsumedCapacity"] = consumed
    return orjson.dumps(response)
