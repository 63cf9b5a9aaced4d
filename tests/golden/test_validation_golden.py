"""Golden request-validation cases: tests/golden/validation.jsonl, one JSON object per line.

Each case: ``op`` (wire operation name), ``input`` (request body), ``type`` (expected ``__type`` suffix) and
``message``; ``phase3`` names an attribute map whose well-formedness error is expected (check_item).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dynastore.api.schemas import SHAPES
from dynastore.errors import DynamoError
from dynastore.validation import validate_request
from dynastore.validation.attribute_values import check_item

CASES = [json.loads(line) for line in (Path(__file__).parent / "validation.jsonl").read_text().splitlines() if line]


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['op']}" for i, c in enumerate(CASES)])
def test_golden(case: dict[str, Any]) -> None:
    with pytest.raises(DynamoError) as info:
        request = validate_request(SHAPES[case["op"]], case["input"])
        if "phase3" in case:
            check_item(request[case["phase3"]])
    body = info.value.to_body()
    assert body["__type"].rsplit("#", 1)[1] == case["type"]
    assert info.value.message == case["message"]
