"""Property: Query pages over random items agree with a brute-force model of the same items.

Each example writes a fresh set of items under partition keys of its own (so one table serves every example),
then pages through a random query (key condition, filter, Limit, direction) and checks every page against the
model: the items a page reads are the next ``ScannedCount`` items of the key range in order, the page returns
those of them that pass the filter, and the pages together read the key range exactly once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import create_table
from tests.e2e.test_query import put_all

_examples = itertools.count()

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@pytest.fixture(scope="module")
def table_n(ddb: Any) -> str:
    return create_table(ddb, "S", "N")


@pytest.fixture(scope="module")
def table_s_sort(ddb: Any) -> str:
    return create_table(ddb, "S", "S")


_numbers = st.decimals(min_value=-1000, max_value=1000, places=2, allow_nan=False, allow_infinity=False).map(
    lambda d: d.normalize() if d != 0 else Decimal(0)
)
_strings = st.text(alphabet="ab\x00é", min_size=1, max_size=4)
_filters = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["=", "<", ">="]), st.integers(0, 4)),
    st.just(("missing", 0)),
)


def _key_condition(
    draw: st.DrawFn, sort_values: st.SearchStrategy[Any], kind: str
) -> tuple[str, dict[str, Any], Callable[[Any], bool]]:
    ops = ["none", "=", "<", "<=", ">", ">=", "between"] + (["begins_with"] if kind == "S" else [])
    op = draw(st.sampled_from(ops))
    a, b = draw(sort_values), draw(sort_values)
    low, high = min(a, b), max(a, b)

    def wire(value: Any) -> dict[str, Any]:
        return {kind: str(value)}

    if op == "none":
        return "pk = :p", {}, lambda x: True
    if op == "between":
        return "pk = :p AND sk BETWEEN :a AND :b", {":a": wire(low), ":b": wire(high)}, lambda x: low <= x <= high
    if op == "begins_with":
        return "pk = :p AND begins_with(sk, :a)", {":a": wire(a)}, lambda x: x.startswith(a)
    compare: dict[str, Callable[[Any], bool]] = {
        "=": lambda x: x == a,
        "<": lambda x: x < a,
        "<=": lambda x: x <= a,
        ">": lambda x: x > a,
        ">=": lambda x: x >= a,
    }
    return f"pk = :p AND sk {op} :a", {":a": wire(a)}, compare[op]


@st.composite
def scenarios(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    sort_values = _numbers if kind == "N" else _strings
    partitions = ["x", "y"]
    items = []
    for partition in partitions:
        for sort_value in draw(st.lists(sort_values, max_size=15, unique=True)):
            item: dict[str, Any] = {"pk": partition, "sk": sort_value}
            v = draw(st.one_of(st.none(), st.integers(0, 4)))
            if v is not None:
                item["v"] = v
            items.append(item)
    condition, values, matches = _key_condition(draw, sort_values, kind)
    return {
        "items": items,
        "partition": draw(st.sampled_from(partitions)),
        "condition": condition,
        "values": values,
        "matches": matches,
        "filter": draw(_filters),
        "limit": draw(st.one_of(st.none(), st.integers(1, 6))),
        "forward": draw(st.booleans()),
    }


def _passes(filter_spec: tuple[str, int] | None, item: dict[str, Any]) -> bool:
    if filter_spec is None:
        return True
    op, value = filter_spec
    if op == "missing":
        return "v" not in item
    if "v" not in item:
        return False
    v: int = item["v"]
    return {"=": v == value, "<": v < value, ">=": v >= value}[op]


def _check(ddb: Any, table: str, kind: str, scenario: dict[str, Any]) -> None:
    tag = f"e{next(_examples)}-"
    put_all(
        ddb,
        table,
        [
            {
                "pk": {"S": tag + item["pk"]},
                "sk": {kind: str(item["sk"])},
                **({"v": {"N": str(item["v"])}} if "v" in item else {}),
            }
            for item in scenario["items"]
        ],
    )
    in_range = sorted(
        (item for item in scenario["items"] if item["pk"] == scenario["partition"] and scenario["matches"](item["sk"])),
        key=lambda item: item["sk"].encode("utf-8") if kind == "S" else item["sk"],
        reverse=not scenario["forward"],
    )
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": scenario["condition"],
        "ExpressionAttributeValues": {":p": {"S": tag + scenario["partition"]}, **scenario["values"]},
        "ScanIndexForward": scenario["forward"],
    }
    filter_spec = scenario["filter"]
    if filter_spec is not None:
        op, value = filter_spec
        if op == "missing":
            request["FilterExpression"] = "attribute_not_exists(v)"
        else:
            request["FilterExpression"] = f"v {op} :v"
            request["ExpressionAttributeValues"][":v"] = {"N": str(value)}
    if scenario["limit"] is not None:
        request["Limit"] = scenario["limit"]
    offset = 0
    for _ in range(len(in_range) + 2):
        response = ddb.query(**request)
        read = in_range[offset : offset + response["ScannedCount"]]
        assert response["ScannedCount"] == len(read)
        if scenario["limit"] is not None:
            assert response["ScannedCount"] <= scenario["limit"]
        expected = [item["sk"] for item in read if _passes(filter_spec, item)]
        got = [Decimal(item["sk"]["N"]) if kind == "N" else item["sk"]["S"] for item in response["Items"]]
        assert got == expected and response["Count"] == len(expected)
        offset += response["ScannedCount"]
        if "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    else:
        pytest.fail("pagination did not end")
    assert offset == len(in_range)


@SETTINGS
@given(scenario=scenarios("N"))
def test_number_sort_keys_match_the_model(ddb: Any, table_n: str, scenario: dict[str, Any]) -> None:
    _check(ddb, table_n, "N", scenario)


@SETTINGS
@given(scenario=scenarios("S"))
def test_string_sort_keys_match_the_model(ddb: Any, table_s_sort: str, scenario: dict[str, Any]) -> None:
    _check(ddb, table_s_sort, "S", scenario)
