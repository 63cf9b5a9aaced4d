"""BatchExecuteStatement: up to 25 statements, all reads (SELECT by full key) or all writes, each on its own.

Not a transaction: each statement runs as ExecuteStatement would run it alone (reads as GetItem, writes through
``writes.perform``), and a statement that fails answers an ``Error`` (Code, Message, and the item when
ReturnValuesOnConditionCheckFailure asks) in its place in ``Responses``; the request itself succeeds. A batch
mixing reads and writes is refused as a whole.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.api.partiql_requests import error_entry, parameters, parsed_statement
from dynastore.api.partiql_writes import keyed_read, perform, prepare_write
from dynastore.api.services import RequestServices
from dynastore.engine.capacity.units import write_half_units
from dynastore.engine.context import Context
from dynastore.engine.item_reads import GetItemRequest, get_item
from dynastore.errors import DynamoError, ValidationException
from dynastore.expressions import evaluate, project
from dynastore.global_tables.strong import StrongTables
from dynastore.partiql import ast


class _Tally:
    """Consumed capacity per table (and per index) across the batch, in request order of first use."""

    __slots__ = ("tables",)

    def __init__(self) -> None:
        self.tables: dict[str, list[Any]] = {}

    def add(
        self, name: str, half_units: int, lsi: dict[str, int] | None = None, gsi: dict[str, int] | None = None
    ) -> None:
        entry = self.tables.setdefault(name, [0, {}, {}])
        entry[0] += half_units
        for bucket, units in ((entry[1], lsi or {}), (entry[2], gsi or {})):
            for index, half in units.items():
                bucket[index] = bucket.get(index, 0) + half

    def consumed(self, mode: str | None) -> list[dict[str, Any]] | None:
        if mode is None or mode == "NONE":
            return None
        out = []
        for name, (table_units, lsi, gsi) in self.tables.items():
            capacity = consumed_capacity(mode, name, table_units, lsi_half_units=lsi, gsi_half_units=gsi)
            if capacity is not None:
                out.append(capacity)
        return out


def handle(services: RequestServices, req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    entries = req["Statements"]
    statements: list[ast.Statement | DynamoError] = []
    for entry in entries:
        try:
            statements.append(parsed_statement(services.statements, entry["Statement"], parameters(entry)).statement)
        except ValidationException as invalid:
            statements.append(invalid)
    kinds = {isinstance(s, ast.Select) for s in statements if not isinstance(s, DynamoError)}
    if len(kinds) > 1:
        raise ValidationException(messages.PARTIQL_BATCH_MIXED, bare=True)
    tally = _Tally()
    responses: list[dict[str, Any]] = []
    for entry, statement in zip(entries, statements, strict=True):
        if isinstance(statement, DynamoError):
            responses.append(error_entry(statement))
            continue
        try:
            responses.append(_run(ctx, entry, statement, tally, services.strong))
        except DynamoError as e:
            responses.append(error_entry(e))
    response: dict[str, Any] = {"Responses": responses}
    consumed = tally.consumed(req.get("ReturnConsumedCapacity"))
    if consumed is not None:
        response["ConsumedCapacity"] = consumed
    return response


def _run(
    ctx: Context, entry: dict[str, Any], statement: ast.Statement, tally: _Tally, strong: StrongTables
) -> dict[str, Any]:
    params = parameters(entry)
    if isinstance(statement, ast.Exists):
        raise ValidationException(messages.PARTIQL_EXISTS_OUTSIDE_TRANSACTION, bare=True)
    if isinstance(statement, ast.Select):
        read = keyed_read(
            ctx,
            statement,
            params,
            key_message=messages.PARTIQL_BATCH_READ_KEY,
            index_message=messages.PARTIQL_BATCH_READ_KEY,
        )
        result = get_item(ctx, GetItemRequest(read.table, read.key, consistent=bool(entry.get("ConsistentRead"))))
        tally.add(statement.table, result.half_units)
        out: dict[str, Any] = {"TableName": statement.table}
        if result.item_json is not None:
            item = result.item()
            if read.condition is None or evaluate(read.condition, item):
                out["Item"] = item if read.projection is None else project(item, read.projection)
        return out
    prepared = prepare_write(ctx, statement, params)
    if prepared.table.strong_log is not None and strong.logged:
        # Each write of such a table waits for the strong log on its own: ExecuteStatement (or PutItem, ...) does.
        raise ValidationException(messages.MRSC_BATCH_STATEMENT.format(name=statement.table), bare=True)
    written = perform(
        ctx, prepared, strong, return_old_on_failure=entry.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
    )
    lsi, gsi = written.index_half_units()
    tally.add(statement.table, write_half_units(max(written.old_size, written.new_size)), lsi, gsi)
    return {"TableName": statement.table}
