"""Phase 1: JSON types -> SerializationException with DynamoDB's deserializer texts."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.api import schemas
from dynastore.errors import SerializationException
from dynastore.validation import validate_request

CAST = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class java.lang.Class "  # noqa: E501
    "(sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in module java.base "  # noqa: E501
    "of loader 'bootstrap')"
)


def serialization_message(shape: Any, body: Any) -> str | None:
    with pytest.raises(SerializationException) as info:
        validate_request(shape, body)
    assert info.value.to_body()["__type"] == "com.amazon.coral.service#SerializationException"
    return info.value.message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "TRUE_VALUE cannot be converted to String"),
        (False, "FALSE_VALUE cannot be converted to String"),
        (23, "NUMBER_VALUE cannot be converted to String"),
        (2147483648, "NUMBER_VALUE cannot be converted to String"),
        (34.56, "DECIMAL_VALUE cannot be converted to String"),
        ([], "Unrecognized collection type class java.lang.String"),
        ({}, "Start of structure or map found where not expected"),
    ],
)
def test_string_member(value: Any, message: str) -> None:
    assert serialization_message(schemas.PUT_ITEM, {"TableName": value}) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "Unexpected token received from parser"),
        (23, "NUMBER_VALUE cannot be converted to Boolean"),
        (34.56, "DECIMAL_VALUE cannot be converted to Boolean"),
        ([], "Unrecognized collection type class java.lang.Boolean"),
        ({}, "Start of structure or map found where not expected"),
    ],
)
def test_boolean_member(value: Any, message: str) -> None:
    assert serialization_message(schemas.GET_ITEM, {"ConsistentRead": value}) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "STRING_VALUE cannot be converted to Integer"),
        (True, "TRUE_VALUE cannot be converted to Integer"),
        (False, "FALSE_VALUE cannot be converted to Integer"),
        ([], "Unrecognized collection type class java.lang.Integer"),
        ({}, "Start of structure or map found where not expected"),
    ],
)
def test_integer_member(value: Any, message: str) -> None:
    assert serialization_message(schemas.SCAN, {"Limit": value}) == message


def test_long_member() -> None:
    body = {"ProvisionedThroughput": {"ReadCapacityUnits": "23"}}
    assert serialization_message(schemas.CREATE_TABLE, body) == "STRING_VALUE cannot be converted to Long"


def test_integer_truncates_fractions() -> None:
    req = validate_request(schemas.SCAN, {"TableName": "abc", "Limit": 2.7})
    assert req["Limit"] == 2


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "only base-64-encoded strings are convertible to bytes"),
        (23, "only base-64-encoded strings are convertible to bytes"),
        ([], "Unrecognized collection type class java.nio.ByteBuffer"),
        ({}, "Start of structure or map found where not expected"),
        ("23456", "Base64 encoded length is expected a multiple of 4 bytes but found: 5"),
        ("=+/=", "Invalid last non-pad Base64 character dectected"),
        ("+/+=", "Invalid last non-pad Base64 character dectected"),
    ],
)
def test_blob_in_attribute_value(value: Any, message: str) -> None:
    for body in (
        {"Item": {"a": {"B": value}}},
        {"Item": {"a": {"BS": [value]}}},
        {"Item": {"a": {"L": [{"B": value}]}}},
        {"Item": {"a": {"M": {"b": {"BS": [value]}}}}},
    ):
        assert serialization_message(schemas.PUT_ITEM, body) == message


@pytest.mark.parametrize("value", ["23", True, 23, 34.56])
def test_list_field_scalar(value: Any) -> None:
    assert serialization_message(schemas.GET_ITEM, {"AttributesToGet": value}) == "Unexpected field type"
    assert serialization_message(schemas.PUT_ITEM, {"Item": {"a": {"SS": value}}}) == "Unexpected field type"


def test_list_field_object() -> None:
    message = "Start of structure or map found where not expected"
    assert serialization_message(schemas.GET_ITEM, {"AttributesToGet": {}}) == message


@pytest.mark.parametrize("value", ["23", True, 23])
def test_map_field_scalar(value: Any) -> None:
    assert serialization_message(schemas.PUT_ITEM, {"Item": value}) == "Unexpected field type"
    assert serialization_message(schemas.PUT_ITEM, {"Item": {"a": {"M": value}}}) == "Unexpected field type"


def test_map_field_list() -> None:
    item = (
        "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"  # noqa: E501
    )
    names = "Unrecognized collection type java.util.Map<java.lang.String, java.lang.String>"
    assert serialization_message(schemas.PUT_ITEM, {"Item": []}) == item
    assert serialization_message(schemas.PUT_ITEM, {"Item": {"a": {"M": []}}}) == item
    assert serialization_message(schemas.PUT_ITEM, {"ExpressionAttributeNames": []}) == names


@pytest.mark.parametrize("value", ["23", True, 23, 34.56])
def test_value_struct_scalar(value: Any) -> None:
    assert serialization_message(schemas.PUT_ITEM, {"Item": {"a": value}}) == "Unexpected value type in payload"
    assert serialization_message(schemas.PUT_ITEM, {"Item": {"a": {"L": [value]}}}) == (
        "Unexpected value type in payload"
    )
    body = {"AttributeDefinitions": [value]}
    assert serialization_message(schemas.CREATE_TABLE, body) == "Unexpected value type in payload"


def test_struct_list_messages() -> None:
    av = "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.AttributeValue"
    assert serialization_message(schemas.PUT_ITEM, {"Item": {"a": []}}) == av
    assert serialization_message(schemas.PUT_ITEM, {"Expected": {"a": {"Value": []}}}) == av
    throughput = "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.ProvisionedThroughput"
    assert serialization_message(schemas.CREATE_TABLE, {"ProvisionedThroughput": []}) == throughput


@pytest.mark.parametrize("value", ["23", 23, True])
def test_field_struct_scalar(value: Any) -> None:
    assert serialization_message(schemas.CREATE_TABLE, {"ProvisionedThroughput": value}) == "Unexpected field type"
    assert serialization_message(schemas.PUT_ITEM, {"Expected": {"a": {"Value": value}}}) == "Unexpected field type"


def test_parameterized_collections() -> None:
    assert serialization_message(schemas.BATCH_WRITE_ITEM, {"RequestItems": {"abc": 23}}) == CAST
    assert serialization_message(schemas.BATCH_GET_ITEM, {"RequestItems": {"abc": {"Keys": ["x"]}}}) == CAST


def test_non_object_body() -> None:
    assert serialization_message(schemas.PUT_ITEM, []) is None
    assert serialization_message(schemas.PUT_ITEM, "x") is None


def test_unknown_and_null_members_dropped() -> None:
    req = validate_request(
        schemas.PUT_ITEM,
        {"TableName": "abc", "Item": {"a": {"S": "x", "Z": 1, "N": None}}, "Bogus": 1, "Expected": None},
    )
    assert req == {"TableName": "abc", "Item": {"a": {"S": "x"}}}


def test_first_error_in_body_order() -> None:
    body = {"Item": {"a": {"S": 1}}, "TableName": True}
    assert serialization_message(schemas.PUT_ITEM, body) == "NUMBER_VALUE cannot be converted to String"


def test_type_errors_beat_well_formedness_errors() -> None:
    body = {"TableName": "abc", "Item": {"a": {"NULL": False}, "b": {"N": True}}}
    assert serialization_message(schemas.PUT_ITEM, body) == "TRUE_VALUE cannot be converted to String"
