"""DescribeTable end to end, and the table lifecycle CREATING -> ACTIVE -> UPDATING -> ACTIVE -> DELETING -> gone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of, make_client, unique_name
from tests.e2e.server_process import ServerProcess

WAIT = {"Delay": 0.05, "MaxAttempts": 200}  # at most ~10 s
IN_USE = "Attempt to change a resource which is still in use: Table is being {what}: {name}"


class TestValidation:
    def test_table_name_required(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.describe_table()) == (
            "ValidationException",
            "1 validation error detected: The parameter 'TableName' is required but was not present in the request",
        )

    @pytest.mark.parametrize(
        ("name", "constraint"),
        [
            ("", "Member must have length greater than or equal to 1"),
            ("ab", "Member must have length greater than or equal to 3"),
            ("a" * 256, "Member must have length less than or equal to 255"),
        ],
    )
    def test_table_name_length(self, ddb: Any, name: str, constraint: str) -> None:
        assert error_of(lambda: ddb.describe_table(TableName=name)) == (
            "ValidationException",
            f"1 validation error detected: Value at 'TableName' failed to satisfy constraint: {constraint}",
        )

    def test_table_name_too_short_and_malformed(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.describe_table(TableName="a;")) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must satisfy "
            "regular expression pattern: [a-zA-Z0-9_.-]+",
        )

    def test_table_name_pattern(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.describe_table(TableName="ab;c")) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must satisfy "
            "regular expression pattern: [a-zA-Z0-9_.-]+",
        )

    def test_missing_table(self, ddb: Any) -> None:
        name = unique_name("missing")
        assert error_of(lambda: ddb.describe_table(TableName=name)) == (
            "ResourceNotFoundException",
            f"Requested resource not found: Table: {name} not found",
        )


class TestFunctionality:
    def test_matches_create_description(self, ddb: Any) -> None:
        name = unique_name("dt")
        created = ddb.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "h", "AttributeType": "B"}],
            KeySchema=[{"AttributeName": "h", "KeyType": "HASH"}],
            ProvisionedThroughput={"ReadCapacityUnits": 7, "WriteCapacityUnits": 8},
        )["TableDescription"]
        try:
            ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
            table = ddb.describe_table(TableName=name)["Table"]
            assert table.pop("TableStatus") == "ACTIVE"
            created.pop("TableStatus")
            # DescribeTable reports the baseline warm throughput; CreateTable only one the request configured
            assert table.pop("WarmThroughput") == {
                "ReadUnitsPerSecond": 12000,
                "WriteUnitsPerSecond": 4000,
                "Status": "ACTIVE",
            }
            assert "WarmThroughput" not in created
            assert table == created
        finally:
            ddb.delete_table(TableName=name)

    def test_item_count_and_size_are_numbers(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        try:
            ddb.put_item(TableName=name, Item={"pk": {"S": "x"}, "v": {"S": "hello"}})
            table = ddb.describe_table(TableName=name)["Table"]
            assert isinstance(table["ItemCount"], int)
            assert isinstance(table["TableSizeBytes"], int)
        finally:
            ddb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def slow() -> Iterator[ServerProcess]:
    """A server of our own on a manual clock, whose tables stay CREATING / UPDATING / DELETING for 60 s of it:
    each state lasts until the test moves the clock, however slowly a busy machine runs the test."""
    server = ServerProcess(
        "--manual-clock", "--create-table-delay", "60", "--update-table-delay", "60", "--delete-table-delay", "60"
    )
    try:
        yield server
    finally:
        server.stop()


class TestLifecycle:
    def test_creating_active_updating_deleting(self, slow: ServerProcess) -> None:
        ddb = make_client(slow.url)
        name = unique_name("life")
        key = {"pk": {"S": "k"}}
        desc = ddb.create_table(
            TableName=name,
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by_g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                }
            ],
        )["TableDescription"]
        assert desc["TableStatus"] == "CREATING"
        assert desc["GlobalSecondaryIndexes"][0]["IndexStatus"] == "CREATING"
        assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "CREATING"
        # CREATING: data-plane calls do not see the table; control-plane changes are refused.
        assert error_of(lambda: ddb.put_item(TableName=name, Item=key)) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )
        being_created = IN_USE.format(what="created", name=name)
        assert error_of(lambda: ddb.update_table(TableName=name, DeletionProtectionEnabled=True)) == (
            "ResourceInUseException",
            being_created,
        )
        assert error_of(lambda: ddb.delete_table(TableName=name)) == ("ResourceInUseException", being_created)
        assert error_of(
            lambda: ddb.create_table(
                TableName=name,
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                BillingMode="PAY_PER_REQUEST",
            )
        ) == ("ResourceInUseException", f"Table already exists: {name}")

        slow.advance(60)
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
        table = ddb.describe_table(TableName=name)["Table"]
        assert table["TableStatus"] == "ACTIVE"
        assert table["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
        ddb.put_item(TableName=name, Item=key)

        # UPDATING: the old throughput shows until the change is done; items stay writable.
        updated = ddb.update_table(
            TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 10, "WriteCapacityUnits": 5}
        )["TableDescription"]
        assert updated["TableStatus"] == "UPDATING"
        assert updated["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
        ddb.put_item(TableName=name, Item={**key, "v": {"N": "1"}})
        being_updated = IN_USE.format(what="updated", name=name)
        assert error_of(lambda: ddb.update_table(TableName=name, DeletionProtectionEnabled=True)) == (
            "ResourceInUseException",
            being_updated,
        )
        assert error_of(lambda: ddb.delete_table(TableName=name)) == ("ResourceInUseException", being_updated)
        slow.advance(60)
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
        table = ddb.describe_table(TableName=name)["Table"]
        assert table["TableStatus"] == "ACTIVE"
        assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 10
        assert "LastIncreaseDateTime" in table["ProvisionedThroughput"]

        # DELETING: described as DELETING, then gone; the name is taken until then.
        deleted = ddb.delete_table(TableName=name)["TableDescription"]
        assert deleted["TableStatus"] == "DELETING"
        assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "DELETING"
        assert error_of(lambda: ddb.delete_table(TableName=name)) == (
            "ResourceInUseException",
            IN_USE.format(what="deleted", name=name),
        )
        assert error_of(lambda: ddb.get_item(TableName=name, Key=key)) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )
        slow.advance(60)
        ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig=WAIT)
        assert error_of(lambda: ddb.describe_table(TableName=name)) == (
            "ResourceNotFoundException",
            f"Requested resource not found: Table: {name} not found",
        )
        assert name not in ddb.list_tables()["TableNames"]
