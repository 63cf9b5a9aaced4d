"""UpdateTimeToLive and DescribeTimeToLive end to end, and the expiry of items (a server on a manual clock)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture


def describe(ddb: Any, name: str) -> dict[str, Any]:
    description: dict[str, Any] = ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    return description


def update(ddb: Any, name: str, enabled: bool, attribute: str) -> Any:
    return ddb.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": enabled, "AttributeName": attribute}
    )


class TestValidation:
    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            (
                {"TableName": "abc"},
                "1 validation error detected: Value at 'TimeToLiveSpecification' failed to satisfy constraint: "
                "Member must not be null",
            ),
            (
                {"TableName": "abc", "TimeToLiveSpecification": {"Enabled": True}},
                "1 validation error detected: Value at 'TimeToLiveSpecification.AttributeName' failed to satisfy "
                "constraint: Member must not be null",
            ),
            (
                {"TableName": "abc", "TimeToLiveSpecification": {"AttributeName": "x"}},
                "1 validation error detected: Value at 'TimeToLiveSpecification.Enabled' failed to satisfy "
                "constraint: Member must not be null",
            ),
            (
                {"TableName": "abc", "TimeToLiveSpecification": {"AttributeName": "", "Enabled": True}},
                "1 validation error detected: Value at 'TimeToLiveSpecification.AttributeName' failed to satisfy "
                "constraint: Member must have length greater than or equal to 1",
            ),
            (
                {},
                (
                    "1 validation error detected: "
                    "The parameter 'TableName' is required but was not present in the request"
                ),
            ),
        ],
    )
    def test_update_constraints(self, ddb: Any, kwargs: dict[str, Any], message: str) -> None:
        assert error_of(lambda: ddb.update_time_to_live(**kwargs)) == ("ValidationException", message)

    def test_describe_constraints(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.describe_time_to_live(TableName="ab")) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must have "
            "length greater than or equal to 3",
        )

    def test_missing_table(self, ddb: Any) -> None:
        name = unique_name("missing")
        expected = ("ResourceNotFoundException", f"Requested resource not found: Table: {name} not found")
        assert error_of(lambda: ddb.describe_time_to_live(TableName=name)) == expected
        assert error_of(lambda: update(ddb, name, True, "exp")) == expected


class TestFunctionality:
    def test_enable_disable_cycle(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        try:
            assert describe(ddb, name) == {"TimeToLiveStatus": "DISABLED"}
            assert error_of(lambda: update(ddb, name, False, "exp")) == (
                "ValidationException",
                "TimeToLive is already disabled",
            )
            response = update(ddb, name, True, "exp")
            assert response["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "exp"}
            assert describe(ddb, name) == {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
            assert error_of(lambda: update(ddb, name, True, "exp")) == (
                "ValidationException",
                "TimeToLive is already enabled",
            )
            different = (
                "ValidationException",
                "TimeToLive is active on a different AttributeName: current AttributeName is exp",
            )
            assert error_of(lambda: update(ddb, name, True, "other")) == different
            assert error_of(lambda: update(ddb, name, False, "other")) == different
            response = update(ddb, name, False, "exp")
            assert response["TimeToLiveSpecification"] == {"Enabled": False, "AttributeName": "exp"}
            assert describe(ddb, name) == {"TimeToLiveStatus": "DISABLED"}
            update(ddb, name, True, "other")
            assert describe(ddb, name) == {"TimeToLiveStatus": "ENABLED", "AttributeName": "other"}
        finally:
            ddb.delete_table(TableName=name)

    def test_setting_does_not_change_the_table(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        try:
            before = ddb.describe_table(TableName=name)["Table"]
            update(ddb, name, True, "exp")
            after = ddb.describe_table(TableName=name)["Table"]
            assert after == before
        finally:
            ddb.delete_table(TableName=name)


# A server whose clock moves only when a test says so (one for the module: starting one costs a second).
manual_clock_server = server_fixture("--manual-clock")


class TestExpiry:
    """Expired items are deleted in the background (within a maintenance pass), their index entries with them;
    items without a Number TTL, or with one more than five years old, stay."""

    @staticmethod
    def keys(ddb: Any, name: str, index: str | None = None) -> set[str]:
        kwargs: dict[str, Any] = {"TableName": name, "ConsistentRead": True}
        if index is not None:
            kwargs = {"TableName": name, "IndexName": index}
        return {item["pk"]["S"] for item in ddb.scan(**kwargs)["Items"]}

    def settled(self, ddb: Any, name: str, expected: set[str], index: str | None = None) -> set[str]:
        """The keys once they equal ``expected`` (the sweep runs every 0.5 s), or as they are after 10 s."""
        deadline = time.monotonic() + 10
        while (found := self.keys(ddb, name, index)) != expected and time.monotonic() < deadline:
            time.sleep(0.05)
        return found

    def test_expired_items_go_and_the_rest_stay(self, manual_clock_server: ServerProcess) -> None:
        ddb = manual_clock_server.ddb
        name = unique_name()
        ddb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by_g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            ],
        )
        update(ddb, name, True, "exp")
        now = int(manual_clock_server.now())
        items = {
            "expired": {"N": str(now - 10)},
            "later": {"N": str(now + 1000)},
            "string": {"S": str(now - 10)},
            "too-old": {"N": str(now - 6 * 365 * 24 * 3600)},
            "no-ttl": None,
        }
        for pk, exp in items.items():
            item = {"pk": {"S": pk}, "g": {"S": "G"}} | ({"exp": exp} if exp is not None else {})
            ddb.put_item(TableName=name, Item=item)
        stay = {"later", "string", "too-old", "no-ttl"}
        assert self.settled(ddb, name, stay) == stay
        assert self.settled(ddb, name, stay, "by_g") == stay
        manual_clock_server.advance(1001)
        assert self.settled(ddb, name, stay - {"later"}) == stay - {"later"}
        assert self.settled(ddb, name, stay - {"later"}, "by_g") == stay - {"later"}
        assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 3

    def test_a_disabled_ttl_deletes_nothing(self, manual_clock_server: ServerProcess) -> None:
        ddb = manual_clock_server.ddb
        disabled, witness = create_table(ddb), create_table(ddb)
        update(ddb, disabled, True, "exp")
        update(ddb, disabled, False, "exp")
        update(ddb, witness, True, "exp")
        expired = {"N": str(int(manual_clock_server.now()) - 10)}
        ddb.put_item(TableName=disabled, Item={"pk": {"S": "old"}, "exp": expired})
        ddb.put_item(TableName=witness, Item={"pk": {"S": "old"}, "exp": expired})
        assert self.settled(ddb, witness, set()) == set()  # a sweep pass visited every table
        assert self.keys(ddb, disabled) == {"old"}
