"""In-process mode answering aiobotocore and aioboto3 clients (their own environment: see tests/aio/README.md).

Each test runs its coroutine with ``asyncio.run`` inside an in-process dynastore, as an async test suite does."""

from __future__ import annotations

import asyncio
from typing import Any

import aioboto3
import pytest
from aiobotocore.client import AioClientCreator
from aiobotocore.session import get_session
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError

from dynastore.testing import in_process

NO_RETRIES = BotoConfig(retries={"max_attempts": 0}, parameter_validation=False)
TABLE = "music"
KEY_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
DEFINITIONS = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]


async def _create(client: Any) -> None:
    await client.create_table(
        TableName=TABLE, KeySchema=KEY_SCHEMA, AttributeDefinitions=DEFINITIONS, BillingMode="PAY_PER_REQUEST"
    )


def test_an_aioboto3_client_made_in_the_block_is_answered_in_process() -> None:
    async def run() -> dict[str, Any]:
        async with aioboto3.Session().client("dynamodb", region_name="us-east-1", config=NO_RETRIES) as client:
            await _create(client)
            await client.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}})
            answer: dict[str, Any] = await client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}, "sk": {"N": "1"}})
            return answer

    with in_process():
        answer = asyncio.run(run())
    assert answer["Item"] == {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}}
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_errors_reach_an_aiobotocore_client_with_dynamodbs_code_and_message() -> None:
    async def run() -> ClientError:
        async with get_session().create_client("dynamodb", region_name="eu-west-1", config=NO_RETRIES) as client:
            await _create(client)
            await client.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
            with pytest.raises(ClientError) as refused:
                await client.put_item(
                    TableName=TABLE,
                    Item={"pk": {"S": "a"}, "sk": {"N": "1"}},
                    ConditionExpression="attribute_not_exists(pk)",
                )
            return refused.value

    with in_process(region="eu-west-1"):
        error = asyncio.run(run())
    assert error.response["Error"] == {
        "Code": "ConditionalCheckFailedException",
        "Message": "The conditional request failed",
    }
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_an_aioboto3_resource_reads_and_writes_through_the_same_dynastore() -> None:
    async def run() -> list[dict[str, Any]]:
        session = aioboto3.Session()
        async with session.client("dynamodb", region_name="us-east-1", config=NO_RETRIES) as client:
            await _create(client)
        async with session.resource("dynamodb", region_name="us-east-1", config=NO_RETRIES) as resource:
            table = await resource.Table(TABLE)
            for sk in (3, 1, 2):
                await table.put_item(Item={"pk": "p", "sk": sk})
            page = await table.query(
                KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": "p"}, ScanIndexForward=False
            )
            return list(page["Items"])

    with in_process():
        items = asyncio.run(run())
    assert [int(item["sk"]) for item in items] == [3, 2, 1]


def test_the_callers_loop_keeps_running_while_calls_are_answered() -> None:
    """Concurrent tasks of the test share its loop: calls are served from a worker thread, so a task that only
    counts loop turns advances while puts are in flight, and every put lands."""

    async def run() -> tuple[int, int]:
        turns = 0
        done = asyncio.Event()

        async def count_turns() -> None:
            nonlocal turns
            while not done.is_set():
                turns += 1
                await asyncio.sleep(0)

        async with aioboto3.Session().client("dynamodb", region_name="us-east-1", config=NO_RETRIES) as client:
            await _create(client)
            counter = asyncio.create_task(count_turns())
            await asyncio.gather(
                *(client.put_item(TableName=TABLE, Item={"pk": {"S": "k"}, "sk": {"N": str(i)}}) for i in range(20))
            )
            done.set()
            await counter
            page = await client.query(
                TableName=TABLE, KeyConditionExpression="pk = :k", ExpressionAttributeValues={":k": {"S": "k"}}
            )
            return turns, page["Count"]

    with in_process():
        turns, count = asyncio.run(run())
    assert count == 20
    assert turns > 0


def test_aiobotocores_client_creator_is_put_back_after_the_block() -> None:
    original = AioClientCreator.__dict__["create_client"]
    with in_process():
        assert AioClientCreator.__dict__["create_client"] is not original
    assert AioClientCreator.__dict__["create_client"] is original


def test_a_client_made_after_the_block_is_not_answered_in_process() -> None:
    async def run() -> Exception:
        async with get_session().create_client(
            "dynamodb",
            region_name="us-east-1",
            endpoint_url="http://127.0.0.1:9",  # nothing listens on the discard port
            config=NO_RETRIES,
            aws_access_key_id="a",
            aws_secret_access_key="b",
        ) as client:
            with pytest.raises(Exception) as failed:
                await client.list_tables()
            return failed.value

    with in_process():
        pass
    error = asyncio.run(run())
    assert "Could not connect" in str(error) or "Connect" in type(error).__name__
