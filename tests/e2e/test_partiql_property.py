"""Property: a random SELECT returns, page by page, exactly the items of its hand-written Query or Scan
equivalent (same key condition, same filter as a FilterExpression, same projection), in the same order for a
single partition."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import create_table

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
PARTITIONS = ("p0", "p1", "p2")


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    """Three partitions of 12 items: sk 0..11, v = sk % 5 (absent when sk % 4 == 3), s = "a<sk % 3>"."""
    name = create_table(ddb, "S", "N")
    for pk in PARTITIONS:
        for sk in range(12):
            item = {"pk": {"S": pk}, "sk": {"N": str(sk)}, "s": {"S": f"a{sk % 3}"}}
            if sk % 4 != 3:
                item["v"] = {"N": str(sk % 5)}
            ddb.put_item(TableName=name, Item=item)
    return name


# Each filter as (PartiQL, FilterExpression, its values).
_filters = st.sampled_from(
    [
        ("v = 2", "v = :f", {":f": {"N": "2"}}),
        ("v > 1", "v > :f", {":f": {"N": "1"}}),
        ("v BETWEEN 1 AND 3", "v BETWEEN :f AND :g", {":f": {"N": "1"}, ":g": {"N": "3"}}),
        ("v IS MISSING", "attribute_not_exists(v)", {}),
        ("v IS NOT MISSING", "attribute_exists(v)", {}),
        ("begins_with(s, 'a1')", "begins_with(s, :f)", {":f": {"S": "a1"}}),
        ("s IN ['a0', 'a2']", "s IN (:f, :g)", {":f": {"S": "a0"}, ":g": {"S": "a2"}}),
        ("NOT v = 0", "NOT v = :f", {":f": {"N": "0"}}),
    ]
)
_sort = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["=", "<", "<=", ">", ">="]), st.integers(0, 11)),
    st.tuples(st.just("BETWEEN"), st.integers(0, 11), st.integers(0, 11)),
)


def _select_all(ddb: Any, statement: str, limit: int | None) -> list[Any]:
    items: list[Any] = []
    kwargs: dict[str, Any] = {"Statement": statement}
    if limit is not None:
        kwargs["Limit"] = limit
    while True:
        response = ddb.execute_statement(**kwargs)
        items += response["Items"]
        if "NextToken" not in response:
            return items
        kwargs["NextToken"] = response["NextToken"]


def _paged(call: Any, **kwargs: Any) -> list[Any]:
    items: list[Any] = []
    while True:
        response = call(**kwargs)
        items += response["Items"]
        if "LastEvaluatedKey" not in response:
            return items
        kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]


@SETTINGS
@given(
    partitions=st.one_of(st.none(), st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=2, unique=True)),
    sort=_sort,
    filters=st.lists(_filters, max_size=2),
    joiner=st.sampled_from(["AND", "OR"]),
    projection=st.sampled_from([None, ("sk", "s"), ("v",)]),
    limit=st.one_of(st.none(), st.integers(1, 7)),
)
def test_select_equals_query_or_scan(
    ddb: Any,
    table: str,
    partitions: list[str] | None,
    sort: Any,
    filters: list[tuple[str, str, dict[str, Any]]],
    joiner: str,
    projection: tuple[str, ...] | None,
    limit: int | None,
) -> None:
    where: list[str] = []
    key_expression = ""
    key_values: dict[str, Any] = {}
    if partitions is not None and sort is not None:
        if sort[0] == "BETWEEN":
            low, high = sorted(sort[1:])
            where.append(f"sk BETWEEN {low} AND {high}")
            key_expression = " AND sk BETWEEN :lo AND :hi"
            key_values = {":lo": {"N": str(low)}, ":hi": {"N": str(high)}}
        else:
            where.append(f"sk {sort[0]} {sort[1]}")
            key_expression = f" AND sk {sort[0]} :lo"
            key_values = {":lo": {"N": str(sort[1])}}
    filter_expression = ""
    filter_values: dict[str, Any] = {}
    if filters:
        where.append("(" + f" {joiner} ".join(f[0] for f in filters) + ")")
        renamed = []
        for index, (_, expression, values) in enumerate(filters):
            for ref, value in values.items():
                filter_values[f"{ref}{index}"] = value
                expression = expression.replace(ref, f"{ref}{index}")
            renamed.append(f"({expression})")
        filter_expression = f" {joiner} ".join(renamed)
    if partitions is not None:
        where.insert(0, "pk IN [" + ", ".join(f"'{p}'" for p in partitions) + "]")
    select = "*" if projection is None else ", ".join(projection)
    statement = f'SELECT {select} FROM "{table}"' + (" WHERE " + " AND ".join(where) if where else "")
    got = _select_all(ddb, statement, limit)

    common: dict[str, Any] = {"TableName": table}
    if projection is not None:
        common["ProjectionExpression"] = ", ".join(projection)
    if filter_expression:
        common["FilterExpression"] = filter_expression
    if partitions is None:
        if filter_values:
            common["ExpressionAttributeValues"] = filter_values
        expected = _paged(ddb.scan, **common)
        key = repr
        assert sorted(got, key=key) == sorted(expected, key=key)
        return
    expected = []
    for pk in partitions:
        values = {":pk": {"S": pk}, **key_values, **filter_values}
        expected += _paged(
            ddb.query, KeyConditionExpression="pk = :pk" + key_expression, ExpressionAttributeValues=values, **common
        )
    assert got == expected
