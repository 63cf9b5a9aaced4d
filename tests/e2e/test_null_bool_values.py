"""NULL and BOOL AttributeValues carrying JSON of the wrong type, everywhere an AttributeValue goes.

A string or a number where DynamoDB's deserializer wants a JSON boolean is a SerializationException (the texts of
the top-level Boolean members, which dynalite's matrix recorded against DynamoDB). ``{"NULL": false}`` is
well-formed JSON but refused as a value: DynamoDB briefly accepted it in two regions in 2026 and, by the
2026-07-17 captures, rejects it again everywhere with the text below. Nothing is written in any case.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from tests.e2e.conftest import Send as SendRaw
from tests.e2e.conftest import error_of
from tests.e2e.test_serialization import SERIALIZATION, Raw

FROM_STRING = "Unexpected token received from parser"
FROM_NUMBER = "NUMBER_VALUE cannot be converted to Boolean"
PREFIX = "1 validation error detected: "
NULL_BARE = "One or more parameter values were invalid: Null attribute value types must have the value of true"
NULL_NOT_TRUE = PREFIX + NULL_BARE

WRONG_JSON = [
    ({"NULL": "yes"}, FROM_STRING),
    ({"NULL": "true"}, FROM_STRING),
    ({"NULL": 1}, FROM_NUMBER),
    ({"BOOL": "true"}, FROM_STRING),
    ({"BOOL": 0}, FROM_NUMBER),
    ({"M": {"a": {"BOOL": "false"}}}, FROM_STRING),
    ({"L": [{"NULL": 0}]}, FROM_NUMBER),
]

Send = Callable[[Any, str, dict[str, Any]], Any]


def _put_item(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.put_item(TableName=table, Item={"pk": {"S": "nb"}, "v": value})


def _put_key(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.put_item(TableName=table, Item={"pk": value})


def _get_key(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.get_item(TableName=table, Key={"pk": value})


def _delete_key(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.delete_item(TableName=table, Key={"pk": value})


def _batch_item(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": {"pk": {"S": "nb"}, "v": value}}}]})


def _put_condition(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.put_item(
        TableName=table,
        Item={"pk": {"S": "nb"}},
        ConditionExpression="attribute_not_exists(pk) OR v = :v",
        ExpressionAttributeValues={":v": value},
    )


def _update_value(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.update_item(
        TableName=table, Key={"pk": {"S": "nb"}}, UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": value}
    )


def _scan_filter(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    return ddb.scan(TableName=table, FilterExpression="v = :v", ExpressionAttributeValues={":v": value})


def _transact_update(ddb: Any, table: str, value: dict[str, Any]) -> Any:
    update = {
        "TableName": table,
        "Key": {"pk": {"S": "nb"}},
        "UpdateExpression": "SET v = :v",
        "ExpressionAttributeValues": {":v": value},
    }
    return ddb.transact_write_items(TransactItems=[{"Update": update}])


ITEMS_AND_KEYS: list[Send] = [_put_item, _put_key, _get_key, _delete_key, _batch_item]
EXPRESSION_VALUES: list[Send] = [_put_condition, _update_value, _scan_filter, _transact_update]


def nothing_written(ddb: Any, table: str) -> bool:
    count: int = ddb.scan(TableName=table, ConsistentRead=True)["Count"]
    return count == 0


@pytest.mark.parametrize(("value", "message"), WRONG_JSON)
def test_wrong_json_type_is_a_serialization_error(ddb: Any, table_s: str, value: Any, message: str) -> None:
    for send in ITEMS_AND_KEYS + EXPRESSION_VALUES:
        assert error_of(partial(send, ddb, table_s, value)) == ("SerializationException", message), send.__name__
    assert nothing_written(ddb, table_s)


def test_null_false_is_refused(ddb: Any, table_s: str) -> None:
    for send in ITEMS_AND_KEYS:
        assert error_of(partial(send, ddb, table_s, {"NULL": False})) == ("ValidationException", NULL_NOT_TRUE)
    wrapped = f"{PREFIX}ExpressionAttributeValues contains invalid value: {NULL_BARE} for key :v"
    for send in EXPRESSION_VALUES:
        assert error_of(partial(send, ddb, table_s, {"NULL": False})) == ("ValidationException", wrapped)
    assert nothing_written(ddb, table_s)


def test_well_typed_values_still_round_trip(ddb: Any, table_s: str) -> None:
    item = {"pk": {"S": "nb-ok"}, "n": {"NULL": True}, "t": {"BOOL": True}, "f": {"BOOL": False}}
    ddb.put_item(TableName=table_s, Item=item)
    assert ddb.get_item(TableName=table_s, Key={"pk": {"S": "nb-ok"}}, ConsistentRead=True)["Item"] == item
    ddb.delete_item(TableName=table_s, Key={"pk": {"S": "nb-ok"}})


@pytest.fixture(scope="module")
def raw(send: SendRaw) -> Raw:
    return Raw(send)


def test_raw_requests(raw: Raw, table_s: str) -> None:
    """The same answers to hand-written JSON, with DynamoDB's fully qualified error types (a validation error's
    text is under ``message``, a serialization error's under ``Message``)."""
    validation = "com.amazon.coral.validate#ValidationException"
    cases = [
        ({"NULL": "yes"}, {"__type": SERIALIZATION, "Message": FROM_STRING}),
        ({"BOOL": 1}, {"__type": SERIALIZATION, "Message": FROM_NUMBER}),
        ({"NULL": False}, {"__type": validation, "message": NULL_NOT_TRUE}),
    ]
    for value, answer in cases:
        assert raw.call("PutItem", {"TableName": table_s, "Item": {"pk": {"S": "nb"}, "v": value}}) == (400, answer)
        assert raw.call("GetItem", {"TableName": table_s, "Key": {"pk": value}}) == (400, answer)
