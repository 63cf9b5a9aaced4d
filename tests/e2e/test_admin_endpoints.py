"""dynastore's own endpoints cannot be driven from another site's page, their arguments are bounded, the store's
files are the server's user's only (whichever command makes the data directory), and TagResource / UntagResource
answer an empty body."""

from __future__ import annotations

import http.client
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess, server_fixture

manual = server_fixture("--manual-clock")


# A page of another port of this machine: the only pages a server without authentication answers (docs/security.md
# "Browsers"); even such a page cannot drive these endpoints.
LOCAL_PAGE = "http://localhost:3000"


def request(
    server: ServerProcess, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        conn.request(method, path, body=data, headers=headers or {})
        response = conn.getresponse()
        raw = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(raw) if raw else None
    finally:
        conn.close()


def now(server: ServerProcess) -> float:
    status, _, body = request(server, "GET", "/dynastore/clock")
    assert status == 200
    value: float = body["now"]
    return value


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_post_without_a_json_content_type_changes_nothing(manual: ServerProcess, content_type: str | None) -> None:
    before = now(manual)
    headers = {"Origin": LOCAL_PAGE}
    if content_type is not None:
        headers["Content-Type"] = content_type
    status, response_headers, body = request(manual, "POST", "/dynastore/clock", {"advance": 3600}, headers)
    assert (status, body) == (415, {"error": "a POST to a dynastore endpoint must have Content-Type: application/json"})
    assert not [name for name in response_headers if name.startswith("access-control")]
    assert now(manual) == before


def test_a_json_post_changes_state(manual: ServerProcess) -> None:
    before = now(manual)
    status, _, body = request(
        manual, "POST", "/dynastore/clock", {"advance": 10}, {"Content-Type": "application/json; charset=utf-8"}
    )
    assert (status, body) == (200, {"now": before + 10, "manual": True})


def test_admin_answers_carry_no_cors_headers(manual: ServerProcess) -> None:
    status, headers, _ = request(manual, "GET", "/dynastore/clock", headers={"Origin": LOCAL_PAGE})
    assert status == 200
    assert not [name for name in headers if name.startswith("access-control")]
    status, headers, body = request(
        manual,
        "OPTIONS",
        "/dynastore/clock",
        headers={
            "Origin": LOCAL_PAGE,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert (status, body) == (405, {"error": "OPTIONS is not supported here"})
    assert not [name for name in headers if name.startswith("access-control")]


def test_as_if_is_bounded(manual: ServerProcess) -> None:
    client = make_client(manual.url)
    table = create_table(client)
    status, _, body = request(
        manual, "POST", f"/dynastore/partitions/{table}", {"as_if": 10_001}, {"Content-Type": "application/json"}
    )
    assert (status, body) == (
        400,
        {"error": "as_if must be a whole number of partitions from 0 (stop) to 10000, or null"},
    )
    status, _, body = request(
        manual, "POST", f"/dynastore/partitions/{table}", {"as_if": 3}, {"Content-Type": "application/json"}
    )
    assert status == 200
    assert (body["partition_count"], body["as_if"]) == (3, 3)


def test_tag_and_untag_answer_an_empty_body(manual: ServerProcess) -> None:
    client = make_client(manual.url)
    table = create_table(client)
    arn = client.describe_table(TableName=table)["Table"]["TableArn"]
    auth = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Date": "20260101T000000Z",
        "Authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=host, Signature=abc",
    }
    for target, payload in (
        ("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]}),
        ("UntagResource", {"ResourceArn": arn, "TagKeys": ["k"]}),
    ):
        headers = {**auth, "X-Amz-Target": f"DynamoDB_20120810.{target}"}
        status, response_headers, body = request(manual, "POST", "/", payload, headers)
        assert (status, body) == (200, None)
        assert response_headers["content-length"] == "0"
        assert response_headers["x-amz-crc32"] == "0"
    assert client.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
    through_boto3 = client.tag_resource(ResourceArn=arn, Tags=[{"Key": "b", "Value": "3"}])["ResponseMetadata"]
    assert through_boto3["HTTPHeaders"]["content-length"] == "0"
    through_boto3 = client.untag_resource(ResourceArn=arn, TagKeys=["b"])["ResponseMetadata"]
    assert through_boto3["HTTPHeaders"]["content-length"] == "0"


def test_the_store_is_readable_by_the_servers_user_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = ServerProcess(data_dir=data)
    try:
        client = make_client(server.url)
        table = create_table(client)
        client.put_item(TableName=table, Item={"pk": {"S": "a"}})
        arn = client.create_backup(TableName=table, BackupName="modes")["BackupDetails"]["BackupArn"]
        while client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] == "CREATING":
            time.sleep(0.02)
        modes = {  # while it runs: the log's segments are there (a clean stop removes them)
            str(path.relative_to(data)): stat.S_IMODE(os.stat(path).st_mode)
            for path in [data, *sorted(data.rglob("*"))]
        }
    finally:
        server.stop()
    assert modes["."] == 0o700
    assert modes["wal"] == 0o700
    assert modes["backups"] == 0o700
    files = {name: mode for name, mode in modes.items() if name not in (".", "wal", "backups")}
    assert {"data.mdb", "lock.mdb", "dynastore.lock"} <= set(files)
    assert any(name.startswith("wal/") for name in files)
    assert sum(name.startswith("backups/") for name in files) == 2  # the backup's image and record
    assert files == dict.fromkeys(files, 0o600)


def _dynastore(*args: str) -> subprocess.CompletedProcess[str]:
    """The command with the usual umask (022: directories 0755 unless made private on purpose)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DYNASTORE_", "AWS_"))}
    return subprocess.run(
        [sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, env=environ, timeout=60,
        preexec_fn=lambda: os.umask(0o022),
    )  # fmt: skip


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_command_makes_the_data_directory_private(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text('{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}')
    commands = {
        "users": ("users", "add", "alice"),
        "policies": ("policies", "put", "--user", "alice", "--name", "all", "--file", str(policy)),
    }
    for name, command in commands.items():
        data = tmp_path / name / "nested" / "data"
        result = _dynastore(*command, "--data-dir", str(data))
        assert result.returncode == 0, result.stderr
        assert (_mode(data), _mode(data.parent), _mode(data.parent.parent)) == (0o700, 0o700, 0o700), name
    users_file = tmp_path / "own" / "credentials.json"
    assert _dynastore("users", "add", "bob", "--users-file", str(users_file)).returncode == 0
    assert (_mode(users_file.parent), _mode(users_file)) == (0o700, 0o600)
    # A server then started on the directory `dynastore users` made serves from it as it is.
    server = ServerProcess(data_dir=tmp_path / "users" / "nested" / "data")
    try:
        assert make_client(server.url).list_tables()["TableNames"] == []
    finally:
        server.stop()
    assert _mode(tmp_path / "users" / "nested" / "data") == 0o700
