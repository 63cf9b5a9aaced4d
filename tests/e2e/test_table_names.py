"""TableName through boto3: DynamoDB's constraint texts for names, table ARNs in place of names, and the
validation that comes before the table is looked up."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import cross_account_denial, error_of, unique_name

KEY = {"pk": {"S": "k"}}


def _constraint(constraint: str) -> str:
    """The new form: the member named, its value not echoed (docs/operations.md "Validation messages")."""
    return f"Value at 'TableName' failed to satisfy constraint: {constraint}"


PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
ONE = "1 validation error detected: "
AT_LEAST = "Member must have length greater than or equal to {}"


class TestNames:
    @pytest.mark.parametrize(
        ("name", "message"),
        [
            ("", ONE + _constraint(AT_LEAST.format(1))),
            ("ab", ONE + _constraint(AT_LEAST.format(3))),
            ("a!", ONE + _constraint(PATTERN)),  # the first of its two failures
        ],
    )  # fmt: skip
    def test_every_operation_reports_the_constraints(self, ddb: Any, name: str, message: str) -> None:
        calls = [
            lambda: ddb.describe_table(TableName=name),
            lambda: ddb.delete_table(TableName=name),
            lambda: ddb.describe_time_to_live(TableName=name),
            lambda: ddb.get_item(TableName=name, Key=KEY),
            lambda: ddb.scan(TableName=name),
        ]
        for call in calls:
            assert error_of(call) == ("ValidationException", message)

    def test_an_empty_name_beside_a_missing_item(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.put_item(TableName="")) == (
            "ValidationException",
            ONE + _constraint("Member must have length greater than or equal to 1"),
        )


class TestArns:
    @pytest.fixture()
    def arn(self, ddb: Any, table_s: str) -> str:
        found: str = ddb.describe_table(TableName=table_s)["Table"]["TableArn"]
        return found

    def test_an_arn_names_the_table_everywhere(self, ddb: Any, table_s: str, arn: str) -> None:
        item = {"pk": {"S": "via-arn"}, "v": {"N": "1"}}
        ddb.put_item(TableName=arn, Item=item)
        assert ddb.get_item(TableName=arn, Key={"pk": item["pk"]})["Item"] == item
        assert ddb.get_item(TableName=table_s, Key={"pk": item["pk"]})["Item"] == item
        assert ddb.describe_table(TableName=arn)["Table"]["TableName"] == table_s
        found = ddb.query(TableName=arn, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": item["pk"]})
        assert found["Items"] == [item]
        ddb.transact_write_items(
            TransactItems=[{"Update": {"TableName": arn, "Key": {"pk": item["pk"]}, "UpdateExpression": "REMOVE v"}}]
        )
        got = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": arn, "Key": {"pk": item["pk"]}}}])
        assert got["Responses"] == [{"Item": {"pk": item["pk"]}}]
        ddb.batch_write_item(RequestItems={arn: [{"PutRequest": {"Item": {"pk": {"S": "via-arn-2"}}}}]})
        batch = ddb.batch_get_item(RequestItems={arn: {"Keys": [{"pk": {"S": "via-arn-2"}}]}})
        assert batch["Responses"] == {arn: [{"pk": {"S": "via-arn-2"}}]}

    def test_consumed_capacity_names_the_table_as_the_request_did(self, ddb: Any, table_s: str, arn: str) -> None:
        key = {"pk": {"S": "cap"}}
        put = ddb.put_item(TableName=arn, Item=key, ReturnConsumedCapacity="TOTAL")
        assert put["ConsumedCapacity"]["TableName"] == arn
        got = ddb.get_item(TableName=arn, Key=key, ReturnConsumedCapacity="TOTAL")
        assert got["ConsumedCapacity"]["TableName"] == arn
        assert ddb.scan(TableName=arn, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]["TableName"] == arn
        assert ddb.get_item(TableName=table_s, Key=key, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"] == {
            "TableName": table_s,
            "CapacityUnits": 0.5,
        }
        written = ddb.batch_write_item(
            RequestItems={arn: [{"PutRequest": {"Item": {"pk": {"S": "cap-2"}}}}]}, ReturnConsumedCapacity="TOTAL"
        )
        assert written["ConsumedCapacity"] == [{"TableName": arn, "CapacityUnits": 1.0}]
        read = ddb.batch_get_item(RequestItems={arn: {"Keys": [key]}}, ReturnConsumedCapacity="TOTAL")
        assert read["ConsumedCapacity"] == [{"TableName": arn, "CapacityUnits": 0.5}]

    def test_create_and_delete_through_an_arn(self, ddb: Any, arn: str) -> None:
        name = unique_name()
        new_arn = arn.rsplit("/", 1)[0] + "/" + name
        created = ddb.create_table(
            TableName=new_arn,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        assert created["TableDescription"]["TableName"] == name
        assert created["TableDescription"]["TableArn"] == new_arn
        assert ddb.delete_table(TableName=new_arn)["TableDescription"]["TableName"] == name

    def test_another_account_or_region(self, ddb: Any, arn: str, signed_as: dict[str, str] | None) -> None:
        _, _, _, region, account, _ = arn.split(":", 5)
        other = arn.replace(f":{account}:", ":123456789012:")  # refused as IAM refuses it, when signed
        assert error_of(lambda: ddb.get_item(TableName=other, Key=KEY)) == cross_account_denial(
            signed_as, "dynamodb:GetItem", other
        )
        assert error_of(lambda: ddb.list_tags_of_resource(ResourceArn=other)) == cross_account_denial(
            signed_as, "dynamodb:ListTagsOfResource", other
        )
        elsewhere = arn.replace(f":{region}:", ":eu-north-9:")  # another region's table: not this endpoint's
        denied = ("AccessDeniedException", "Access is denied")
        assert error_of(lambda: ddb.get_item(TableName=elsewhere, Key=KEY)) == denied
        assert error_of(lambda: ddb.list_tags_of_resource(ResourceArn=elsewhere)) == denied

    def test_an_arn_of_no_table(self, ddb: Any, arn: str) -> None:
        index = arn + "/index/by_x"
        assert error_of(lambda: ddb.get_item(TableName=index, Key=KEY)) == (
            "ValidationException",
            f"Invalid TableArn: Invalid ResourceArn provided as input {index}",
        )

    def test_a_missing_table(self, ddb: Any, arn: str) -> None:
        missing = arn.rsplit("/", 1)[0] + "/no_such_table_here"
        assert error_of(lambda: ddb.get_item(TableName=missing, Key=KEY)) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )
        assert error_of(lambda: ddb.list_tags_of_resource(ResourceArn=missing)) == (
            "ResourceNotFoundException",
            f"Requested resource not found: ResourcArn: {missing} not found",
        )


class TestCollections:
    def test_batch_lengths_do_not_echo_the_value(self, ddb: Any, table_s: str) -> None:
        empty = (
            "ValidationException",
            "1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
        )
        assert error_of(lambda: ddb.batch_get_item(RequestItems={})) == empty
        assert error_of(lambda: ddb.batch_write_item(RequestItems={})) == empty
        keys = [{"pk": {"S": str(i)}} for i in range(101)]
        assert error_of(lambda: ddb.batch_get_item(RequestItems={table_s: {"Keys": keys}})) == (
            "ValidationException",
            f"1 validation error detected: Value at 'RequestItems.{table_s}.member.Keys' failed to satisfy "
            "constraint: Member must have length less than or equal to 100",
        )


class TestValidationBeforeLookup:
    def test_key_conditions_of_a_missing_table(self, ddb: Any) -> None:
        conditions: dict[str, Any] = {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": []}}
        assert error_of(lambda: ddb.query(TableName=unique_name("missing"), KeyConditions=conditions)) == (
            "ValidationException",
            "1 validation error detected: "
            "The attempted filter operation is not supported for the provided filter argument count",
        )
        conditions = {"pk": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"S": "a"}]}}
        assert error_of(lambda: ddb.query(TableName=unique_name("missing"), KeyConditions=conditions)) == (
            "ValidationException",
            "1 validation error detected: Attempted conditional constraint is not an indexable operation",
        )

    def test_expected_of_a_missing_table(self, ddb: Any) -> None:
        assert error_of(
            lambda: ddb.put_item(TableName=unique_name("missing"), Item=KEY, Expected={"a": {"Exists": True}})
        ) == (
            "ValidationException",
            "1 validation error detected: One or more parameter values were invalid: Value must be provided when "
            "Exists is true for Attribute: a",
        )
