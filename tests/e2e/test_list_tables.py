"""ListTables end to end: ascending names, Limit / ExclusiveStartTableName / LastEvaluatedTableName paging."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import error_of


@pytest.fixture(scope="module")
def names(ddb: Any) -> Iterator[list[str]]:
    """Five tables sharing a prefix no other table has; created out of order."""
    prefix = f"lt_{uuid.uuid4().hex[:10]}_"
    made = [prefix + suffix for suffix in ("c", "a", "e", "b", "d")]
    for name in made:
        ddb.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
    try:
        yield sorted(made)
    finally:
        for name in made:
            ddb.delete_table(TableName=name)


def prefix_of(names: list[str]) -> str:
    return names[0][:-1]


class TestValidation:
    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            (
                {"Limit": 0},
                "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value "
                "greater than or equal to 1",
            ),
            (
                {"Limit": 101},
                "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value "
                "less than or equal to 100",
            ),
            (
                {"ExclusiveStartTableName": "a;"},
                "1 validation error detected: Value at 'ExclusiveStartTableName' failed to satisfy constraint: "
                "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
            ),
            (
                {"Limit": 0, "ExclusiveStartTableName": "a" * 256},
                # the service model lists ExclusiveStartTableName before Limit
                "1 validation error detected: Value at 'ExclusiveStartTableName' failed to satisfy constraint: "
                "Member must have length less than or equal to 255",
            ),
        ],
    )
    def test_constraints(self, ddb: Any, kwargs: dict[str, Any], message: str) -> None:
        assert error_of(lambda: ddb.list_tables(**kwargs)) == ("ValidationException", message)


class TestFunctionality:
    def test_names_are_sorted(self, ddb: Any, names: list[str]) -> None:
        listed = ddb.list_tables(ExclusiveStartTableName=prefix_of(names), Limit=100)["TableNames"]
        assert listed[:5] == names
        assert listed == sorted(listed)

    def test_paging_with_limit(self, ddb: Any, names: list[str]) -> None:
        first = ddb.list_tables(ExclusiveStartTableName=prefix_of(names), Limit=2)
        assert first["TableNames"] == names[:2]
        assert first["LastEvaluatedTableName"] == names[1]
        second = ddb.list_tables(ExclusiveStartTableName=first["LastEvaluatedTableName"], Limit=2)
        assert second["TableNames"] == names[2:4]
        assert second["LastEvaluatedTableName"] == names[3]

    def test_exclusive_start_need_not_exist(self, ddb: Any, names: list[str]) -> None:
        between = names[1] + "0"  # sorts after names[1], before names[2]
        page = ddb.list_tables(ExclusiveStartTableName=between, Limit=1)
        assert page["TableNames"] == [names[2]]

    def test_last_page_has_no_last_evaluated_name(self, ddb: Any) -> None:
        last = ddb.list_tables(ExclusiveStartTableName="zzzzzzzzzzzz", Limit=5)
        assert last["TableNames"] == []
        assert "LastEvaluatedTableName" not in last

    def test_paginator_walks_everything(self, ddb: Any, names: list[str]) -> None:
        everything: list[str] = []
        for page in ddb.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 2}):
            everything.extend(page["TableNames"])
        assert everything == sorted(everything)
        assert len(everything) == len(set(everything))
        assert set(names) <= set(everything)

    def test_deleted_table_disappears(self, ddb: Any) -> None:
        name = f"lt_{uuid.uuid4().hex[:10]}_gone"
        ddb.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        assert ddb.list_tables(ExclusiveStartTableName=name[:-1], Limit=1)["TableNames"] == [name]
        ddb.delete_table(TableName=name)
        ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 100})
        assert name not in ddb.list_tables(ExclusiveStartTableName=name[:-1], Limit=1)["TableNames"]
