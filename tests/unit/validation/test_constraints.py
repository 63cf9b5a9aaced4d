"""Phase 2: constraint failures in both of DynamoDB's forms: the new one (the first failure in the service model's
member order, the member in the API's spelling, no value) and the older one (at most 10 aggregated, values echoed,
lower camel case), which the regions in errors.OLD_FORM_REGIONS still answer."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.api import schemas
from dynastore.errors import ValidationException
from dynastore.errors import validation_message as worded
from dynastore.validation import constraints, validate_request


def validation_message(shape: Any, body: Any) -> str | None:
    """The message in the new form (every region but those of OLD_FORM_REGIONS)."""
    with pytest.raises(ValidationException) as info:
        validate_request(shape, body)
    assert info.value.to_body()["__type"] == "com.amazon.coral.validate#ValidationException"
    return info.value.message


def old_message(shape: Any, body: Any) -> str | None:
    """The message in the older form."""
    with pytest.raises(ValidationException) as info:
        validate_request(shape, body)
    return worded(info.value, old_form=True)


def test_single_error_uses_singular() -> None:
    assert validation_message(schemas.PUT_ITEM, {"Item": {}}) == (
        "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must not be null"
    )


def test_member_order_and_enum_order() -> None:
    body = {
        "TableName": "abc;",
        "ReturnConsumedCapacity": "hi",
        "ReturnItemCollectionMetrics": "hi",
        "ReturnValues": "hi",
    }
    assert old_message(schemas.PUT_ITEM, body) == (
        "5 validation errors detected: "
        "Value 'hi' at 'returnValues' failed to satisfy constraint: "
        "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]; "
        "Value 'hi' at 'returnConsumedCapacity' failed to satisfy constraint: "
        "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; "
        "Value 'abc;' at 'tableName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; "
        "Value null at 'item' failed to satisfy constraint: Member must not be null; "
        "Value 'hi' at 'returnItemCollectionMetrics' failed to satisfy constraint: "
        "Member must satisfy enum value set: [SIZE, NONE]"
    )


def test_long_table_name() -> None:
    name = "a" * 256
    assert old_message(schemas.GET_ITEM, {"TableName": name, "Key": {}}) == (
        f"1 validation error detected: Value '{name}' at 'tableName' failed to satisfy constraint: "
        "Member must have length less than or equal to 255"
    )


def test_table_names_and_arns() -> None:
    assert validation_message(schemas.DESCRIBE_TABLE, {}) == (
        "1 validation error detected: The parameter 'TableName' is required but was not present in the request"
    )
    assert old_message(schemas.DELETE_TABLE, {"TableName": "a;"}) == (
        "2 validation errors detected: Value 'a;' at 'tableName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value 'a;' at 'tableName' failed to "
        "satisfy constraint: Member must have length greater than or equal to 3"
    )
    assert old_message(schemas.DESCRIBE_TABLE, {"TableName": "ab"}) == (
        "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: "
        "Member must have length greater than or equal to 3"
    )
    # the ARN shape first: an empty name breaks only its minimum length
    assert old_message(schemas.GET_ITEM, {"TableName": "", "Key": {}}) == (
        "1 validation error detected: Value '' at 'tableName' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1"
    )
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/abc"
    validate_request(schemas.GET_ITEM, {"TableName": arn, "Key": {}})
    validate_request(schemas.BATCH_GET_ITEM, {"RequestItems": {arn: {"Keys": [{}]}}})
    assert old_message(schemas.DESCRIBE_TABLE, {"TableName": "abc;"}) == (
        "1 validation error detected: Value 'abc;' at 'tableName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
    )


@pytest.mark.parametrize(
    "name",
    ["", "a", "ab", "abc", "a" * 255, "a" * 256, "a" * 1024, "a" * 1025, "ab;", "abc;", "a.b-c_D9", "tábla",
     "arn:aws:dynamodb:us-east-1:000000000000:table/abc", "arn:", "arn" + "a" * 1021, "arn:" + "a" * 1021, "abc\n"],
)  # fmt: skip
def test_a_table_name_passes_its_one_test_only_when_it_passes_all_five(name: str) -> None:
    # A TableName is first put to one test (constraints._table_name_passes); only one that fails it is put to the
    # five in DynamoDB's order. What the one test passes, the five must all pass.
    shape = schemas.GET_ITEM.member("TableName")
    assert shape is not None
    passes_all = constraints._table_name_passes(shape)
    assert passes_all is not None
    five = [passes(name) for passes, _ in constraints._table_or_arn_tests()]
    assert passes_all(name) == (all(five) and not name.startswith("arn:"))
    assert passes_all(name) == (all(five) and not name.startswith("arn:"))  # again, from the names kept


def test_nested_list_paths_and_values() -> None:
    body = {
        "TableName": "abc",
        "AttributeDefinitions": [],
        "KeySchema": [{"KeyType": "HASH"}, {"AttributeName": "a"}, {"KeyType": "Woop", "AttributeName": "a"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
    }
    assert old_message(schemas.CREATE_TABLE, body) == (
        "6 validation errors detected: "
        "Value '0' at 'provisionedThroughput.writeCapacityUnits' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1; "
        "Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1; "
        "Value '[KeySchemaElement(attributeName=null, keyType=HASH), "
        "KeySchemaElement(attributeName=a, keyType=null), KeySchemaElement(attributeName=a, keyType=Woop)]' "
        "at 'keySchema' failed to satisfy constraint: Member must have length less than or equal to 2; "
        "Value null at 'keySchema.1.member.attributeName' failed to satisfy constraint: Member must not be null; "  # noqa: E501
        "Value null at 'keySchema.2.member.keyType' failed to satisfy constraint: Member must not be null; "
        "Value 'Woop' at 'keySchema.3.member.keyType' failed to satisfy constraint: "
        "Member must satisfy enum value set: [HASH, RANGE]"
    )


def test_at_most_ten_errors() -> None:
    body = {"TableName": "abc", "AttributeDefinitions": [{} for _ in range(8)], "KeySchema": []}
    message = old_message(schemas.CREATE_TABLE, body)
    assert message is not None
    assert message.startswith("10 validation errors detected: ")
    assert message.count("failed to satisfy constraint") == 10


def test_map_member_paths() -> None:
    body = {"TableName": "abc", "KeyConditions": {"a": {}, "b": {"ComparisonOperator": "XX"}}}
    assert old_message(schemas.QUERY, body) == (
        "2 validation errors detected: "
        "Value 'XX' at 'keyConditions.b.member.comparisonOperator' failed to satisfy constraint: "
        "Member must satisfy enum value set: "
        "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]; "
        "Value null at 'keyConditions.a.member.comparisonOperator' failed to satisfy constraint: "
        "Member must not be null"
    )


def test_list_of_strings_rendering_and_limits() -> None:
    body = {"TableName": "abc", "Limit": 0, "AttributesToGet": [], "Segment": -1, "TotalSegments": 1000001}
    assert old_message(schemas.SCAN, body) == (
        "4 validation errors detected: "
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1; "  # noqa: E501
        "Value '[]' at 'attributesToGet' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1; "
        "Value '-1' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0; "  # noqa: E501
        "Value '1000001' at 'totalSegments' failed to satisfy constraint: "
        "Member must have value less than or equal to 1000000"
    )


def test_map_keys_and_values() -> None:
    body: dict[str, Any] = {"RequestItems": {"a;": [], "abc": [{"PutRequest": {"Item": {}}}]}}
    assert old_message(schemas.BATCH_WRITE_ITEM, body) == (
        "2 validation errors detected: "
        "Value '{a;=[], abc=[WriteRequest(putRequest=PutRequest(item={}), deleteRequest=null)]}' "
        "at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: "
        "[Member must have length less than or equal to 255, Member must have length greater than or equal to 3, "  # noqa: E501
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]; "
        "Value '{a;=[], abc=[WriteRequest(putRequest=PutRequest(item={}), deleteRequest=null)]}' "
        "at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "
        "[Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"  # noqa: E501
    )


def test_empty_request_items() -> None:
    # DynamoDB's newer form for a collection's length: no value, member names capitalised
    assert validation_message(schemas.BATCH_GET_ITEM, {"RequestItems": {}}) == (
        "1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1"
    )
    assert validation_message(schemas.BATCH_GET_ITEM, {"RequestItems": {"a.b": {"Keys": [{}] * 101}}}) == (
        "1 validation error detected: Value at 'RequestItems.a.b.member.Keys' failed to satisfy constraint: "
        "Member must have length less than or equal to 100"
    )


def test_list_tables_order() -> None:
    body = {"Limit": 2147483647, "ExclusiveStartTableName": "89hls;;f;d" * 30}
    message = old_message(schemas.LIST_TABLES, body)
    assert message is not None
    assert message.startswith(
        "3 validation errors detected: Value '2147483647' at 'limit' failed to satisfy constraint: "
        "Member must have value less than or equal to 100; "
    )


def test_valid_requests_pass() -> None:
    body = {
        "TableName": "abc",
        "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    assert validate_request(schemas.CREATE_TABLE, body) == body
    for name, shape in schemas.SHAPES.items():
        if name in ("DescribeLimits", "DescribeEndpoints", "ListTables"):
            assert validate_request(shape, {}) == {}


def test_new_form_reports_the_first_failure_in_the_model_order() -> None:
    # PutItemInput lists TableName first: the older form's first entry (ReturnValues) comes later
    body: dict[str, Any] = {"TableName": "abc;", "ReturnConsumedCapacity": "hi", "ReturnValues": "hi"}
    assert validation_message(schemas.PUT_ITEM, body) == (
        "1 validation error detected: Value at 'TableName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
    )
    body = {"TableName": "abc", "Item": {}, "ReturnConsumedCapacity": "hi", "ReturnValues": "hi"}
    assert validation_message(schemas.PUT_ITEM, body) == (
        "1 validation error detected: Value at 'ReturnValues' failed to satisfy constraint: "
        "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"
    )


def test_new_form_names_nested_members_without_their_values() -> None:
    body: dict[str, Any] = {
        "TableName": "abc",
        "AttributeDefinitions": [],
        "KeySchema": [{"KeyType": "HASH"}, {"AttributeName": "a"}, {"KeyType": "Woop", "AttributeName": "a"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
    }
    assert validation_message(schemas.CREATE_TABLE, body) == (
        "1 validation error detected: Value at 'KeySchema' failed to satisfy constraint: "
        "Member must have length less than or equal to 2"
    )
    body = {"TableName": "abc", "KeyConditions": {"a": {}, "b": {"ComparisonOperator": "XX"}}}
    assert validation_message(schemas.QUERY, body) == (
        "1 validation error detected: Value at 'KeyConditions.a.member.ComparisonOperator' failed to satisfy "
        "constraint: Member must not be null"
    )
    body = {"TableName": "abc", "Limit": 0, "AttributesToGet": [], "Segment": -1, "TotalSegments": 1000001}
    assert validation_message(schemas.SCAN, body) == (
        "1 validation error detected: Value at 'AttributesToGet' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1"
    )
    assert validation_message(schemas.SCAN, {"TableName": "abc", "Limit": 0}) == (
        "1 validation error detected: Value at 'Limit' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1"
    )
    assert validation_message(schemas.GET_ITEM, {"TableName": "", "Key": {}}) == (
        "1 validation error detected: Value at 'TableName' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1"
    )


def test_old_form_of_a_collection_length_keeps_the_api_spelling() -> None:
    assert old_message(schemas.BATCH_GET_ITEM, {"RequestItems": {"a.b": {"Keys": [{}] * 101}}}) == (
        "1 validation error detected: Value at 'RequestItems.a.b.member.Keys' failed to satisfy constraint: "
        "Member must have length less than or equal to 100"
    )
