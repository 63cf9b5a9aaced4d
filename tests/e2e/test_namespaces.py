"""Namespaces (an account and a region) seen from real clients. While authentication is off every request is the
server's anonymous caller of the configured account, in the region its credential scope names (as DynamoDB, and
DynamoDB Local, keep regions apart), unless ``--shared-namespace``; a stand-in Authorization header naming no
region is the configured region's. The admin endpoints name another namespace's table by query or by ARN. And a
request in a region without tables builds nothing per request (with authentication on: no policies file read)."""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3
import pytest

from tests.e2e.conftest import BOTO_CONFIG, error_of
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.stream_reader import all_shards, read_shard

CONFIGURED = "eu-west-1"  # the servers' --region
KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}
STREAM = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}}
# What the console sends without a key: a header of the right form whose scope names no AWS region.
STAND_IN = (
    "AWS4-HMAC-SHA256 Credential=console/20000101/local/dynamodb/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=console"
)


def client(url: str, region: str, service: str = "dynamodb", **extra: Any) -> Any:
    """A client signing for ``region`` (any key: authentication is off unless the server says otherwise)."""
    arguments: dict[str, Any] = {
        "endpoint_url": url,
        "region_name": region,
        "aws_access_key_id": "AKIDEXAMPLE",
        "aws_secret_access_key": "secret",
        "config": BOTO_CONFIG,
    }
    arguments.update(extra)
    return boto3.client(service, **arguments)


separate = server_fixture("--region", CONFIGURED)
shared = server_fixture("--region", CONFIGURED, "--shared-namespace")


def http_request(server: ServerProcess, method: str, path: str, body: bytes = b"", **headers: str) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def stand_in_list_tables(server: ServerProcess) -> list[str]:
    status, body = http_request(server, "POST", "/", b"{}", **{
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "X-Amz-Date": "20000101T000000Z", "Authorization": STAND_IN,
    })  # fmt: skip
    assert status == 200, body
    names: list[str] = body["TableNames"]
    return names


def test_without_authentication_each_region_has_its_own_tables(separate: ServerProcess) -> None:
    ohio, virginia = client(separate.url, "us-east-2"), client(separate.url, "us-east-1")
    created = ohio.create_table(TableName="Music", **KEYS)["TableDescription"]
    assert created["TableArn"] == "arn:aws:dynamodb:us-east-2:000000000000:table/Music"  # the configured account
    assert ohio.list_tables()["TableNames"] == ["Music"]
    assert virginia.list_tables()["TableNames"] == []
    assert client(separate.url, CONFIGURED).list_tables()["TableNames"] == []
    assert error_of(lambda: virginia.describe_table(TableName="Music")) == (
        "ResourceNotFoundException", "Requested resource not found: Table: Music not found"
    )  # fmt: skip
    virginia.create_table(TableName="Music", **KEYS)  # the same name in another region is another table
    ohio.put_item(TableName="Music", Item={"pk": {"S": "ohio"}})
    assert virginia.scan(TableName="Music")["Items"] == []
    assert ohio.describe_table(TableName=created["TableArn"])["Table"]["TableArn"] == created["TableArn"]
    assert error_of(lambda: virginia.describe_table(TableName=created["TableArn"])) == (
        "AccessDeniedException", "Access is denied"
    )  # fmt: skip


def test_a_request_naming_no_region_is_the_configured_region_s(separate: ServerProcess) -> None:
    configured = client(separate.url, CONFIGURED)
    configured.create_table(TableName="Albums", **KEYS)
    assert "Albums" in stand_in_list_tables(separate)  # the console without a key, curl with a stand-in header
    assert "Albums" not in client(separate.url, "us-east-2").list_tables()["TableNames"]


def test_streams_follow_the_region(separate: ServerProcess) -> None:
    oregon = client(separate.url, "us-west-2")
    oregon.create_table(TableName="Events", **KEYS, **STREAM)
    oregon.put_item(TableName="Events", Item={"pk": {"S": "e1"}})
    streams = client(separate.url, "us-west-2", "dynamodbstreams")
    listed = streams.list_streams()["Streams"]
    assert [s["TableName"] for s in listed] == ["Events"]
    arn = listed[0]["StreamArn"]
    assert arn.startswith("arn:aws:dynamodb:us-west-2:000000000000:table/Events/stream/")
    records = [r for shard in all_shards(streams, arn) for r in read_shard(streams, arn, shard["ShardId"], None)]
    assert [(r["awsRegion"], r["dynamodb"]["Keys"]) for r in records] == [("us-west-2", {"pk": {"S": "e1"}})]
    elsewhere = client(separate.url, "us-east-1", "dynamodbstreams")
    assert elsewhere.list_streams()["Streams"] == []
    assert error_of(lambda: elsewhere.describe_stream(StreamArn=arn)) == (
        "ResourceNotFoundException", f"Requested resource not found: Stream: {arn} not found"
    )  # fmt: skip


