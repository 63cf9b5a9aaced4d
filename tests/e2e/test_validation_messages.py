"""The two forms of DynamoDB's validation messages (docs/operations.md "Validation messages"): the new form every
region but eu-south-2 and me-central-1 answers (the session's server, us-east-1), and the older form a server of
eu-south-2 answers its clients. Also where the order of the checks decides the error (docs/validation-order.md)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import boto3
import pytest

from tests.e2e.conftest import BOTO_CONFIG, create_table, cross_account_denial, error_of, unique_name
from tests.e2e.server_process import ServerProcess

KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}
RETURN_VALUES = "[ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"


class TestNewForm:
    def test_a_constraint_names_the_member_without_its_value(self, ddb: Any, table_s: str) -> None:
        assert error_of(lambda: ddb.scan(TableName=table_s, Limit=0)) == (
            "ValidationException",
            "1 validation error detected: Value at 'Limit' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1",
        )
        assert error_of(lambda: ddb.get_item(TableName="", Key={"pk": {"S": "a"}})) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
        )

    def test_only_the_first_failure_in_the_model_order_is_reported(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.put_item(TableName="", Item={}, ReturnValues="INVALID")) == (
            "ValidationException",
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
        )
        call = lambda: ddb.put_item(  # noqa: E731
            TableName="abc", Item={}, ReturnValues="INVALID", ReturnConsumedCapacity="INVALID"
        )
        assert error_of(call) == (
            "ValidationException",
            "1 validation error detected: Value at 'ReturnValues' failed to satisfy constraint: "
            f"Member must satisfy enum value set: {RETURN_VALUES}",
        )

    def test_nested_members_keep_the_api_spelling(self, ddb: Any, table_s: str) -> None:
        items = [{"PutRequest": {"Item": {"pk": {"S": str(i)}}}} for i in range(26)]
        assert error_of(lambda: ddb.batch_write_item(RequestItems={table_s: items})) == (
            "ValidationException",
            f"1 validation error detected: Value at 'RequestItems.{table_s}.member' failed to satisfy constraint: "
            "Member must have length less than or equal to 25",
        )

    def test_semantic_errors_of_the_request_carry_the_prefix(self, ddb: Any, table_s: str) -> None:
        call = lambda: ddb.update_item(  # noqa: E731
            TableName=table_s,
            Key={"pk": {"S": "a"}},
            UpdateExpression="ADD a :one ADD b :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
        assert error_of(call) == (
            "ValidationException",
            '1 validation error detected: Invalid UpdateExpression: The "ADD" section can only be used once in an '
            "update expression;",
        )
        assert error_of(lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "a"}, "s": {"SS": []}})) == (
            "ValidationException",
            "1 validation error detected: One or more parameter values were invalid: An string set  may not be empty",
        )
        call = lambda: ddb.put_item(  # noqa: E731
            TableName=table_s, Item={"pk": {"S": "a"}}, ExpressionAttributeValues={":v": {"S": "x"}}
        )
        assert error_of(call) == (
            "ValidationException",
            "1 validation error detected: ExpressionAttributeValues can only be specified when using expressions",
        )

    def test_errors_found_against_the_table_are_bare(self, ddb: Any, table_s: str) -> None:
        call = lambda: ddb.update_item(  # noqa: E731
            TableName=table_s,
            Key={"pk": {"S": "a"}},
            UpdateExpression="SET pk = :v",
            ExpressionAttributeValues={":v": {"S": "b"}},
        )
        assert error_of(call) == (
            "ValidationException",
            "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
        )
        assert error_of(lambda: ddb.get_item(TableName=table_s, Key={"other": {"S": "a"}})) == (
            "ValidationException",
            "The provided key element does not match the schema",
        )

    def test_control_plane_rules_are_bare(self, ddb: Any) -> None:
        call = lambda: ddb.create_table(  # noqa: E731
            TableName=unique_name(),
            KeySchema=KEYS["KeySchema"],
            AttributeDefinitions=KEYS["AttributeDefinitions"],
            BillingMode="PROVISIONED",
        )
        assert error_of(call) == (
            "ValidationException",
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be "
            "specified when BillingMode is PROVISIONED",
        )


@pytest.fixture(scope="module")
def old_form_client() -> Iterator[Any]:
    """A client of a server in eu-south-2, one of the regions that still answer in the older form."""
    process = ServerProcess("--region", "eu-south-2")
    client = boto3.client(
        "dynamodb",
        endpoint_url=process.url,
        region_name="eu-south-2",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=BOTO_CONFIG,
    )
    try:
        yield client
    finally:
        process.stop()


class TestOlderForm:
    def test_constraint_failures_are_aggregated_with_their_values(self, old_form_client: Any) -> None:
        ddb = old_form_client
        assert error_of(lambda: ddb.put_item(TableName="", Item={}, ReturnValues="INVALID")) == (
            "ValidationException",
            "2 validation errors detected: Value 'INVALID' at 'returnValues' failed to satisfy constraint: "
            f"Member must satisfy enum value set: {RETURN_VALUES}; Value '' at 'tableName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1",
        )
        call = lambda: ddb.delete_item(  # noqa: E731
            TableName="abc", Key={}, ReturnValues="INVALID", ReturnConsumedCapacity="INVALID"
        )
        assert error_of(call) == (
            "ValidationException",
            "2 validation errors detected: Value 'INVALID' at 'returnValues' failed to satisfy constraint: "
            f"Member must satisfy enum value set: {RETURN_VALUES}; Value 'INVALID' at 'returnConsumedCapacity' "
            "failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]",
        )
        assert error_of(lambda: ddb.scan(TableName="abc", Limit=0)) == (
            "ValidationException",
            "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1",
        )

    def test_semantic_errors_are_bare(self, old_form_client: Any) -> None:
        ddb = old_form_client
        table = create_table(ddb)
        call = lambda: ddb.update_item(  # noqa: E731
            TableName=table,
            Key={"pk": {"S": "a"}},
            UpdateExpression="ADD a :one ADD b :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
        assert error_of(call) == (
            "ValidationException",
            'Invalid UpdateExpression: The "ADD" section can only be used once in an update expression;',
        )
        call = lambda: ddb.put_item(  # noqa: E731
            TableName=table, Item={"pk": {"S": "a"}}, ExpressionAttributeValues={":v": {"S": "x"}}
        )
        assert error_of(call) == (
            "ValidationException",
            "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null",
        )
        assert error_of(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": {"SS": []}})) == (
            "ValidationException",
            "One or more parameter values were invalid: An string set  may not be empty",
        )

    def test_texts_that_always_carry_the_prefix_keep_it(self, old_form_client: Any) -> None:
        ddb = old_form_client
        table = create_table(ddb)
        expected = {"a": {"Exists": True}}
        assert error_of(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}}, Expected=expected)) == (
            "ValidationException",
            "1 validation error detected: One or more parameter values were invalid: Value must be provided when "
            "Exists is true for Attribute: a",
        )


class TestOrder:
    def test_key_conditions_before_the_exclusive_start_key(self, ddb: Any, table_s: str) -> None:
        call = lambda: ddb.query(  # noqa: E731
            TableName=table_s,
            KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": []}},
            ExclusiveStartKey={"pk": {"S": "a", "N": "1"}},
        )
        assert error_of(call) == (
            "ValidationException",
            "1 validation error detected: The attempted filter operation is not supported for the provided filter "
            "argument count",
        )

    def test_batch_get_duplicate_keys_before_the_table(self, ddb: Any) -> None:
        keys = [{"pk": {"S": "a"}}, {"pk": {"S": "a"}}]
        assert error_of(lambda: ddb.batch_get_item(RequestItems={unique_name("missing"): {"Keys": keys}})) == (
            "ValidationException",
            "1 validation error detected: Provided list of item keys contains duplicates",
        )

    def test_transaction_on_one_item_twice_is_found_against_the_table(self, ddb: Any, table_s: str) -> None:
        get = {"Get": {"TableName": table_s, "Key": {"pk": {"S": "a"}}}}
        assert error_of(lambda: ddb.transact_get_items(TransactItems=[get, get])) == (
            "ValidationException",
            "Transaction request cannot include multiple operations on one item",
        )

    def test_item_size_after_the_table(self, ddb: Any) -> None:
        big = {"pk": {"S": "a"}, "blob": {"S": "x" * 400_000}}
        assert error_of(lambda: ddb.put_item(TableName=unique_name("missing"), Item=big)) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )


class TestAnotherAccount:
    """Another account's table ARN is refused before its resource part is looked at."""

    @pytest.mark.parametrize(
        "resource", ["table/tbl/index/i", "table/ab", "table/tbl/stream/2020-01-01T00:00:00.000", "table/"]
    )
    def test_tagging_operations(self, ddb: Any, resource: str) -> None:
        arn = f"arn:aws:dynamodb:us-east-1:111122223333:{resource}"
        code, _ = error_of(lambda: ddb.list_tags_of_resource(ResourceArn=arn))
        assert code == "AccessDeniedException"
        code, _ = error_of(lambda: ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v"}]))
        assert code == "AccessDeniedException"

    def test_an_index_arn_as_a_table_name(self, ddb: Any) -> None:
        arn = "arn:aws:dynamodb:us-east-1:111122223333:table/tbl/index/i"
        code, _ = error_of(lambda: ddb.get_item(TableName=arn, Key={"pk": {"S": "a"}}))
        assert code == "AccessDeniedException"

    def test_a_batch_statement_entry_names_access_denied(self, ddb: Any, signed_as: dict[str, str] | None) -> None:
        """Without authentication the entry is refused; with it, the request is authorized before it runs and
        IAM refuses the whole request (no resource policy of the other account allows it)."""
        arn = "arn:aws:dynamodb:us-east-1:111122223333:table/tbl"
        batch = partial(
            ddb.batch_execute_statement, Statements=[{"Statement": f"SELECT * FROM \"{arn}\" WHERE pk = 'a'"}]
        )
        if signed_as is None:
            assert batch()["Responses"][0]["Error"]["Code"] == "AccessDenied"
        else:
            assert error_of(batch) == cross_account_denial(signed_as, "dynamodb:PartiQLSelect", arn)
