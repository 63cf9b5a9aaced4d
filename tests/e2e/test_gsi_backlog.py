"""The GSI backlog a server reports (``/dynastore/indexes``) counts only writes that happened: the record a write
logged before it was refused (a transaction cancelled by its second item's condition, a batch whose second item
has an empty GSI key) is taken back with it, and nothing waits for it."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import create_table_with_gsi, make_client
from tests.e2e.server_process import ServerProcess


def _backlog(server: ServerProcess) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(urllib.request.urlopen(f"{server.url}/dynastore/indexes").read())
    return report


def _settled(server: ServerProcess) -> dict[str, Any]:
    """The report once nothing is waiting (or as it stands after 10 seconds)."""
    report = _backlog(server)
    for _ in range(500):
        if report["waiting"] == 0:
            break
        time.sleep(0.02)
        report = _backlog(server)
    return report


def _query(ddb: Any, table: str, g: str) -> list[dict[str, Any]]:
    return list(
        ddb.query(
            TableName=table,
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": g}},
        )["Items"]
    )


Refusal = tuple[str, str, list[str]]  # the error's code, its message, and a cancelled transaction's reasons


def _cancelled_transaction(ddb: Any, table: str) -> Refusal:
    """A TransactWriteItems whose first item is written before its second item's condition fails."""
    with pytest.raises(ClientError) as cancelled:
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": {"pk": {"S": "a"}, "g": {"S": "G"}}}},
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": {"pk": {"S": "b"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )
    error = cancelled.value.response
    reasons = [reason["Code"] for reason in error["CancellationReasons"]]
    return error["Error"]["Code"], error["Error"]["Message"], reasons


def _refused_batch(ddb: Any, table: str) -> Refusal:
    """A BatchWriteItem whose first item is written before its second item's empty GSI key refuses it all."""
    with pytest.raises(ClientError) as refused:
        ddb.batch_write_item(
            RequestItems={
                table: [
                    {"PutRequest": {"Item": {"pk": {"S": "a"}, "g": {"S": "G"}}}},
                    {"PutRequest": {"Item": {"pk": {"S": "b"}, "g": {"S": ""}}}},
                ]
            }
        )
    error = refused.value.response["Error"]
    return error["Code"], error["Message"], []


@pytest.mark.parametrize(
    ("write", "refusal"),
    [
        (
            _cancelled_transaction,
            (
                "TransactionCanceledException",
                "Transaction cancelled, please refer cancellation reasons for specific reasons "
                "[None, ConditionalCheckFailed]",
                ["None", "ConditionalCheckFailed"],
            ),
        ),
        (
            _refused_batch,
            (
                "ValidationException",
                "One or more parameter values are not valid. A value specified for a secondary index key is not "
                "supported. The AttributeValue for a key attribute cannot contain an empty string value. "
                "IndexName: by_g, IndexKey: g",
                [],
            ),
        ),
    ],
    ids=["a cancelled transaction", "a batch refused by its second item"],
)
def test_a_write_taken_back_leaves_nothing_in_the_gsi_backlog(
    write: Callable[[Any, str], Refusal], refusal: Refusal
) -> None:
    server = ServerProcess()
    try:
        ddb = make_client(server.url)
        table = create_table_with_gsi(ddb)
        assert write(ddb, table) == refusal
        assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "a"}})  # nothing was written
        report = _settled(server)
        assert (report["waiting"], report["applied"], report["samples"]) == (0, 0, 0)
        assert _query(ddb, table, "G") == []
        ddb.put_item(TableName=table, Item={"pk": {"S": "c"}, "g": {"S": "G"}})
        assert _query(ddb, table, "G") == [{"pk": {"S": "c"}, "g": {"S": "G"}}]
        report = _settled(server)
        assert (report["waiting"], report["applied"]) == (0, 1)
    finally:
        server.stop()
