"""Request semantics shared by the single-item operations (Put, Get, Update, Delete)."""

from __future__ import annotations

from typing import Any

from dynastore.engine.capacity import consumed_capacity, write_half_units
from dynastore.engine.writes import ConditionFailedError, WriteResult
from dynastore.errors import ConditionalCheckFailedException
from dynastore.expressions import ExpressionContext, legacy
from dynastore.model.table_schema import TableDef


def expression_context(req: dict[str, Any]) -> ExpressionContext:
    return ExpressionContext(req.get("ExpressionAttributeNames"), req.get("ExpressionAttributeValues"))


def write_condition(req: dict[str, Any], exprs: ExpressionContext) -> Any:
    """The request's condition from ConditionExpression or the legacy Expected/ConditionalOperator, or None."""
    text = req.get("ConditionExpression")
    if text is not None:
        return exprs.condition("ConditionExpression", text)
    expected = req.get("Expected")
    if expected:
        return legacy.expected_condition(expected, req.get("ConditionalOperator"))
    return None


def conditional_check_failed(req: dict[str, Any], error: ConditionFailedError) -> ConditionalCheckFailedException:
    if req.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and error.old is not None:
        return ConditionalCheckFailedException(Item=error.old)
    return ConditionalCheckFailedException()


def add_write_capacity(response: dict[str, Any], req: dict[str, Any], table: TableDef, result: WriteResult) -> None:
    consumed = consumed_capacity(
        req.get("ReturnConsumedCapacity"), table.name, write_half_units(max(result.old_size, result.new_size))
    )
    if consumed is not None:
        response["ConsumedCapacity"] = consumed
