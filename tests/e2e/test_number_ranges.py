"""Integer and Long members given JSON numbers past their Java range, through boto3: DynamoDB's deserializer
saturates them at the end of the range (2147483647, 9223372036854775807), so they are validated (and stored) as
that value; never an internal error from a value that does not fit 64 bits (docs/operations.md)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from tests.e2e.conftest import error_of, unique_name

LONG_MAX = 2**63 - 1
PAST_LONG = (2**63, 2**64, 10**30)  # 10**30 reaches the server as a JSON number with 31 digits
WAIT = {"Delay": 0.05, "MaxAttempts": 200}
KEYS: dict[str, Any] = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
}


def _on_demand(ddb: Any, **extra: Any) -> str:
    name = unique_name()
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", **KEYS, **extra)
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
    return name


@pytest.mark.parametrize("value", [LONG_MAX, *PAST_LONG])
def test_create_table_throughput_past_64_bits_is_the_largest_long(ddb: Any, value: int) -> None:
    name = _on_demand(
        ddb,
        OnDemandThroughput={"MaxReadRequestUnits": value, "MaxWriteRequestUnits": value},
        WarmThroughput={"ReadUnitsPerSecond": value, "WriteUnitsPerSecond": value},
    )
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["OnDemandThroughput"] == {"MaxReadRequestUnits": LONG_MAX, "MaxWriteRequestUnits": LONG_MAX}
    assert table["WarmThroughput"] == {
        "ReadUnitsPerSecond": LONG_MAX,
        "WriteUnitsPerSecond": LONG_MAX,
        "Status": "ACTIVE",
    }


@pytest.mark.parametrize("value", PAST_LONG)
def test_update_table_throughput_past_64_bits_is_the_largest_long(ddb: Any, value: int) -> None:
    name = _on_demand(ddb)
    ddb.update_table(TableName=name, OnDemandThroughput={"MaxReadRequestUnits": value})
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
    ddb.update_table(TableName=name, WarmThroughput={"WriteUnitsPerSecond": value})
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=WAIT)
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["OnDemandThroughput"]["MaxReadRequestUnits"] == LONG_MAX
    assert table["WarmThroughput"]["WriteUnitsPerSecond"] == LONG_MAX


@pytest.mark.parametrize("value", [LONG_MAX, *PAST_LONG])
def test_provisioned_throughput_past_64_bits_is_out_of_bounds(ddb: Any, value: int) -> None:
    create = partial(
        ddb.create_table,
        TableName=unique_name(),
        ProvisionedThroughput={"ReadCapacityUnits": value, "WriteCapacityUnits": 1},
        **KEYS,
    )
    assert error_of(create) == (
        "ValidationException",
        f"Given value {LONG_MAX} for ReadCapacityUnits is out of bounds",
    )


@pytest.mark.parametrize("value", [2**31, 2**63 - 1, *PAST_LONG])
def test_integer_members_past_their_range_are_the_largest_integer(ddb: Any, ddb_old_form: Any, value: int) -> None:
    """The older form echoes the value validated: the end of the Integer range, whatever was sent."""
    assert error_of(partial(ddb_old_form.list_tables, Limit=value)) == (
        "ValidationException",
        "1 validation error detected: Value '2147483647' at 'limit' failed to satisfy constraint: "
        "Member must have value less than or equal to 100",
    )
    assert error_of(partial(ddb_old_form.list_tables, Limit=-value)) == (
        "ValidationException",
        "1 validation error detected: Value '-2147483648' at 'limit' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1",
    )
    assert error_of(partial(ddb.list_tables, Limit=value)) == (
        "ValidationException",
        "1 validation error detected: Value at 'Limit' failed to satisfy constraint: "
        "Member must have value less than or equal to 100",
    )