def test_shared_namespace_keeps_one_namespace_for_every_region(shared: ServerProcess) -> None:
    created = client(shared.url, "us-east-2").create_table(TableName="Music", **KEYS)["TableDescription"]
    assert created["TableArn"] == f"arn:aws:dynamodb:{CONFIGURED}:000000000000:table/Music"
    for region in ("us-east-1", "ap-south-2", CONFIGURED):
        assert client(shared.url, region).list_tables()["TableNames"] == ["Music"]
    assert stand_in_list_tables(shared) == ["Music"]


@pytest.mark.parametrize("fixture", ["separate", "shared"])
def test_the_partitions_endpoint_takes_a_namespace(request: pytest.FixtureRequest, fixture: str) -> None:
    server: ServerProcess = request.getfixturevalue(fixture)
    configured = client(server.url, CONFIGURED)
    if "Singles" not in configured.list_tables()["TableNames"]:
        configured.create_table(TableName="Singles", **KEYS)
    assert request_status(server, "/dynastore/partitions/Singles") == 200  # no Authorization: the configured region
    assert request_status(server, f"/dynastore/partitions/Singles?account=000000000000&region={CONFIGURED}") == 200
    status, body = http_request(server, "GET", "/dynastore/partitions/Singles?account=111111111111")
    assert (status, body) == (404, {"error": "Requested resource not found: Table: Singles not found"})
    assert request_status(server, "/dynastore/partitions/Singles?region=us-east-1") == 404
    arn = quote(f"arn:aws:dynamodb:{CONFIGURED}:000000000000:table/Singles", safe="")
    assert request_status(server, f"/dynastore/partitions/{arn}") == 200
    elsewhere = quote("arn:aws:dynamodb:us-east-1:000000000000:table/Singles", safe="")
    assert request_status(server, f"/dynastore/partitions/{elsewhere}") == 404


def request_status(server: ServerProcess, path: str) -> int:
    return http_request(server, "GET", path)[0]


def test_a_data_directory_keeps_each_region_s_tables_across_a_restart(tmp_path: Path) -> None:
    server = ServerProcess("--region", CONFIGURED, data_dir=tmp_path)
    try:
        client(server.url, CONFIGURED).create_table(TableName="Here", **KEYS)
        client(server.url, "us-east-2").create_table(TableName="There", **KEYS)
    finally:
        server.stop()
    server = ServerProcess("--region", CONFIGURED, data_dir=tmp_path)
    try:
        assert client(server.url, CONFIGURED).list_tables()["TableNames"] == ["Here"]
        assert client(server.url, "us-east-2").list_tables()["TableNames"] == ["There"]
        assert stand_in_list_tables(server) == ["Here"]
    finally:
        server.stop()


ADMIN_KEY = {"aws_access_key_id": "AKIANAMESPACESADMIN1", "aws_secret_access_key": "namespaces-admin-secret"}


def test_a_request_in_a_region_without_tables_reads_no_policies_file(tmp_path: Path) -> None:
    # A policies file the server cannot parse is reported once, when read; a request that read it again (as one
    # in a region without tables did, building that namespace's state afresh) would report it again.
    policies = tmp_path / "policies.json"
    policies.write_text("{not json")
    os.chmod(policies, 0o600)
    server = ServerProcess(
        "--auth", "sigv4", "--policies-file", str(policies),
        env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": ADMIN_KEY["aws_access_key_id"],
             "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": ADMIN_KEY["aws_secret_access_key"]},
    )  # fmt: skip
    try:
        for region in ("ap-south-2", "ap-south-2", "sa-east-1", "us-east-1"):
            assert client(server.url, region, **ADMIN_KEY).list_tables()["TableNames"] == []
        assert server.log_text().count(f"policies file {policies} not loaded") == 1
    finally:
        server.stop()
