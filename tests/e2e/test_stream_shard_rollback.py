"""A shard map changed by a write that was then taken back: the first change after a shard's four hours rolls it
over, and when that change is a TransactWriteItems cancelled by a later item's condition, the rollover goes with
it. The next acknowledged write rolls the shard over for real, and its record stays readable after a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from dynastore.limits import STREAM_SHARD_ROLLOVER_SECONDS
from tests.e2e.server_process import ServerProcess
from tests.e2e.stream_reader import all_shards, stream_records, stream_table


def _shards_and_keys(server: ServerProcess, arn: str) -> tuple[list[str], list[str]]:
    shards = [shard["ShardId"] for shard in all_shards(server.streams, arn)]
    return shards, sorted(record["dynamodb"]["Keys"]["pk"]["S"] for record in stream_records(server, arn))


def test_a_rollover_taken_back_with_a_cancelled_transaction_loses_no_record_across_a_restart(tmp_path: Path) -> None:
    server = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        name, arn = stream_table(server)
        server.ddb.put_item(TableName=name, Item={"pk": {"S": "before"}})
        server.advance(STREAM_SHARD_ROLLOVER_SECONDS + 60)
        with pytest.raises(ClientError) as cancelled:
            server.ddb.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": name, "Item": {"pk": {"S": "after"}}}},
                    {
                        "ConditionCheck": {
                            "TableName": name,
                            "Key": {"pk": {"S": "absent"}},
                            "ConditionExpression": "attribute_exists(pk)",
                        }
                    },
                ]
            )
        assert cancelled.value.response["Error"] == {
            "Code": "TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[None, ConditionalCheckFailed]",
        }
        server.ddb.put_item(TableName=name, Item={"pk": {"S": "after"}})  # the same item: the same shard
        shards, keys = _shards_and_keys(server, arn)
        assert keys == ["after", "before"]
    finally:
        server.stop()
    server = ServerProcess("--manual-clock", data_dir=tmp_path)
    try:
        assert _shards_and_keys(server, arn) == (shards, keys)
    finally:
        server.stop()
