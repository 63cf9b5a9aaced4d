"""UpdateExpression / AttributeUpdates semantics as DynamoDB has them, through boto3: what creates an item,
nested paths on missing items and through non-containers, list appends, function placement, names, list
index bounds and projections into key attributes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.e2e.conftest import error_of

INVALID_PATH = "The document path provided in the update expression is invalid for update"


def _key() -> dict[str, Any]:
    return {"pk": {"S": f"u-{uuid.uuid4().hex[:8]}"}}


def _stored(ddb: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    item: dict[str, Any] | None = ddb.get_item(TableName=table, Key=key).get("Item")
    return item


class TestMissingItem:
    @pytest.mark.parametrize(
        "request_",
        [
            {"UpdateExpression": "REMOVE a"},
            {"UpdateExpression": "REMOVE a.b, c[0]"},
            {"UpdateExpression": "DELETE s :v", "ExpressionAttributeValues": {":v": {"SS": ["x"]}}},
            {"UpdateExpression": "DELETE m.s :v", "ExpressionAttributeValues": {":v": {"SS": ["x"]}}},
            {"AttributeUpdates": {"a": {"Action": "DELETE"}}},
            {"AttributeUpdates": {"s": {"Action": "DELETE", "Value": {"SS": ["x"]}}}},
        ],
    )
    def test_removing_or_deleting_creates_nothing(self, ddb: Any, table_s: str, request_: dict[str, Any]) -> None:
        key = _key()
        response = ddb.update_item(TableName=table_s, Key=key, ReturnValues="ALL_NEW", **request_)
        assert "Attributes" not in response
        assert _stored(ddb, table_s, key) is None

    def test_set_add_and_an_empty_update_create_it(self, ddb: Any, table_s: str) -> None:
        key = _key()
        ddb.update_item(TableName=table_s, Key=key)
        assert _stored(ddb, table_s, key) == key
        key = _key()
        ddb.update_item(
            TableName=table_s,
            Key=key,
            UpdateExpression="REMOVE a ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
        assert _stored(ddb, table_s, key) == {**key, "n": {"N": "1"}}

    def test_set_of_a_nested_path_is_still_invalid(self, ddb: Any, table_s: str) -> None:
        key = _key()
        code, text = error_of(
            lambda: ddb.update_item(
                TableName=table_s,
                Key=key,
                UpdateExpression="SET a.b = :v",
                ExpressionAttributeValues={":v": {"N": "1"}},
            )
        )
        assert (code, text) == ("ValidationException", INVALID_PATH)


class TestNestedPaths:
    @pytest.mark.parametrize(
        ("expression", "value"),
        [
            ("DELETE s.x :v", {"SS": ["x"]}),
            ("DELETE s[0] :v", {"SS": ["x"]}),
            ("DELETE l.x :v", {"SS": ["x"]}),
            ("DELETE m[0] :v", {"SS": ["x"]}),
            ("ADD s.x :v", {"N": "1"}),
            ("ADD l.x :v", {"N": "1"}),
            ("ADD m[0] :v", {"N": "1"}),
        ],
    )
    def test_through_a_container_of_the_wrong_kind(
        self, ddb: Any, table_s: str, expression: str, value: dict[str, Any]
    ) -> None:
        key = _key()
        item = {**key, "s": {"S": "x"}, "l": {"L": []}, "m": {"M": {}}}
        ddb.put_item(TableName=table_s, Item=item)
        code, text = error_of(
            lambda: ddb.update_item(
                TableName=table_s, Key=key, UpdateExpression=expression, ExpressionAttributeValues={":v": value}
            )
        )
        assert (code, text) == ("ValidationException", INVALID_PATH)
        assert _stored(ddb, table_s, key) == item

    def test_list_elements_set_past_the_end_are_appended_in_index_order(self, ddb: Any, table_s: str) -> None:
        key = _key()
        ddb.put_item(TableName=table_s, Item={**key, "a": {"L": [{"S": "one"}]}})
        ddb.update_item(
            TableName=table_s,
            Key=key,
            UpdateExpression="SET a[84] = :a, a[37] = :b, a[17] = :c, a[50] = :d",
            ExpressionAttributeValues={":a": {"S": "a"}, ":b": {"S": "b"}, ":c": {"S": "c"}, ":d": {"S": "d"}},
        )
        stored = _stored(ddb, table_s, key)
        assert stored is not None
        assert stored["a"] == {"L": [{"S": "one"}, {"S": "c"}, {"S": "b"}, {"S": "d"}, {"S": "a"}]}


class TestFunctions:
    @pytest.mark.parametrize(
        ("kind", "request_", "message"),
        [
            (
                "UpdateExpression",
                {"UpdateExpression": "SET a = size(b)"},
                "The function is not allowed in an update expression; function: size",
            ),
            (
                "UpdateExpression",
                {"UpdateExpression": "SET a = attribute_exists(b)"},
                "The function is not allowed in an update expression; function: attribute_exists",
            ),
            (
                "ConditionExpression",
                {"ConditionExpression": "if_not_exists(a, :v) = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}},
                "The function is not allowed in a condition expression; function: if_not_exists",
            ),
            (
                "UpdateExpression",
                {
                    "UpdateExpression": "SET a = list_append(list_append(:v, :v), :v)",
                    "ExpressionAttributeValues": {":v": {"L": []}},
                },
                "The function is not allowed to be used this way in an expression; function: list_append",
            ),
            (
                "UpdateExpression",
                {"UpdateExpression": "SET a = f(b)"},
                "Invalid function name; function: f",
            ),
        ],
    )
    def test_placement(self, ddb: Any, table_s: str, kind: str, request_: dict[str, Any], message: str) -> None:
        code, text = error_of(lambda: ddb.update_item(TableName=table_s, Key=_key(), **request_))
        assert (code, text) == ("ValidationException", f"1 validation error detected: Invalid {kind}: {message}")

    def test_if_not_exists_inside_list_append(self, ddb: Any, table_s: str) -> None:
        key = _key()
        for _ in range(2):
            ddb.update_item(
                TableName=table_s,
                Key=key,
                UpdateExpression="SET a = list_append(if_not_exists(a, :empty), :x)",
                ExpressionAttributeValues={":empty": {"L": []}, ":x": {"L": [{"S": "x"}]}},
            )
        stored = _stored(ddb, table_s, key)
        assert stored is not None
        assert stored["a"] == {"L": [{"S": "x"}, {"S": "x"}]}


class TestNames:
    @pytest.mark.parametrize(
        ("request_", "message"),
        [
            (
                {"UpdateExpression": "SET _a = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}},
                '1 validation error detected: Invalid UpdateExpression: Syntax error; token: "_", near: "SET _a"',
            ),
            (
                {"UpdateExpression": "SET a = _f(b)"},
                '1 validation error detected: Invalid UpdateExpression: Syntax error; token: "_", near: "= _f"',
            ),
            (
                {"ConditionExpression": "attribute_exists(_a)"},
                '1 validation error detected: Invalid ConditionExpression: Syntax error; token: "_", near: "(_a"',
            ),
        ],
    )
    def test_a_name_cannot_start_with_an_underscore(
        self, ddb: Any, table_s: str, request_: dict[str, Any], message: str
    ) -> None:
        assert error_of(lambda: ddb.update_item(TableName=table_s, Key=_key(), **request_)) == (
            "ValidationException",
            message,
        )

    def test_through_a_placeholder_it_can(self, ddb: Any, table_s: str) -> None:
        key = _key()
        ddb.update_item(
            TableName=table_s,
            Key=key,
            UpdateExpression="SET #a = :v",
            ExpressionAttributeNames={"#a": "_a"},
            ExpressionAttributeValues={":v": {"N": "1"}},
        )
        assert _stored(ddb, table_s, key) == {**key, "_a": {"N": "1"}}


class TestLegacyValues:
    @pytest.mark.parametrize(
        "updates",
        [
            {"a": {"Action": "PUT", "Value": {"SS": []}}},
            {"a": {"Action": "ADD", "Value": {"NS": []}}},
            {"a": {"Action": "DELETE", "Value": {"SS": []}}},
        ],
    )
    def test_empty_set_in_attribute_updates(self, ddb: Any, table_s: str, updates: dict[str, Any]) -> None:
        key = _key()
        code, text = error_of(lambda: ddb.update_item(TableName=table_s, Key=key, AttributeUpdates=updates))
        assert code == "ValidationException"
        assert text.startswith("1 validation error detected: One or more parameter values were invalid: An ")
        assert text.endswith(" set  may not be empty")
        assert _stored(ddb, table_s, key) is None

    def test_bad_number_in_attribute_updates(self, ddb: Any, table_s: str) -> None:
        key = _key()
        updates = {"a": {"Action": "PUT", "Value": {"N": "abc"}}}
        code, text = error_of(lambda: ddb.update_item(TableName=table_s, Key=key, AttributeUpdates=updates))
        assert (code, text) == (
            "ValidationException",
            ("1 validation error detected: The parameter cannot be converted to a numeric value: abc"),
        )

    def test_empty_set_in_expected(self, ddb: Any, table_s: str) -> None:
        code, text = error_of(
            lambda: ddb.put_item(TableName=table_s, Item=_key(), Expected={"a": {"Value": {"SS": []}}})
        )
        assert (code, text) == (
            "ValidationException",
            "1 validation error detected: One or more parameter values were invalid: An string set  may not be empty",
        )


class TestPaths:
    @pytest.mark.parametrize("text", ["a[4294967295]", "a[99999999999]", "a[0][12345678901234567890]"])
    def test_list_index_beyond_the_allowable_range(self, ddb: Any, table_s: str, text: str) -> None:
        index = text.rsplit("[", 1)[1].rstrip("]")
        code, message = error_of(lambda: ddb.get_item(TableName=table_s, Key=_key(), ProjectionExpression=text))
        assert (code, message) == (
            "ValidationException",
            "1 validation error detected: Invalid ProjectionExpression: List index is not within the allowable range; "
            f"index: [{index}]",
        )

    def test_largest_list_index_is_accepted(self, ddb: Any, table_s: str) -> None:
        key = _key()
        ddb.put_item(TableName=table_s, Item={**key, "a": {"L": [{"N": "1"}]}})
        assert ddb.get_item(TableName=table_s, Key=key, ProjectionExpression="a[4294967294]")["Item"] == {}

    @pytest.mark.parametrize("text", ["pk.x", "pk[0]", "a, pk.x"])
    def test_projection_into_a_key_attribute(self, ddb: Any, table_s: str, text: str) -> None:
        key = _key()
        message = "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: pk"
        calls = [
            lambda: ddb.get_item(TableName=table_s, Key=key, ProjectionExpression=text),
            lambda: ddb.batch_get_item(RequestItems={table_s: {"Keys": [key], "ProjectionExpression": text}}),
            lambda: ddb.transact_get_items(
                TransactItems=[{"Get": {"TableName": table_s, "Key": key, "ProjectionExpression": text}}]
            ),
        ]
        for call in calls:
            assert error_of(call) == ("ValidationException", message)
