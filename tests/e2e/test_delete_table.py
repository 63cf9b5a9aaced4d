"""DeleteTable end to end: errors, deletion protection, and a recreated table starting empty."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import create_table, error_of, unique_name

WAIT = {"Delay": 0.05, "MaxAttempts": 100}


def make(ddb: Any, name: str, **extra: Any) -> None:
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)


class TestValidation:
    def test_table_name_required(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.delete_table()) == (
            "ValidationException",
            "1 validation error detected: The parameter 'TableName' is required but was not present in the request",
        )

    def test_table_name_length(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.delete_table(TableName="ab")) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must have "
            "length greater than or equal to 3",
        )

    def test_missing_table(self, ddb: Any) -> None:
        name = unique_name("missing")
        assert error_of(lambda: ddb.delete_table(TableName=name)) == (
            "ResourceNotFoundException",
            f"Requested resource not found: Table: {name} not found",
        )

    def test_deletion_protection(self, ddb: Any) -> None:
        name = unique_name("dp")
        make(ddb, name, DeletionProtectionEnabled=True)
        assert error_of(lambda: ddb.delete_table(TableName=name)) == (
            "ValidationException",
            "Resource cannot be deleted as it is currently protected against deletion. "
            "Disable deletion protection first.",
        )
        assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
        ddb.update_table(TableName=name, DeletionProtectionEnabled=False)
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
        ddb.delete_table(TableName=name)


class TestFunctionality:
    def test_returns_deleting_description(self, ddb: Any) -> None:
        name = create_table(ddb, "S", "N")
        described = ddb.describe_table(TableName=name)["Table"]
        desc = ddb.delete_table(TableName=name)["TableDescription"]
        assert desc["TableStatus"] == "DELETING"
        assert desc["TableName"] == name
        assert desc["TableArn"] == described["TableArn"]
        assert desc["TableId"] == described["TableId"]
        assert desc["ProvisionedThroughput"] == described["ProvisionedThroughput"]
        # DynamoDB leaves the schema, the creation time and the indexes out of DeleteTable's description
        for member in ("KeySchema", "AttributeDefinitions", "CreationDateTime", "WarmThroughput"):
            assert member in described
            assert member not in desc

    def test_table_is_gone(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        ddb.delete_table(TableName=name)
        ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig=WAIT)
        assert error_of(lambda: ddb.put_item(TableName=name, Item={"pk": {"S": "a"}})) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )

    def test_recreated_table_starts_empty(self, ddb: Any) -> None:
        name = unique_name("again")
        make(ddb, name)
        for n in range(30):
            ddb.put_item(TableName=name, Item={"pk": {"S": f"k{n}"}, "v": {"N": str(n)}})
        old_id = ddb.describe_table(TableName=name)["Table"]["TableId"]
        ddb.delete_table(TableName=name)
        ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig=WAIT)
        make(ddb, name)
        try:
            table = ddb.describe_table(TableName=name)["Table"]
            assert table["TableId"] != old_id
            assert table["ItemCount"] == 0
            assert table["TableSizeBytes"] == 0
            assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "k0"}}, ConsistentRead=True)
            ddb.put_item(TableName=name, Item={"pk": {"S": "k1"}})
            item = ddb.get_item(TableName=name, Key={"pk": {"S": "k1"}}, ConsistentRead=True)["Item"]
            assert item == {"pk": {"S": "k1"}}
        finally:
            ddb.delete_table(TableName=name)
