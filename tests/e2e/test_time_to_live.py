"""UpdateTimeToLive and DescribeTimeToLive end to end (the setting only; expiry is not implemented yet)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of, unique_name


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
                "1 validation error detected: Value null at 'timeToLiveSpecification' failed to satisfy constraint: "
                "Member must not be null",
            ),
            (
                {"TableName": "abc", "TimeToLiveSpecification": {"Enabled": True}},
                "1 validation error detected: Value null at 'timeToLiveSpecification.attributeName' failed to "
                "satisfy constraint: Member must not be null",
            ),
            (
                {"TableName": "abc", "TimeToLiveSpecification": {"AttributeName": "x"}},
                "1 validation error detected: Value null at 'timeToLiveSpecification.enabled' failed to "
                "satisfy constraint: Member must not be null",
            ),
            (
                {"TableName": "abc", "TimeToLiveSpecification": {"AttributeName": "", "Enabled": True}},
                "1 validation error detected: Value '' at 'timeToLiveSpecification.attributeName' failed to "
                "satisfy constraint: Member must have length greater than or equal to 1",
            ),
            ({}, "The parameter 'TableName' is required but was not present in the request"),
        ],
    )
    def test_update_constraints(self, ddb: Any, kwargs: dict[str, Any], message: str) -> None:
        assert error_of(lambda: ddb.update_time_to_live(**kwargs)) == ("ValidationException", message)

    def test_describe_constraints(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.describe_time_to_live(TableName="ab")) == (
            "ValidationException",
            "TableName must be at least 3 characters long and at most 255 characters long",
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
