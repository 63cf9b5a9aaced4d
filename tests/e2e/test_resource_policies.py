"""PutResourcePolicy, GetResourcePolicy, DeleteResourcePolicy end to end (authentication off: policies are
stored and returned; their enforcement is tested at the dispatch level, tests/unit/api/test_authorization.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import create_table, cross_account_denial, error_of

INVALID = "One or more parameter values were invalid: "


def policy_for(arn: str, *actions: str, principal: str | None = None, sid: str = "Read") -> str:
    account = arn.split(":")[4]
    statement = {
        "Sid": sid,
        "Effect": "Allow",
        "Principal": {"AWS": principal or f"arn:aws:iam::{account}:user/alice"},
        "Action": list(actions) or ["dynamodb:GetItem"],
        "Resource": arn,
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, indent=4)


@pytest.fixture
def table(ddb: Any) -> tuple[str, str]:
    name = create_table(ddb, "S")
    return name, ddb.describe_table(TableName=name)["Table"]["TableArn"]


def test_put_get_delete(ddb: Any, table: tuple[str, str]) -> None:
    name, arn = table
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=arn)) == (
        "PolicyNotFoundException",
        f"Resource-based policy not found for the provided ResourceArn: {arn}",
    )
    text = policy_for(arn)
    revision = ddb.put_resource_policy(ResourceArn=arn, Policy=text)["RevisionId"]
    got = ddb.get_resource_policy(ResourceArn=arn)
    assert got["RevisionId"] == revision
    assert got["Policy"] == json.dumps(json.loads(text), separators=(",", ":"))  # whitespace is not kept
    # the same policy again keeps its revision; another one gets a later one
    assert ddb.put_resource_policy(ResourceArn=arn, Policy=text)["RevisionId"] == revision
    newer = ddb.put_resource_policy(ResourceArn=arn, Policy=policy_for(arn, "dynamodb:PutItem"))["RevisionId"]
    assert newer != revision and newer > revision
    assert ddb.delete_resource_policy(ResourceArn=arn)["RevisionId"]
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=arn))[0] == "PolicyNotFoundException"
    assert "RevisionId" not in ddb.delete_resource_policy(ResourceArn=arn)


def test_expected_revision_id(ddb: Any, table: tuple[str, str]) -> None:
    name, arn = table
    first = ddb.put_resource_policy(ResourceArn=arn, Policy=policy_for(arn), ExpectedRevisionId="NO_POLICY")[
        "RevisionId"
    ]
    assert error_of(
        lambda: ddb.put_resource_policy(
            ResourceArn=arn, Policy=policy_for(arn, "dynamodb:Query"), ExpectedRevisionId="NO_POLICY"
        )
    ) == (  # fmt: skip
        "PolicyNotFoundException",
        "Resource-based policy not found for the provided ResourceArn: Requested policy update expecting none to be "
        f"present for table {name}, but a policy exists with revision id {first}.",
    )
    second = ddb.put_resource_policy(
        ResourceArn=arn, Policy=policy_for(arn, "dynamodb:Query"), ExpectedRevisionId=first
    )["RevisionId"]
    assert error_of(lambda: ddb.delete_resource_policy(ResourceArn=arn, ExpectedRevisionId=first)) == (
        "PolicyNotFoundException",
        f"Resource-based policy not found for the provided ResourceArn: Requested update for policy with revision id "
        f"{first}, but the policy associated to target table {name} has revision id {second}.",
    )
    assert ddb.get_resource_policy(ResourceArn=arn)["RevisionId"] == second
    ddb.delete_resource_policy(ResourceArn=arn, ExpectedRevisionId=second)


def test_invalid_documents(ddb: Any, table: tuple[str, str]) -> None:
    _, arn = table

    def put(text: str) -> tuple[str, str]:
        return error_of(lambda: ddb.put_resource_policy(ResourceArn=arn, Policy=text))

    assert put("{not json") == (
        "ValidationException",
        INVALID + "Invalid policy document: This policy contains invalid Json",
    )
    empty = json.dumps({"Version": "2012-10-17", "Statement": []})
    assert put(empty) == (
        "ValidationException",
        INVALID + "Invalid policy document: Could not parse the policy: Statement is empty!",
    )
    stream_actions = policy_for(arn, "dynamodb:GetRecords", "dynamodb:DescribeStream")
    assert put(stream_actions) == (
        "ValidationException",
        INVALID + 'Invalid policy document: The following action names are invalid: "dynamodb:GetRecords", '
        '"dynamodb:DescribeStream"',
    )
    public = policy_for(arn, principal="*")
    assert put(public) == (
        "ValidationException",
        "Resource-based policy grants unbounded access in one or more elements. Please revise the policy to ensure "
        "least-privilege form of access",
    )
    padded = policy_for(arn)[:-1] + " " * 20480 + "}"
    assert put(padded) == ("ValidationException", INVALID + "Maximum policy size of 20480 bytes exceeded")
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=arn))[0] == "PolicyNotFoundException"


def test_resource_arns(ddb: Any, table: tuple[str, str], signed_as: dict[str, str] | None) -> None:
    name, arn = table
    account = arn.split(":")[4]
    missing = arn + "-missing"
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=name)) == (
        "ValidationException",
        INVALID + f"ARNs must start with 'arn:': {name}",
    )
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=missing)) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {name}-missing not found",
    )
    assert error_of(lambda: ddb.delete_resource_policy(ResourceArn=arn + "/index/ByX")) == (
        "ValidationException",
        INVALID + f"Invalid resource arn provided, only table or stream is accepted. Provided resource arn: "
        f"{arn}/index/ByX",
    )
    other_region = arn.replace("us-east-1", "eu-west-1")
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=other_region)) == (
        "ValidationException",
        INVALID + f"Invalid resource Arn: {other_region}",
    )
    other_account = arn.replace(account, "999999999999")
    not_owner = (
        (
            "ValidationException",
            "This action is only supported by accounts that match the resource owner\u2019s account.",
        )
        if signed_as is None  # signed, the request is first refused as IAM refuses a cross-account request
        else cross_account_denial(signed_as, "dynamodb:PutResourcePolicy", other_account)
    )
    assert error_of(lambda: ddb.put_resource_policy(ResourceArn=other_account, Policy=policy_for(arn))) == not_owner
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=arn + "/stream/2000-01-01T00:00:00.000")) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Stream: 2000-01-01T00:00:00.000 not found for Table: {name}",
    )


def test_stream_policy(ddb: Any) -> None:
    name = create_table(ddb, "S", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    table = ddb.describe_table(TableName=name)["Table"]
    stream_arn, table_arn = table["LatestStreamArn"], table["TableArn"]
    text = policy_for(stream_arn, "dynamodb:GetRecords", "dynamodb:DescribeStream")
    revision = ddb.put_resource_policy(ResourceArn=stream_arn, Policy=text)["RevisionId"]
    assert ddb.get_resource_policy(ResourceArn=stream_arn)["RevisionId"] == revision
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=table_arn))[0] == "PolicyNotFoundException"
    assert error_of(lambda: ddb.put_resource_policy(ResourceArn=stream_arn, Policy=policy_for(stream_arn))) == (
        "ValidationException",
        INVALID + 'Invalid policy document: The following action names are invalid: "dynamodb:GetItem"',
    )


def test_create_table_attaches_its_policy_and_delete_table_drops_it(ddb: Any, table: tuple[str, str]) -> None:
    _, arn = table
    account = arn.split(":")[4]
    name = table[0] + "-with-policy"
    new_arn = f"arn:aws:dynamodb:us-east-1:{account}:table/{name}"
    text = policy_for(new_arn)
    create_table_named = {
        "TableName": name,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    assert error_of(lambda: ddb.create_table(ResourcePolicy="{", **create_table_named)) == (
        "ValidationException",
        INVALID + "Invalid policy document: This policy contains invalid Json",
    )
    ddb.create_table(ResourcePolicy=text, **create_table_named)
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    assert json.loads(ddb.get_resource_policy(ResourceArn=new_arn)["Policy"]) == json.loads(text)
    ddb.delete_table(TableName=name)
    ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    ddb.create_table(**create_table_named)
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    assert error_of(lambda: ddb.get_resource_policy(ResourceArn=new_arn))[0] == "PolicyNotFoundException"
