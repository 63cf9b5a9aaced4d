"""A TableName that is a table ARN ("table name overloading")."""

from __future__ import annotations

import pytest

from dynastore.errors import AccessDeniedException, DynamoError, ValidationException
from dynastore.util.arn import account_of, parse_dynamodb_arn, table_name_in

REGION, ACCOUNT = "us-east-1", "000000000000"


def test_names_and_table_arns() -> None:
    assert table_name_in("orders", REGION, ACCOUNT) == "orders"
    assert table_name_in(f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders", REGION, ACCOUNT) == "orders"


@pytest.mark.parametrize(
    ("arn", "error"),
    [
        (f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/orders", AccessDeniedException),
        (f"arn:aws:dynamodb:{REGION}:123456789012:table/orders", AccessDeniedException),
        (f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders/index/g", ValidationException),
        (f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders/stream/2024", ValidationException),
        (f"arn:aws:s3:{REGION}:{ACCOUNT}:table/orders", ValidationException),
        ("arn:aws:dynamodb", ValidationException),
    ],
)
def test_arns_of_no_table_here(arn: str, error: type[DynamoError]) -> None:
    with pytest.raises(error):
        table_name_in(arn, REGION, ACCOUNT)


def test_the_parts_of_dynamodb_arns() -> None:
    table = parse_dynamodb_arn(f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders")
    assert table is not None
    assert (table.region, table.account, table.table, table.stream_label) == (REGION, ACCOUNT, "orders", None)
    stream = parse_dynamodb_arn("arn:aws:dynamodb:eu-west-1:123456789012:table/orders/stream/2026")
    assert stream is not None
    assert (stream.region, stream.account, stream.table, stream.stream_label) == (
        "eu-west-1",
        "123456789012",
        "orders",
        "2026",
    )
    index = parse_dynamodb_arn(f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders/index/g")
    assert index is not None and (index.table, index.stream_label) == ("orders", None)
    backup = parse_dynamodb_arn(f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:backup/b")
    assert backup is not None and backup.table == ""


@pytest.mark.parametrize("text", ["orders", "arn:aws:dynamodb:x", f"arn:aws:s3:{REGION}:{ACCOUNT}:table/orders", ""])
def test_texts_that_are_no_dynamodb_arn(text: str) -> None:
    assert parse_dynamodb_arn(text) is None
    assert account_of(text) == ""


def test_the_account_of_an_arn() -> None:
    assert account_of(f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders/stream/*") == ACCOUNT
