"""FilterCriteria patterns: equality lists, prefix, suffix, anything-but, numeric ranges, exists, nested keys."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.triggers.filters import FilterSet, matches

RECORD: dict[str, Any] = {
    "eventName": "MODIFY",
    "dynamodb": {
        "Keys": {"pk": {"S": "order#17"}},
        "NewImage": {"pk": {"S": "order#17"}, "total": {"N": "42.5"}, "tags": {"SS": ["a", "b"]}},
        "SizeBytes": 120,
    },
}


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ({"eventName": ["MODIFY", "INSERT"]}, True),
        ({"eventName": ["REMOVE"]}, False),
        ({"dynamodb": {"Keys": {"pk": {"S": [{"prefix": "order#"}]}}}}, True),
        ({"dynamodb": {"Keys": {"pk": {"S": [{"prefix": "user#"}]}}}}, False),
        ({"dynamodb": {"Keys": {"pk": {"S": [{"suffix": "#17"}]}}}}, True),
        ({"eventName": [{"equals-ignore-case": "modify"}]}, True),
        ({"eventName": [{"anything-but": "REMOVE"}]}, True),
        ({"eventName": [{"anything-but": ["MODIFY", "REMOVE"]}]}, False),
        ({"eventName": [{"anything-but": {"prefix": "MOD"}}]}, False),
        ({"dynamodb": {"NewImage": {"total": {"N": [{"numeric": [">", 40, "<=", 42.5]}]}}}}, True),
        ({"dynamodb": {"NewImage": {"total": {"N": [{"numeric": ["<", 40]}]}}}}, False),
        ({"dynamodb": {"SizeBytes": [{"numeric": ["=", 120]}]}}, True),
        ({"dynamodb": {"SizeBytes": [120]}}, True),
        ({"dynamodb": {"SizeBytes": ["120"]}}, False),  # a string never equals a number
        ({"dynamodb": {"OldImage": [{"exists": False}]}}, True),
        ({"dynamodb": {"NewImage": [{"exists": True}]}}, True),
        ({"dynamodb": {"OldImage": {"pk": {"S": [{"exists": False}]}}}}, True),
        ({"dynamodb": {"NewImage": {"missing": {"S": ["x"]}}}}, False),
        ({"dynamodb": {"NewImage": {"tags": {"SS": ["b"]}}}}, True),  # any element of an array
        ({"dynamodb": {"NewImage": {"tags": {"SS": ["c"]}}}}, False),
        ({"eventName": ["MODIFY"], "dynamodb": {"Keys": {"pk": {"S": ["other"]}}}}, False),  # every key must match
        ({"dynamodb": ["x"]}, False),  # a leaf matcher never matches an object
        ({"eventName": {"nested": ["x"]}}, False),
    ],
)
def test_a_pattern_matches_as_lambda_filters_do(pattern: dict[str, Any], expected: bool) -> None:
    FilterSet([pattern])  # well-formed
    assert matches(pattern, RECORD) is expected


def test_a_set_passes_a_record_any_of_its_patterns_matches() -> None:
    filters = FilterSet([{"eventName": ["INSERT"]}, {"eventName": ["MODIFY"]}])
    assert filters.passes(RECORD)
    assert not FilterSet([{"eventName": ["INSERT"]}]).passes(RECORD)


@pytest.mark.parametrize(
    ("patterns", "text"),
    [
        ([], "FilterCriteria holds no filter"),
        (["eventName"], "a filter pattern must be a non-empty JSON object"),
        ([{"eventName": "INSERT"}], "the filter value of 'eventName' must be an object or a non-empty list"),
        ([{"eventName": []}], "the filter value of 'eventName' must be an object or a non-empty list"),
        ([{"eventName": [{"wildcard": "*"}]}], "unknown filter operator 'wildcard' for 'eventName'"),
        ([{"eventName": [{"prefix": 1}]}], "the 'prefix' matcher of 'eventName' is malformed"),
        ([{"n": [{"numeric": [">", "1"]}]}], "the 'numeric' matcher of 'n' is malformed"),
        ([{"n": [{"numeric": ["!", 1]}]}], "the 'numeric' matcher of 'n' is malformed"),
        ([{"n": [{"exists": "yes"}]}], "the 'exists' matcher of 'n' is malformed"),
        ([{"n": [{"prefix": "a", "suffix": "b"}]}], "a matcher of 'n' must have exactly one operator"),
    ],
)
def test_a_malformed_pattern_is_refused(patterns: list[Any], text: str) -> None:
    with pytest.raises(ValueError, match=text):
        FilterSet(patterns)
