"""Namespaces (an account and a region) seen from a real client while authentication is off: every request runs
as the server's one anonymous caller, so every client, whatever region it signs for, sees the tables of the
configured account and region; the admin endpoints name another namespace's table by query or by ARN."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.e2e.conftest import make_client
from tests.e2e.server_process import ServerProcess

KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}


@pytest.fixture(scope="module", params=[(), ("--shared-namespace",)], ids=["separate", "shared"])
def server(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    process = ServerProcess("--region", "eu-west-1", *request.param)
    yield process
    process.stop()


def get(server: ServerProcess, path: str) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_a_client_signing_for_another_region_sees_the_configured_namespace(server: ServerProcess) -> None:
    client = make_client(server.url)  # signs for us-east-1
    created = client.create_table(TableName="Music", **KEYS)["TableDescription"]
    assert created["TableArn"] == "arn:aws:dynamodb:eu-west-1:000000000000:table/Music"
    assert client.list_tables()["TableNames"] == ["Music"]
    arn = created["TableArn"]
    assert client.describe_table(TableName=arn)["Table"]["TableName"] == "Music"


def test_the_partitions_endpoint_takes_a_namespace(server: ServerProcess) -> None:
    client = make_client(server.url)
    if "Albums" not in client.list_tables()["TableNames"]:
        client.create_table(TableName="Albums", **KEYS)
    assert get(server, "/dynastore/partitions/Albums")[0] == 200
    assert get(server, "/dynastore/partitions/Albums?account=000000000000&region=eu-west-1")[0] == 200
    status, body = get(server, "/dynastore/partitions/Albums?account=111111111111")
    assert (status, body) == (404, {"error": "Requested resource not found: Table: Albums not found"})
    assert get(server, "/dynastore/partitions/Albums?region=us-east-1")[0] == 404
    arn = quote("arn:aws:dynamodb:eu-west-1:000000000000:table/Albums", safe="")
    assert get(server, f"/dynastore/partitions/{arn}")[0] == 200
    elsewhere = quote("arn:aws:dynamodb:us-east-1:000000000000:table/Albums", safe="")
    assert get(server, f"/dynastore/partitions/{elsewhere}")[0] == 404
