"""End-to-end fixtures: one real server process per session, boto3 with client validation and retries off."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config as BotoConfig

from tests.e2e.server_process import ServerProcess

# What a request to dynastore's own endpoints (/dynastore/...) carries: a POST changes state only with it.
ADMIN = {"Content-Type": "application/json"}

BOTO_CONFIG = BotoConfig(parameter_validation=False, retries={"max_attempts": 0}, connect_timeout=10, read_timeout=60)


def make_client(url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=BOTO_CONFIG,
    )


def make_streams_client(url: str) -> Any:
    """A DynamoDB Streams client of the same endpoint."""
    return boto3.client(
        "dynamodbstreams",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=BOTO_CONFIG,
    )


@pytest.fixture(scope="session")
def endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    url = request.config.getoption("--url")
    if url:
        yield url
        return
    # Functional tests must not depend on timing: they write megabytes in bursts that throttle in enforce mode
    # (as they would on DynamoDB). Throttling itself is tested on servers of its own (test_capacity*.py).
    server = ServerProcess("--capacity", "report")
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def ddb(endpoint: str) -> Any:
    return make_client(endpoint)


def unique_name(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def create_table(ddb: Any, hash_type: str = "S", range_type: str | None = None, **extra: Any) -> str:
    name = unique_name()
    key_schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    definitions = [{"AttributeName": "pk", "AttributeType": hash_type}]
    if range_type is not None:
        key_schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        definitions.append({"AttributeName": "sk", "AttributeType": range_type})
    ddb.create_table(
        TableName=name,
        KeySchema=key_schema,
        AttributeDefinitions=definitions,
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    return name


@pytest.fixture(scope="module")
def table_s(ddb: Any) -> str:
    """A table with a string hash key `pk`."""
    return create_table(ddb, "S")


@pytest.fixture(scope="module")
def table_sn(ddb: Any) -> str:
    """A table with a string hash key `pk` and a number range key `sk`."""
    return create_table(ddb, "S", "N")


@pytest.fixture(scope="module")
def table_ss(ddb: Any) -> str:
    return create_table(ddb, "S", "S")


@pytest.fixture(scope="module")
def table_b(ddb: Any) -> str:
    return create_table(ddb, "B")


def error_of(call: Callable[[], Any]) -> tuple[str, str]:
    """Run ``call``, which must fail, and return (code, message)."""
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as info:
        call()
    error = info.value.response["Error"]
    return error["Code"], error.get("Message", "")
