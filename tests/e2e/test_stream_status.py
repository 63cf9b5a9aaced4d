"""A stream is ENABLING, then ENABLED, and DISABLING, then DISABLED, while the UpdateTable that changed it is in
progress (a server whose table updates take 60 seconds on its manual clock)."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import unique_name
from tests.e2e.server_process import ServerProcess, server_fixture

server = server_fixture("--manual-clock", "--update-table-delay", "60", scope="function")


def _status(server: ServerProcess, arn: str) -> str:
    status: str = server.streams.describe_stream(StreamArn=arn)["StreamDescription"]["StreamStatus"]
    return status


def _listed(server: ServerProcess, name: str) -> list[tuple[str, str]]:
    streams: list[dict[str, Any]] = server.streams.list_streams(TableName=name)["Streams"]
    return [(s["StreamArn"], s["StreamLabel"]) for s in streams]


def test_status_follows_the_update_that_changed_the_stream(server: ServerProcess) -> None:
    name = unique_name()
    server.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    enable = {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    arn = server.ddb.update_table(TableName=name, StreamSpecification=enable)["TableDescription"]["LatestStreamArn"]
    assert _status(server, arn) == "ENABLING"
    server.advance(60)
    assert _status(server, arn) == "ENABLED"
    server.ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    assert _status(server, arn) == "DISABLING"
    server.advance(60)
    assert _status(server, arn) == "DISABLED"
    # An update of something else later does not make the stream look as if it were changing.
    server.ddb.update_table(TableName=name, StreamSpecification=enable)
    server.advance(60)
    newest = max(_listed(server, name), key=lambda s: s[1])[0]
    server.ddb.update_table(TableName=name, DeletionProtectionEnabled=True)
    assert _status(server, newest) == "ENABLED"
