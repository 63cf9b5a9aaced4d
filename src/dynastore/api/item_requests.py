"""Request semantics shared by the single-item operations (Put, Get, Update, Delete)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from dynastore.api.collection_metrics import collection_metrics
from dynastore.api.consumed_capacity import consumed_capacity
from dynastore.engine.capacity.units import write_half_units
from dynastore.engine.writes import ConditionFailedError, WriteResult
from dynastore.errors import ConditionalCheckFailedException
from dynastore.expressions import ExpressionCache, ExpressionContext, legacy
from dynastore.model.table_schema import TableDef
from dynastore.validation.attribute_values import check_conditions


def expression_context(req: dict[str, Any], cache: ExpressionCache) -> ExpressionContext:
    return ExpressionContext(req.get("ExpressionAttributeNames"), req.get("ExpressionAttributeValues"), cache)


def write_condition(req: dict[str, Any], exprs: ExpressionContext) -> Any:
    """The request's condition from ConditionExpression or the legacy Expected/ConditionalOperator, or None."""
    text = req.get("ConditionExpression")
    if text is not None:
        return exprs.condition("ConditionExpression", text)
    return legacy_write_condition(req)


def uses_expressions(req: dict[str, Any], expression: str) -> bool:
    """Whether a write request gives ``expression`` or expression attribute names or values: without them it has
    no expression to parse, and no names or values to check for use."""
    return (
        req.get(expression) is not None
        or req.get("ExpressionAttributeNames") is not None
        or req.get("ExpressionAttributeValues") is not None
    )


def legacy_write_condition(req: dict[str, Any]) -> Any:
    """The condition of the legacy Expected and ConditionalOperator, or None."""
    expected = req.get("Expected")
    if expected:
        check_conditions(expected)
        return legacy.expected_condition(expected, req.get("ConditionalOperator"))
    return None


def conditional_check_failed(req: dict[str, Any], error: ConditionFailedError) -> ConditionalCheckFailedException:
    if req.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and error.old is not None:
        return ConditionalCheckFailedException(Item=error.old)
    return ConditionalCheckFailedException()


def add_write_capacity(response: dict[str, Any], req: dict[str, Any], table: TableDef, result: WriteResult) -> None:
    """ConsumedCapacity (the table's write plus its index writes) and ItemCollectionMetrics, when asked for."""
    mode = req.get("ReturnConsumedCapacity")
    if mode is not None and mode != "NONE":
        lsi, gsi = result.index_half_units()
        response["ConsumedCapacity"] = consumed_capacity(
            mode,
            req["TableName"],  # as the request named the table: DynamoDB echoes a table ARN
            write_half_units(max(result.old_size, result.new_size)),
            lsi_half_units=lsi,
            gsi_half_units=gsi,
        )
    if req.get("ReturnItemCollectionMetrics") == "SIZE":
        metrics = collection_metrics(result.index)
        if metrics is not None:
            response["ItemCollectionMetrics"] = metrics


def item_collection_metrics(written: Iterable[tuple[TableDef, WriteResult]]) -> dict[str, list[dict[str, Any]]]:
    """BatchWriteItem's and TransactWriteItems' ItemCollectionMetrics: per table with LSIs, one entry per item
    collection the request wrote, with its size after the whole request."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for table, result in written:
        metrics = collection_metrics(result.index)
        if metrics is not None:
            collection = orjson.dumps(metrics["ItemCollectionKey"], option=orjson.OPT_SORT_KEYS).decode()
            out.setdefault(table.name, {})[collection] = metrics
    return {name: list(collections.values()) for name, collections in out.items()}
