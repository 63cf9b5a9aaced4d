"""ExpressionAttributeNames/Values are validated the same way by every operation that takes them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import error_of

OPERATIONS: dict[str, dict[str, Any]] = {
    "put_item": {"Item": {"pk": {"S": "maps"}}, "ConditionExpression": "#a <> :v"},
    "update_item": {"Key": {"pk": {"S": "maps"}}, "UpdateExpression": "SET #a = :v"},
    "delete_item": {"Key": {"pk": {"S": "maps"}}, "ConditionExpression": "#a <> :v"},
    "scan": {"FilterExpression": "#a <> :v"},
}
NAMES = {"#a": "a"}

CASES = [
    (
        {"ExpressionAttributeNames": {}, "ExpressionAttributeValues": {":v": {"S": "x"}}},
        "1 validation error detected: ExpressionAttributeNames must not be empty",
    ),
    (
        {"ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": {}},
        "1 validation error detected: ExpressionAttributeValues must not be empty",
    ),
    (
        {"ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": {":v": {}}},
        "1 validation error detected: "
        "ExpressionAttributeValues contains invalid value: Supplied AttributeValue is empty, must contain exactly one"
        " of the supported datatypes for key :v",
    ),
    (
        {"ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": {":v": {"N": "abc"}}},
        "1 validation error detected: "
        "ExpressionAttributeValues contains invalid value: The parameter cannot be converted to a numeric value: abc"
        " for key :v",
    ),
    (
        {"ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": {":v": {"SS": []}}},
        "1 validation error detected: "
        "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: An string set "
        " may not be empty for key :v",
    ),
    (
        {"ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": {"v": {"S": "x"}}},
        '1 validation error detected: ExpressionAttributeValues contains invalid key: Syntax error; key: "v"',
    ),
]


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize(("maps", "message"), CASES)
def test_malformed_maps_are_rejected_and_nothing_is_written(
    ddb: Any, table_s: str, operation: str, maps: dict[str, Any], message: str
) -> None:
    call = getattr(ddb, operation)
    assert error_of(lambda: call(TableName=table_s, **OPERATIONS[operation], **maps)) == (
        "ValidationException",
        message,
    )
    assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "maps"}}, ConsistentRead=True)


def test_transaction_actions_validate_their_maps(ddb: Any, table_s: str) -> None:
    action = {
        "TableName": table_s,
        "Key": {"pk": {"S": "maps"}},
        "UpdateExpression": "SET a = :v",
        "ExpressionAttributeValues": {":v": {"N": "1e999"}},
    }
    assert error_of(lambda: ddb.transact_write_items(TransactItems=[{"Update": action}])) == (
        "ValidationException",
        "1 validation error detected: "
        "ExpressionAttributeValues contains invalid value: Number overflow. Attempting to store a number with"
        " magnitude larger than supported range for key :v",
    )
