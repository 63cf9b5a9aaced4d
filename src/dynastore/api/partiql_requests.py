"""Request semantics every PartiQL operation shares: the parsed statement (cached) and its parameters, the table
or index a statement names, and per-statement errors as BatchExecuteStatement reports them."""

from __future__ import annotations

from typing import Any, Final

from dynastore import messages
from dynastore.engine.context import Context
from dynastore.engine.key_spaces import IndexKeySpace, KeySpace
from dynastore.errors import (
    AccessDeniedException,
    ConditionalCheckFailedException,
    DuplicateItemException,
    DynamoError,
    ItemCollectionSizeLimitExceededException,
    ProvisionedThroughputExceededException,
    RequestLimitExceeded,
    ResourceNotFoundException,
    ThrottlingException,
    TransactionConflictException,
    ValidationException,
)
from dynastore.model.table_schema import TableDef
from dynastore.model.values import AttributeValue
from dynastore.partiql import ParsedStatement, PartiQLSyntaxError, StatementCache
from dynastore.validation.attribute_values import check_value

__all__ = ["error_entry", "parameters", "parsed_statement", "read_space", "table_of"]


def parsed_statement(statements: StatementCache, text: str, params: list[AttributeValue]) -> ParsedStatement:
    """The statement's tree (from the request-side cache, api/services.py) once its parameters match its ``?``
    in number."""
    try:
        parsed = statements.get(text)
    except PartiQLSyntaxError as e:
        raise ValidationException(e.message, bare=True) from None
    if len(params) != parsed.param_count:
        raise ValidationException(messages.PARTIQL_PARAMETER_COUNT, bare=True)
    return parsed


def parameters(entry: dict[str, Any]) -> list[AttributeValue]:
    """A statement's Parameters, each well-formed (numbers canonical), as plain AttributeValues."""
    params = entry.get("Parameters")
    if not params:
        return []
    out: list[AttributeValue] = []
    for value in params:
        check_value(value)
        out.append(dict(value))  # the checked wrapper is a dict subclass: items are stored as plain JSON
    return out


def table_of(ctx: Context, name: str) -> TableDef:
    try:
        return ctx.catalog.get_active(name)
    except ResourceNotFoundException:
        raise ResourceNotFoundException(messages.RESOURCE_NOT_FOUND) from None


def read_space(ctx: Context, table: TableDef, index_name: str | None, *, consistent: bool) -> KeySpace:
    """The table, or the index a ``"table"."index"`` source names once it may be read."""
    if index_name is None:
        return ctx.table_spaces.of(table)
    index = table.index(index_name)
    if index is None:
        raise ValidationException(messages.PARTIQL_NO_INDEX, bare=True)
    if index.kind == "GSI":
        if consistent:
            raise ValidationException(messages.PARTIQL_GSI_CONSISTENT_READ, bare=True)
        if not index.readable:
            raise ValidationException(messages.INDEX_BACKFILLING, bare=True)
    return IndexKeySpace(table, index)


_CODES: Final[tuple[tuple[type[DynamoError], str], ...]] = (
    (ConditionalCheckFailedException, "ConditionalCheckFailed"),
    (DuplicateItemException, "DuplicateItem"),
    (ItemCollectionSizeLimitExceededException, "ItemCollectionSizeLimitExceeded"),
    (ProvisionedThroughputExceededException, "ProvisionedThroughputExceeded"),
    (ThrottlingException, "ThrottlingError"),
    (TransactionConflictException, "TransactionConflict"),
    (RequestLimitExceeded, "RequestLimitExceeded"),
    (ResourceNotFoundException, "ResourceNotFound"),
    (ValidationException, "ValidationError"),
    (AccessDeniedException, "AccessDenied"),
)


def error_entry(error: DynamoError) -> dict[str, Any]:
    """A BatchExecuteStatement response entry for a statement that failed (BatchStatementError)."""
    code = "InternalServerError"
    for kind, name in _CODES:
        if isinstance(error, kind):
            code = name
            break
    entry: dict[str, Any] = {"Code": code}
    # A statement's own error is reported in its entry as its bare text (only a request's error is prefixed).
    text = error.detail if isinstance(error, ValidationException) else error.message
    if text is not None:
        entry["Message"] = text
    item = error.extra.get("Item")
    if item is not None:
        entry["Item"] = item
    return {"Error": entry}
