"""TagResource, UntagResource and ListTagsOfResource end to end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import create_table, error_of

INVALID = "One or more parameter values were invalid: "


@pytest.fixture(scope="module")
def arn(ddb: Any) -> Iterator[str]:
    name = create_table(ddb, "S")
    yield ddb.describe_table(TableName=name)["Table"]["TableArn"]
    ddb.delete_table(TableName=name)


def tags_of(ddb: Any, arn: str) -> list[dict[str, str]]:
    tags: list[dict[str, str]] = ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]
    return tags


class TestValidation:
    def test_constraints(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.tag_resource(ResourceArn="", Tags=[{"Key": "", "Value": "v" * 257}])) == (
            "ValidationException",
            "1 validation error detected: Value at 'ResourceArn' failed to satisfy constraint: Member must have "
            "length greater than or equal to 1",
        )
        assert error_of(lambda: ddb.untag_resource(ResourceArn="x")) == (
            "ValidationException",
            "1 validation error detected: Value at 'TagKeys' failed to satisfy constraint: Member must not be null",
        )
        assert error_of(lambda: ddb.list_tags_of_resource()) == (
            "ValidationException",
            "1 validation error detected: Value at 'ResourceArn' failed to satisfy constraint: Member must not be null",
        )

    def test_arn_must_start_with_arn(self, ddb: Any) -> None:
        for call in (
            lambda: ddb.list_tags_of_resource(ResourceArn="table/abc"),
            lambda: ddb.tag_resource(ResourceArn="table/abc", Tags=[{"Key": "k", "Value": "v"}]),
            lambda: ddb.untag_resource(ResourceArn="table/abc", TagKeys=["k"]),
        ):
            assert error_of(call) == ("ValidationException", INVALID + "ARNs must start with 'arn:': table/abc")

    def test_foreign_service_arn(self, ddb: Any) -> None:
        other = "arn:aws:s3:::my-bucket"
        assert error_of(lambda: ddb.list_tags_of_resource(ResourceArn=other)) == (
            "ValidationException",
            INVALID + f"Provided Arn is not a DynamoDB resource arn: {other}",
        )

    def test_index_arn(self, ddb: Any, arn: str) -> None:
        index = arn + "/index/by_x"
        assert error_of(lambda: ddb.list_tags_of_resource(ResourceArn=index)) == (
            "ValidationException",
            INVALID
            + f"Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {index}",
        )

    def test_other_region_arn(self, ddb: Any, arn: str) -> None:
        other = arn.replace(f":{ddb.meta.region_name}:", ":eu-north-9:")
        assert error_of(lambda: ddb.list_tags_of_resource(ResourceArn=other)) == (
            "AccessDeniedException",
            "Access is denied",
        )

    def test_missing_table(self, ddb: Any, arn: str) -> None:
        missing = arn.rsplit("/", 1)[0] + "/no_such_table_here"
        expected = ("ResourceNotFoundException", f"Requested resource not found: ResourcArn: {missing} not found")
        assert error_of(lambda: ddb.list_tags_of_resource(ResourceArn=missing)) == expected
        assert error_of(lambda: ddb.tag_resource(ResourceArn=missing, Tags=[{"Key": "k", "Value": "v"}])) == expected
        assert error_of(lambda: ddb.untag_resource(ResourceArn=missing, TagKeys=["k"])) == expected

    @pytest.mark.parametrize(
        ("tags", "message"),
        [
            ([], "Atleast one Tag needs to be provided as Input."),
            ([{"Key": "a*b", "Value": "v"}], "The Tag Key provided is invalid, Key: a*b"),
            ([{"Key": "k", "Value": "v#"}], "The Tag Value provided is invalid, Value: v#"),
            ([{"Key": "aws:k", "Value": "v"}], "Tag Key cannot be prefixed with aws:, Key: aws:k"),
            (
                [{"Key": "k", "Value": "1"}, {"Key": "k", "Value": "2"}],
                "Duplicate Tag Keys provided as input: Duplicate Tag Key found k",
            ),
            (
                [{"Key": f"k{n}", "Value": "v"} for n in range(51)],
                "Number of Tags exceed the current limit for the provided ResourceArn",
            ),
        ],
    )
    def test_bad_tags(self, ddb: Any, arn: str, tags: list[dict[str, str]], message: str) -> None:
        before = tags_of(ddb, arn)
        assert error_of(lambda: ddb.tag_resource(ResourceArn=arn, Tags=tags)) == ("ValidationException", message)
        assert tags_of(ddb, arn) == before

    def test_empty_tag_keys(self, ddb: Any, arn: str) -> None:
        assert error_of(lambda: ddb.untag_resource(ResourceArn=arn, TagKeys=[])) == (
            "ValidationException",
            "Atleast one Tag Key needs to be provided as Input.",
        )


class TestFunctionality:
    def test_round_trip(self, ddb: Any) -> None:
        name = create_table(ddb, "S")
        arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
        try:
            assert tags_of(ddb, arn) == []
            ddb.tag_resource(
                ResourceArn=arn,
                Tags=[{"Key": "team", "Value": "core"}, {"Key": "env", "Value": ""}, {"Key": "é 1", "Value": "ü@x"}],
            )
            assert tags_of(ddb, arn) == [
                {"Key": "team", "Value": "core"},
                {"Key": "env", "Value": ""},
                {"Key": "é 1", "Value": "ü@x"},
            ]
            ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "data"}])
            assert {"Key": "team", "Value": "data"} in tags_of(ddb, arn)
            assert len(tags_of(ddb, arn)) == 3
            ddb.untag_resource(ResourceArn=arn, TagKeys=["env", "not-there"])
            assert tags_of(ddb, arn) == [{"Key": "team", "Value": "data"}, {"Key": "é 1", "Value": "ü@x"}]
        finally:
            ddb.delete_table(TableName=name)

    def test_fifty_tags_is_the_limit(self, ddb: Any) -> None:
        name = create_table(ddb, "S", Tags=[{"Key": f"k{n}", "Value": "v"} for n in range(49)])
        arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
        try:
            ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k49", "Value": "v"}])
            assert len(tags_of(ddb, arn)) == 50
            ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k0", "Value": "replaced"}])
            assert error_of(lambda: ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k50", "Value": "v"}])) == (
                "ValidationException",
                "Number of Tags exceed the current limit for the provided ResourceArn",
            )
        finally:
            ddb.delete_table(TableName=name)

    def test_tags_do_not_survive_recreation(self, ddb: Any) -> None:
        name = create_table(ddb, "S", Tags=[{"Key": "k", "Value": "v"}])
        arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
        ddb.delete_table(TableName=name)
        ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 100})
        ddb.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        try:
            ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 100})
            assert tags_of(ddb, arn) == []
        finally:
            ddb.delete_table(TableName=name)
