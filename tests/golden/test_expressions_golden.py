"""Golden expression cases: each line of expressions.jsonl is one request's expression and its outcome.

``error`` is DynamoDB's exact message (None: the expression is valid). Key conditions run against a
table with hash key ``a`` (S) and range key ``b`` (N). Unused names/values are not checked here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext

_LINES = (Path(__file__).parent / "expressions.jsonl").read_text().splitlines()
CASES = [json.loads(line) for line in _LINES if line]


def run(case: dict[str, Any]) -> None:
    ctx = ExpressionContext(case["names"], case["values"])
    kind, text = case["kind"], case["text"]
    if kind == "UpdateExpression":
        ctx.update(text)
    elif kind == "ProjectionExpression":
        ctx.projection(text)
    elif kind == "KeyConditionExpression":
        ctx.key_condition(text, hash_key=("a", "S"), range_key=("b", "N"))
    else:
        ctx.condition(kind, text)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['kind']}:{c['text'][:40]}" for c in CASES])
def test_golden_expression(case: dict[str, Any]) -> None:
    if case["error"] is None:
        run(case)
        return
    with pytest.raises(ValidationException) as info:
        run(case)
    assert info.value.detail == case["error"]
