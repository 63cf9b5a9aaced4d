"""PutItem, GetItem, UpdateItem and DeleteItem end to end through boto3."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import error_of

ALL_TYPES_ITEM = {
    "pk": {"S": "all-types"},
    "s": {"S": "héllo"},
    "n": {"N": "-12.5"},
    "b": {"B": b"\x00\x01\xff"},
    "bool": {"BOOL": True},
    "null": {"NULL": True},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2.5"]},
    "bs": {"BS": [b"x", b"y"]},
    "l": {"L": [{"S": "x"}, {"N": "1"}, {"L": []}, {"M": {}}]},
    "m": {"M": {"nested": {"M": {"deep": {"S": "yes"}}}, "empty": {"S": ""}}},
    "empty_s": {"S": ""},
    "empty_b": {"B": b""},
}


class TestFunctionality:
    def test_put_then_get_every_type(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item=ALL_TYPES_ITEM)
        item = ddb.get_item(TableName=table_s, Key={"pk": {"S": "all-types"}}, ConsistentRead=True)["Item"]
        assert item["s"] == {"S": "héllo"}
        assert item["n"] == {"N": "-12.5"}
        assert item["b"] == {"B": b"\x00\x01\xff"}
        assert sorted(item["ss"]["SS"]) == ["a", "b"]
        assert sorted(item["ns"]["NS"]) == ["1", "2.5"]
        assert item["l"] == ALL_TYPES_ITEM["l"]
        assert item["m"] == ALL_TYPES_ITEM["m"]
        assert item["empty_s"] == {"S": ""}
        assert item["empty_b"] == {"B": b""}
        assert item["null"] == {"NULL": True}

    def test_numbers_come_back_canonical(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(
            TableName=table_s,
            Item={
                "pk": {"S": "nums"},
                "a": {"N": "1E+2"},
                "b": {"N": "1.50"},
                "c": {"N": "-0.0"},
                "d": {"N": "0.001e3"},
            },
        )
        item = ddb.get_item(TableName=table_s, Key={"pk": {"S": "nums"}})["Item"]
        assert [item[k]["N"] for k in "abcd"] == ["100", "1.5", "0", "1"]

    def test_get_missing_item_returns_no_item(self, ddb: Any, table_s: str) -> None:
        response = ddb.get_item(TableName=table_s, Key={"pk": {"S": "nobody"}})
        assert "Item" not in response

    def test_put_returns_all_old(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "rv"}, "v": {"N": "1"}})
        response = ddb.put_item(TableName=table_s, Item={"pk": {"S": "rv"}, "v": {"N": "2"}}, ReturnValues="ALL_OLD")
        assert response["Attributes"] == {"pk": {"S": "rv"}, "v": {"N": "1"}}

    def test_condition_expression_guards_put(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "cond"}, "v": {"N": "1"}})
        code, message = error_of(
            lambda: ddb.put_item(
                TableName=table_s,
                Item={"pk": {"S": "cond"}, "v": {"N": "9"}},
                ConditionExpression="attribute_not_exists(pk)",
            )
        )
        assert (code, message) == ("ConditionalCheckFailedException", "The conditional request failed")
        item = ddb.get_item(TableName=table_s, Key={"pk": {"S": "cond"}})["Item"]
        assert item["v"] == {"N": "1"}

    def test_condition_failure_returns_old_item_when_asked(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "ccf"}, "v": {"N": "1"}})
        from botocore.exceptions import ClientError

        try:
            ddb.delete_item(
                TableName=table_s,
                Key={"pk": {"S": "ccf"}},
                ConditionExpression="v = :two",
                ExpressionAttributeValues={":two": {"N": "2"}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ConditionalCheckFailedException"
            assert e.response["Item"] == {"pk": {"S": "ccf"}, "v": {"N": "1"}}
        else:
            raise AssertionError("the delete should have failed its condition")

    def test_update_set_add_remove_and_return_values(self, ddb: Any, table_sn: str) -> None:
        key = {"pk": {"S": "u"}, "sk": {"N": "1"}}
        response = ddb.update_item(
            TableName=table_sn,
            Key=key,
            UpdateExpression="SET #c = :one, tags = :tags, info = :info ADD visits :one",
            ExpressionAttributeNames={"#c": "count"},
            ExpressionAttributeValues={
                ":one": {"N": "1"},
                ":tags": {"SS": ["x"]},
                ":info": {"M": {"a": {"L": [{"N": "1"}, {"N": "2"}]}}},
            },
            ReturnValues="ALL_NEW",
        )
        assert response["Attributes"]["count"] == {"N": "1"}
        assert response["Attributes"]["visits"] == {"N": "1"}
        response = ddb.update_item(
            TableName=table_sn,
            Key=key,
            UpdateExpression="SET #c = #c + :five, info.a[1] = :ten REMOVE tags ADD visits :five",
            ExpressionAttributeNames={"#c": "count"},
            ExpressionAttributeValues={":five": {"N": "5"}, ":ten": {"N": "10"}},
            ReturnValues="UPDATED_NEW",
        )
        assert response["Attributes"] == {
            "count": {"N": "6"},
            "info": {"M": {"a": {"L": [{"N": "10"}]}}},
            "visits": {"N": "6"},
        }
        item = ddb.get_item(TableName=table_sn, Key=key)["Item"]
        assert "tags" not in item
        assert item["info"] == {"M": {"a": {"L": [{"N": "1"}, {"N": "10"}]}}}

    def test_update_creates_missing_item(self, ddb: Any, table_sn: str) -> None:
        key = {"pk": {"S": "fresh"}, "sk": {"N": "2"}}
        ddb.update_item(
            TableName=table_sn,
            Key=key,
            UpdateExpression="SET v = :v",
            ExpressionAttributeValues={":v": {"S": "x"}},
        )
        assert ddb.get_item(TableName=table_sn, Key=key)["Item"] == {**key, "v": {"S": "x"}}

    def test_delete_returns_old_and_removes(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "del"}, "v": {"S": "x"}})
        response = ddb.delete_item(TableName=table_s, Key={"pk": {"S": "del"}}, ReturnValues="ALL_OLD")
        assert response["Attributes"] == {"pk": {"S": "del"}, "v": {"S": "x"}}
        assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "del"}})

    def test_projection_expression(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item=ALL_TYPES_ITEM)
        item = ddb.get_item(
            TableName=table_s,
            Key={"pk": {"S": "all-types"}},
            ProjectionExpression="#m.nested.deep, l[0], s",
            ExpressionAttributeNames={"#m": "m"},
        )["Item"]
        assert item == {
            "m": {"M": {"nested": {"M": {"deep": {"S": "yes"}}}}},
            "l": {"L": [{"S": "x"}]},
            "s": {"S": "héllo"},
        }

    def test_attributes_to_get(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item=ALL_TYPES_ITEM)
        item = ddb.get_item(TableName=table_s, Key={"pk": {"S": "all-types"}}, AttributesToGet=["s", "n"])["Item"]
        assert item == {"s": {"S": "héllo"}, "n": {"N": "-12.5"}}

    def test_consumed_capacity(self, ddb: Any, table_s: str) -> None:
        response = ddb.put_item(
            TableName=table_s,
            Item={"pk": {"S": "cap"}, "v": {"S": "x" * 1500}},
            ReturnConsumedCapacity="TOTAL",
        )
        assert response["ConsumedCapacity"] == {"TableName": table_s, "CapacityUnits": 2.0}
        response = ddb.get_item(TableName=table_s, Key={"pk": {"S": "cap"}}, ReturnConsumedCapacity="TOTAL")
        assert response["ConsumedCapacity"] == {"TableName": table_s, "CapacityUnits": 0.5}
        response = ddb.get_item(
            TableName=table_s, Key={"pk": {"S": "cap"}}, ConsistentRead=True, ReturnConsumedCapacity="INDEXES"
        )
        assert response["ConsumedCapacity"] == {
            "TableName": table_s,
            "CapacityUnits": 1.0,
            "Table": {"CapacityUnits": 1.0},
        }
        response = ddb.get_item(TableName=table_s, Key={"pk": {"S": "none"}}, ReturnConsumedCapacity="TOTAL")
        assert response["ConsumedCapacity"] == {"TableName": table_s, "CapacityUnits": 0.5}

    def test_legacy_expected_and_attribute_updates(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "legacy"}, "v": {"N": "1"}})
        ddb.update_item(
            TableName=table_s,
            Key={"pk": {"S": "legacy"}},
            AttributeUpdates={
                "v": {"Action": "ADD", "Value": {"N": "2"}},
                "w": {"Action": "PUT", "Value": {"S": "x"}},
            },
            Expected={"v": {"Value": {"N": "1"}}},
        )
        item = ddb.get_item(TableName=table_s, Key={"pk": {"S": "legacy"}})["Item"]
        assert item == {"pk": {"S": "legacy"}, "v": {"N": "3"}, "w": {"S": "x"}}
        code, _ = error_of(
            lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "legacy"}}, Expected={"v": {"Exists": False}})
        )
        assert code == "ConditionalCheckFailedException"


class TestValidation:
    def test_missing_table(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.get_item(TableName="nope_nope", Key={"pk": {"S": "a"}})) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )

    def test_missing_key_in_item(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item={"x": {"S": "a"}})) == (
            "ValidationException",
            "One or more parameter values were invalid: Missing the key pk in the item",
        )

    def test_key_type_mismatch(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item={"pk": {"N": "1"}})) == (
            "ValidationException",
            "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N",
        )

    def test_key_does_not_match_schema(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.get_item(TableName=table_s, Key={"pk": {"S": "a"}, "x": {"S": "b"}})) == (
            "ValidationException",
            "The provided key element does not match the schema",
        )

    def test_empty_string_key(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": ""}})) == (
            "ValidationException",
            "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
            "empty string value. Key: pk",
        )

    def test_put_return_values(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "a"}}, ReturnValues="ALL_NEW")) == (
            "ValidationException",
            "1 validation error detected: ReturnValues can only be ALL_OLD or NONE",
        )

    def test_item_too_large(self, ddb: Any, table_s: str) -> None:
        item = {"pk": {"S": "big"}, "v": {"S": "x" * 409_600}}
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item=item)) == (
            "ValidationException",
            "Item size has exceeded the maximum allowed size",
        )

    def test_item_of_exactly_the_limit_is_accepted(self, ddb: Any, table_s: str) -> None:
        # pk (2) + "edge" (4) + v (1) + value: 409,600 bytes in all.
        item = {"pk": {"S": "edge"}, "v": {"S": "x" * (409_600 - 7)}}
        ddb.put_item(TableName=table_s, Item=item)
        assert len(ddb.get_item(TableName=table_s, Key={"pk": {"S": "edge"}})["Item"]["v"]["S"]) == 409_593

    def test_empty_set(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "a"}, "s": {"SS": []}})) == (
            "ValidationException",
            "1 validation error detected: One or more parameter values were invalid: An string set  may not be empty",
        )

    def test_number_overflow(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "a"}, "n": {"N": "1e126"}})) == (
            "ValidationException",
            "1 validation error detected: "
            "Number overflow. Attempting to store a number with magnitude larger than supported range",
        )

    def test_mixing_expression_and_legacy(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.put_item(
                TableName=table_s,
                Item={"pk": {"S": "a"}},
                Expected={"pk": {"Exists": False}},
                ConditionExpression="attribute_not_exists(pk)",
            )
        ) == (
            "ValidationException",
            "1 validation error detected: "
            "Can not use both expression and non-expression parameters in the same request: "
            "Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}",
        )

    def test_unused_expression_value(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.put_item(
                TableName=table_s,
                Item={"pk": {"S": "a"}},
                ConditionExpression="attribute_not_exists(pk)",
                ExpressionAttributeValues={":b": {"S": "x"}},
            )
        ) == (
            "ValidationException",
            "1 validation error detected: "
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}",
        )

    def test_reserved_word(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.put_item(
                TableName=table_s, Item={"pk": {"S": "a"}}, ConditionExpression="attribute_exists(status)"
            )
        ) == (
            "ValidationException",
            "1 validation error detected: "
            "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: status",
        )

    def test_update_key_attribute(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.update_item(
                TableName=table_s,
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET pk = :v",
                ExpressionAttributeValues={":v": {"S": "b"}},
            )
        ) == (
            "ValidationException",
            "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
        )

    def test_update_syntax_error(self, ddb: Any, table_s: str) -> None:
        assert error_of(
            lambda: ddb.update_item(TableName=table_s, Key={"pk": {"S": "a"}}, UpdateExpression="SET MyStr[ 3 ")
        ) == (
            "ValidationException",
            '1 validation error detected: Invalid UpdateExpression: Syntax error; token: "<EOF>", near: "3 "',
        )

    def test_nothing_written_on_error(self, ddb: Any, table_s: str) -> None:
        error_of(
            lambda: ddb.update_item(
                TableName=table_s,
                Key={"pk": {"S": "untouched"}},
                UpdateExpression="SET a = :v, b = :missing",
                ExpressionAttributeValues={":v": {"S": "b"}},
            )
        )
        assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "untouched"}})

    def test_table_name_constraint(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.get_item(TableName="a", Key={"pk": {"S": "a"}})) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must have "
            "length greater than or equal to 3",
        )
