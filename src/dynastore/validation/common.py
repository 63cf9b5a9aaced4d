"""Semantic checks shared by several operations (phase 3, before any storage access)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dynastore import messages
from dynastore.errors import ValidationException


def check_expression_params(req: dict[str, Any], expressions: Sequence[str], legacy: Sequence[str]) -> None:
    """Reject mixing expression and legacy parameters, and names/values given without any expression."""
    used_expressions = [name for name in expressions if req.get(name) is not None]
    if used_expressions:
        legacy_candidates = list(legacy)
        # KeyConditions may accompany a filter/projection expression when no KeyConditionExpression is given.
        if req.get("KeyConditions") is not None and req.get("KeyConditionExpression") is None:
            legacy_candidates = [name for name in legacy_candidates if name != "KeyConditions"]
        used_legacy = [name for name in legacy_candidates if req.get(name) is not None]
        if used_legacy:
            raise ValidationException(
                messages.MIXED_EXPRESSION_PARAMS.format(
                    legacy=", ".join(used_legacy), expressions=", ".join(used_expressions)
                )
            )
    if req.get("ExpressionAttributeNames") is not None and not used_expressions:
        raise ValidationException(messages.NAMES_WITHOUT_EXPRESSIONS)
    value_expressions = [name for name in expressions if name != "ProjectionExpression"]
    if (
        value_expressions
        and req.get("ExpressionAttributeValues") is not None
        and all(req.get(name) is None for name in value_expressions)
    ):
        # The new form drops the older one's list of the missing expressions.
        older = messages.VALUES_WITHOUT_EXPRESSIONS_OLD.format(
            expressions=" and ".join(value_expressions), verb="are" if len(value_expressions) > 1 else "is"
        )
        raise ValidationException(messages.VALUES_WITHOUT_EXPRESSIONS, old_detail=older)


def check_conditional_operator(req: dict[str, Any], conditions_member: str) -> None:
    """ConditionalOperator needs an Expected / QueryFilter / ScanFilter map of two or more conditions
    (DynamoDB checks it right after the expression/legacy mixing, before the rest of the request)."""
    if req.get("ConditionalOperator") is None:
        return
    conditions = req.get(conditions_member)
    if not conditions:
        raise ValidationException(messages.LEGACY_CONDITIONAL_OPERATOR_ALONE)
    if len(conditions) < 2:
        raise ValidationException(messages.LEGACY_CONDITIONAL_OPERATOR_ONE)
