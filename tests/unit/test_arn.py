"""A TableName that is a table ARN ("table name overloading")."""

from __future__ import annotations

import pytest

from dynastore.errors import AccessDeniedException, DynamoError, ValidationException
from dynastore.util.arn import table_name_in

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
