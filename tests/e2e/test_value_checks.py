"""Every AttributeValue, attribute name and key value of every parameter is checked before it is used or stored:
numbers at and past DynamoDB's range whatever their exponent's size, empty and oversize attribute names,
malformed values in legacy parameters, index key attributes over their size limits, Query key values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import error_of, unique_name

PREFIX = "1 validation error detected: "

OVERFLOW = (
    "1 validation error detected: "
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
)
UNDERFLOW = (
    "1 validation error detected: "
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"
)
PRECISION = "Attempting to store more than 38 significant digits in a Number"
NAME_EMPTY = "1 validation error detected: Empty attribute name"
NAME_TOO_LARGE = "1 validation error detected: Attribute name is too large, must be less than 65536 bytes"
HASH_TOO_LONG = (
    "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes"
)
RANGE_TOO_LONG = (
    "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of "
    "1024 bytes"
)
EMPTY_KEY = (
    "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty "
    "string value. Key: {name}"
)


def validation(call: Callable[[], Any]) -> str:
    code, message = error_of(call)
    assert code == "ValidationException"
    return message


def stored(ddb: Any, table: str, pk: str) -> Any:
    return ddb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True).get("Item")


@pytest.fixture(scope="module")
def indexed(ddb: Any) -> str:
    """pk/sk strings, a GSI on g (hash) / h (range), an LSI on l, a multi-attribute GSI on m1+m2 / r1."""
    name = unique_name()
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": attr, "AttributeType": "S"} for attr in ("pk", "sk", "g", "h", "l", "m1", "m2", "r1")
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "h", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "by_m",
                "KeySchema": [
                    {"AttributeName": "m1", "KeyType": "HASH"},
                    {"AttributeName": "m2", "KeyType": "HASH"},
                    {"AttributeName": "r1", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "by_l",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    return name


class TestNumbers:
    @pytest.mark.parametrize(
        ("number", "message"),
        [
            ("1e100000000", OVERFLOW),
            ("1e9999999999999999999", OVERFLOW),
            ("1.0e100000000", OVERFLOW),
            ("1E126", OVERFLOW),
            ("-1e-100000000", UNDERFLOW),
            ("1e-9999999999999999999", UNDERFLOW),
            ("1E-131", UNDERFLOW),
            ("1e-" + "0" * 5000 + "200", UNDERFLOW),
        ],
    )
    def test_out_of_range_numbers_are_refused_everywhere(
        self, ddb: Any, table_s: str, number: str, message: str
    ) -> None:
        value = {"N": number}
        calls: list[Callable[[], Any]] = [
            lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "num"}, "n": value}),
            lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "num"}, "l": {"L": [{"M": {"x": value}}]}}),
            lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "num"}, "ns": {"NS": ["1", number]}}),
            lambda: ddb.update_item(
                TableName=table_s, Key={"pk": {"S": "num"}}, AttributeUpdates={"n": {"Value": value}}
            ),
            lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "num"}}, Expected={"n": {"Value": value}}),
            lambda: ddb.put_item(
                TableName=table_s,
                Item={"pk": {"S": "num"}},
                Expected={"n": {"ComparisonOperator": "EQ", "AttributeValueList": [value]}},
            ),
            lambda: ddb.scan(
                TableName=table_s, ScanFilter={"n": {"ComparisonOperator": "EQ", "AttributeValueList": [value]}}
            ),
            lambda: ddb.query(
                TableName=table_s,
                KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "num"}]}},
                QueryFilter={"n": {"ComparisonOperator": "GT", "AttributeValueList": [value]}},
            ),
        ]
        for call in calls:
            assert validation(call) == message
        assert (
            validation(
                lambda: ddb.put_item(
                    TableName=table_s,
                    Item={"pk": {"S": "num"}},
                    ConditionExpression="n = :v",
                    ExpressionAttributeValues={":v": value},
                )
            )
            == f"{PREFIX}ExpressionAttributeValues contains invalid value: {message.removeprefix(PREFIX)} for key :v"
        )
        assert stored(ddb, table_s, "num") is None

    def test_numbers_at_the_limits_are_stored_canonical(self, ddb: Any, table_s: str) -> None:
        largest = "9.9999999999999999999999999999999999999E+125"
        ddb.put_item(
            TableName=table_s,
            Item={
                "pk": {"S": "num-limits"},
                "big": {"N": largest},
                "small": {"N": "-1E-130"},
                "zero": {"N": "0e999999999999"},
                "padded": {"N": "1.5e+" + "0" * 5000 + "2"},
            },
        )
        item = stored(ddb, table_s, "num-limits")
        assert item["big"] == {"N": "99999999999999999999999999999999999999" + "0" * 88}
        assert item["small"] == {"N": "-0." + "0" * 129 + "1"}
        assert item["zero"] == {"N": "0"}
        assert item["padded"] == {"N": "150"}

    def test_key_condition_and_start_key_numbers(self, ddb: Any, table_sn: str) -> None:
        assert (
            validation(
                lambda: ddb.query(
                    TableName=table_sn,
                    KeyConditions={
                        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
                        "sk": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1e100000000"}]},
                    },
                )
            )
            == OVERFLOW
        )
        assert (
            validation(
                lambda: ddb.query(
                    TableName=table_sn,
                    KeyConditionExpression="pk = :p",
                    ExpressionAttributeValues={":p": {"S": "a"}},
                    ExclusiveStartKey={"pk": {"S": "a"}, "sk": {"N": "-1e-100000000"}},
                )
            )
            == UNDERFLOW  # number problems in a start key are not prefixed
        )


class TestLegacyValues:
    def test_malformed_attribute_updates_value_is_refused_and_nothing_stored(self, ddb: Any, table_s: str) -> None:
        assert (
            validation(
                lambda: ddb.update_item(
                    TableName=table_s,
                    Key={"pk": {"S": "legacy"}},
                    AttributeUpdates={"y": {"Value": {"L": [{"N": "abc"}]}, "Action": "PUT"}},
                )
            )
            == "1 validation error detected: The parameter cannot be converted to a numeric value: abc"
        )
        assert stored(ddb, table_s, "legacy") is None

    @pytest.mark.parametrize(
        ("value", "message"),
        [
            (
                {"L": [{"N": "x"}]},
                ("1 validation error detected: The parameter cannot be converted to a numeric value: x"),
            ),
            (
                {},
                (
                    "1 validation error detected: "
                    "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
                ),
            ),
            (
                {"SS": []},
                (
                    "1 validation error detected: "
                    "One or more parameter values were invalid: An string set  may not be empty"
                ),
            ),
        ],
    )
    def test_malformed_values_in_conditions(self, ddb: Any, table_s: str, value: Any, message: str) -> None:
        calls: list[Callable[[], Any]] = [
            lambda: ddb.delete_item(
                TableName=table_s,
                Key={"pk": {"S": "legacy"}},
                Expected={"a": {"ComparisonOperator": "EQ", "AttributeValueList": [value]}},
            ),
            lambda: ddb.update_item(
                TableName=table_s,
                Key={"pk": {"S": "legacy"}},
                AttributeUpdates={"b": {"Value": {"S": "x"}}},
                Expected={"a": {"Value": value}},
            ),
            lambda: ddb.scan(
                TableName=table_s, ScanFilter={"a": {"ComparisonOperator": "EQ", "AttributeValueList": [value]}}
            ),
        ]
        for call in calls:
            assert validation(call) == message
        assert stored(ddb, table_s, "legacy") is None


class TestAttributeNames:
    @pytest.mark.parametrize(("name", "message"), [("", NAME_EMPTY), ("x" * 65536, NAME_TOO_LARGE)])
    def test_refused_in_items_and_legacy_parameters(self, ddb: Any, table_s: str, name: str, message: str) -> None:
        key = {"pk": {"S": "names"}}
        calls: list[Callable[[], Any]] = [
            lambda: ddb.put_item(TableName=table_s, Item={**key, name: {"S": "v"}}),
            lambda: ddb.put_item(TableName=table_s, Item={**key, "m": {"M": {"ok": {"M": {name: {"N": "1"}}}}}}),
            lambda: ddb.batch_write_item(RequestItems={table_s: [{"PutRequest": {"Item": {**key, name: {"S": "v"}}}}]}),
            lambda: ddb.update_item(TableName=table_s, Key=key, AttributeUpdates={name: {"Value": {"S": "v"}}}),
            lambda: ddb.put_item(TableName=table_s, Item=key, Expected={name: {"Exists": False}}),
            lambda: ddb.get_item(TableName=table_s, Key=key, AttributesToGet=[name]),
            lambda: ddb.scan(TableName=table_s, AttributesToGet=["a", name]),
            lambda: ddb.scan(
                TableName=table_s, ScanFilter={name: {"ComparisonOperator": "NULL", "AttributeValueList": []}}
            ),
            lambda: ddb.put_item(
                TableName=table_s,
                Item=key,
                ConditionExpression="a = :v",
                ExpressionAttributeValues={":v": {"M": {name: {"S": "x"}}}},
            ),
        ]
        for call in calls:
            assert validation(call) == message
        assert stored(ddb, table_s, "names") is None

    def test_expression_attribute_names(self, ddb: Any, table_s: str) -> None:
        key = {"pk": {"S": "names"}}
        assert validation(
            lambda: ddb.update_item(
                TableName=table_s,
                Key=key,
                UpdateExpression="SET #n = :v",
                ExpressionAttributeNames={"#n": ""},
                ExpressionAttributeValues={":v": {"S": "x"}},
            )
        ) == (
            "1 validation error detected: "
            "ExpressionAttributeNames contains invalid value: Empty attribute name for key #n"
        )
        # A null name (JSON null; the compiled build once refused it with a TypeError, a 500).
        assert validation(
            lambda: ddb.update_item(
                TableName=table_s, Key=key, UpdateExpression="REMOVE #m", ExpressionAttributeNames={"#m": None}
            )
        ) == (
            "1 validation error detected: "
            "ExpressionAttributeNames contains invalid value: Empty attribute name for key #m"
        )
        assert (
            validation(
                lambda: ddb.get_item(
                    TableName=table_s, Key=key, ProjectionExpression="#n", ExpressionAttributeNames={"#n": "y" * 65536}
                )
            )
            == NAME_TOO_LARGE
        )
        assert stored(ddb, table_s, "names") is None

    def test_longest_name_is_accepted(self, ddb: Any, table_s: str) -> None:
        name = "é" * 32767 + "a"  # 65,535 bytes
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "long-name"}, name: {"S": "v"}})
        got = ddb.get_item(TableName=table_s, Key={"pk": {"S": "long-name"}}, AttributesToGet=[name])
        assert got["Item"] == {name: {"S": "v"}}


class TestIndexKeys:
    @pytest.mark.parametrize(
        ("attribute", "size", "limit", "index"),
        [
            ("g", 2049, 2048, "by_g"),
            ("g", 65535, 2048, "by_g"),
            ("h", 1025, 1024, "by_g"),
            ("l", 1025, 1024, "by_l"),
            ("m2", 2049, 2048, "by_m"),
            ("r1", 1025, 1024, "by_m"),
        ],
    )
    def test_oversize_index_key_is_refused(
        self, ddb: Any, indexed: str, attribute: str, size: int, limit: int, index: str
    ) -> None:
        key = {"pk": {"S": "idx"}, "sk": {"S": "1"}}
        expected = (
            f"One or more parameter values were invalid: Size limit exceeded for Index Key {attribute} "
            f"Actual Size: {size} bytes Max Size: {limit} bytes IndexName: {index}"
        )
        value = {"S": "x" * size}
        calls: list[Callable[[], Any]] = [
            lambda: ddb.put_item(TableName=indexed, Item={**key, attribute: value}),
            lambda: ddb.update_item(
                TableName=indexed,
                Key=key,
                UpdateExpression="SET #a = :v",
                ExpressionAttributeNames={"#a": attribute},
                ExpressionAttributeValues={":v": value},
            ),
            lambda: ddb.update_item(TableName=indexed, Key=key, AttributeUpdates={attribute: {"Value": value}}),
            lambda: ddb.batch_write_item(RequestItems={indexed: [{"PutRequest": {"Item": {**key, attribute: value}}}]}),
        ]
        for call in calls:
            assert validation(call) == expected
        assert ddb.get_item(TableName=indexed, Key=key).get("Item") is None

    def test_index_keys_at_the_limits_are_accepted(self, ddb: Any, indexed: str) -> None:
        item = {
            "pk": {"S": "idx-ok"},
            "sk": {"S": "1"},
            "g": {"S": "€" * 682 + "ab"},  # 2,048 bytes
            "h": {"S": "x" * 1024},
            "l": {"S": "y" * 1024},
        }
        ddb.put_item(TableName=indexed, Item=item)
        found = ddb.query(
            TableName=indexed,
            IndexName="by_l",
            KeyConditionExpression="pk = :p AND l = :l",
            ExpressionAttributeValues={":p": {"S": "idx-ok"}, ":l": {"S": "y" * 1024}},
        )
        assert found["Count"] == 1


class TestQueryKeyValues:
    def test_key_condition_values_get_the_key_checks(self, ddb: Any, table_sn: str, indexed: str) -> None:
        def query(table: str, text: str, values: dict[str, Any], **extra: Any) -> str:
            return validation(
                lambda: ddb.query(
                    TableName=table, KeyConditionExpression=text, ExpressionAttributeValues=values, **extra
                )
            )

        assert query(table_sn, "pk = :p", {":p": {"S": ""}}) == EMPTY_KEY.format(name="pk")
        assert query(table_sn, "pk = :p", {":p": {"S": "x" * 2049}}) == HASH_TOO_LONG
        # The same text again takes the remembered key-condition path: still checked.
        assert query(table_sn, "pk = :p", {":p": {"S": "x" * 2049}}) == HASH_TOO_LONG
        assert query(indexed, "pk = :p AND sk > :s", {":p": {"S": "a"}, ":s": {"S": "x" * 1025}}) == RANGE_TOO_LONG
        assert query(indexed, "g = :g", {":g": {"S": ""}}, IndexName="by_g") == EMPTY_KEY.format(name="g")
        assert (
            query(indexed, "m1 = :a AND m2 = :b", {":a": {"S": "a"}, ":b": {"S": "x" * 2049}}, IndexName="by_m")
            == HASH_TOO_LONG
        )
        legacy = validation(
            lambda: ddb.query(
                TableName=table_sn,
                KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x" * 2049}]}},
            )
        )
        assert legacy == HASH_TOO_LONG

    def test_exclusive_start_key_gets_the_key_checks(self, ddb: Any, table_s: str, indexed: str) -> None:
        def start(table: str, key: dict[str, Any], **extra: Any) -> str:
            return validation(
                lambda: ddb.query(
                    TableName=table,
                    KeyConditionExpression="pk = :p",
                    ExpressionAttributeValues={":p": {"S": "a"}},
                    ExclusiveStartKey=key,
                    **extra,
                )
            )

        assert start(table_s, {"pk": {"S": ""}}) == EMPTY_KEY.format(name="pk")
        assert start(table_s, {"pk": {"S": "x" * 2049}}) == HASH_TOO_LONG
        assert start(table_s, {"pk": {"N": "1"}}) == "The provided key element does not match the schema"
        assert start(table_s, {"pk": {"S": "a"}, "other": {"S": "b"}}) == "The provided starting key is invalid"
        assert start(table_s, {"": {"S": "a"}}) == NAME_EMPTY  # a constraint error: not prefixed
        lsi_key = {"pk": {"S": "a"}, "sk": {"S": "1"}, "l": {"S": "x" * 1025}}
        assert start(indexed, lsi_key, IndexName="by_l") == "The provided starting key is invalid"

    def test_a_gsi_start_key_must_hold_the_table_key_and_the_index_key(self, ddb: Any, indexed: str) -> None:
        def start(key: dict[str, Any]) -> str:
            return validation(
                lambda: ddb.query(
                    TableName=indexed,
                    IndexName="by_g",
                    KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "a"}},
                    ExclusiveStartKey=key,
                )
            )

        table_key, index_key = {"pk": {"S": "a"}, "sk": {"S": "1"}}, {"g": {"S": "a"}, "h": {"S": "1"}}
        size = "Exclusive Start Key must have same size as table's key schema"
        assert start(table_key) == size  # a LastEvaluatedKey of the table
        assert start(index_key) == size
        assert start({**table_key, **index_key, "x": {"S": "1"}}) == size
        assert start({**table_key, "g": {"S": "a"}, "x": {"S": "1"}}) == "The provided starting key is invalid"
        page = ddb.query(
            TableName=indexed,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "a"}},
            ExclusiveStartKey={**table_key, **index_key},
        )
        assert page["Count"] == len(page["Items"])  # both keys: a valid start key


class TestUpdateResults:
    def test_update_cannot_nest_an_item_past_32_levels(self, ddb: Any, table_s: str) -> None:
        def nested(depth: int) -> dict[str, Any]:
            value: dict[str, Any] = {"S": "leaf"}
            for _ in range(depth):
                value = {"M": {"k": value}}
            return value

        key = {"pk": {"S": "deep"}}
        ddb.put_item(TableName=table_s, Item={**key, "m": nested(31)})
        nesting = (
            "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond "
            "supported limit"
        )
        for extra in (
            {},
            {"ConditionExpression": "attribute_exists(m)"},
        ):
            assert (
                validation(
                    lambda extra=extra: ddb.update_item(  # type: ignore[misc]
                        TableName=table_s,
                        Key=key,
                        UpdateExpression="SET " + "m" + ".k" * 30 + " = :v",
                        ExpressionAttributeValues={":v": nested(3)},
                        **extra,
                    )
                )
                == nesting
            )
        code, message = error_of(
            lambda: ddb.transact_write_items(
                TransactItems=[{"Update": {"TableName": table_s, "Key": key, "UpdateExpression": "SET m.k.k = m"}}]
            )
        )
        assert (code, message) == (
            "TransactionCanceledException",
            "Transaction cancelled, please refer cancellation reasons for specific reasons [ValidationError]",
        )
        # Exactly 32 levels is the limit: accepted.
        ddb.update_item(
            TableName=table_s,
            Key=key,
            UpdateExpression="SET " + "m" + ".k" * 30 + " = :v",
            ExpressionAttributeValues={":v": nested(2)},
        )
        assert stored(ddb, table_s, "deep")["m"] == nested(32)
