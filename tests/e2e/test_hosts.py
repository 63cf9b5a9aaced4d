"""What a page in a browser can make a server do: the Host rule against DNS rebinding and the Origin rule against
other sites' pages (docs/security.md "Browsers"), through raw HTTP as a browser sends it and through boto3."""

from __future__ import annotations

import hashlib
import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import make_client, make_streams_client, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture

LIST_TABLES = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables"}
SIGNED = {
    "X-Amz-Date": "20260101T000000Z",
    "Authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc",
}


def host_refusal(host: str) -> dict[str, str]:
    return {
        "message": f"Host '{host}' is not allowed: this server answers localhost, IP addresses, its --host name and "
        "the names given with --allowed-hosts (DYNASTORE_ALLOWED_HOSTS); see docs/security.md"
    }


def origin_refusal(origin: str) -> dict[str, str]:
    return {
        "message": f"Origin '{origin}' is not allowed: with --auth none this server answers browser requests only "
        "from its own pages and from pages of localhost, a loopback address or a name given with --allowed-hosts "
        "(DYNASTORE_ALLOWED_HOSTS); see docs/security.md"
    }


def send(
    port: int, method: str, path: str = "/", body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    """A request as a browser sends it: the Host header is the name in the page's URL, whatever the socket."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        data = response.read()
        answer: Any = data
        if response.getheader("Content-Type", "").startswith("application/json") and data:
            answer = json.loads(data)
        return response.status, {k.lower(): v for k, v in response.getheaders()}, answer
    finally:
        conn.close()


server = server_fixture("--metrics-port", "0", "--manual-clock")


@pytest.fixture(scope="module")
def metrics_port(server: ServerProcess) -> int:
    """The --metrics-port listener's port, from the server's second line."""
    assert server.process.stdout is not None
    line = server.process.stdout.readline()  # dynastore metrics on http://127.0.0.1:PORT/metrics
    return int(line.rsplit(":", 1)[1].split("/")[0])


@pytest.mark.parametrize(
    ("method", "path", "headers", "body"),
    [
        ("POST", "/", {**LIST_TABLES, **SIGNED}, b"{}"),
        ("POST", "/", {"Content-Type": "application/x-amz-json-1.0",
                       "X-Amz-Target": "DynamoDBStreams_20120810.ListStreams", **SIGNED}, b"{}"),
        ("GET", "/", {}, b""),
        ("GET", "/metrics", {}, b""),
        ("GET", "/console/", {}, b""),
        ("GET", "/dynastore/clock", {}, b""),
        ("POST", "/dynastore/clock", {"Content-Type": "application/json"}, b'{"advance": 10}'),
    ],
)  # fmt: skip
def test_a_rebound_name_reaches_nothing(
    server: ServerProcess, method: str, path: str, headers: dict[str, str], body: bytes
) -> None:
    clock = send(server.port, "GET", "/dynastore/clock", headers={"Host": "localhost"})[2]
    for host in ("evil.example", f"evil.example:{server.port}", "EVIL.example.:80"):
        status, response_headers, answer = send(server.port, method, path, body, {"Host": host, **headers})
        assert (status, answer) == (403, host_refusal(host))
        assert response_headers["content-type"] == "application/json"
    assert send(server.port, "GET", "/dynastore/clock", headers={"Host": "127.0.0.1"})[2] == clock  # nothing moved


def test_the_metrics_port_checks_the_host_too(metrics_port: int) -> None:
    port = metrics_port
    status, _, answer = send(port, "GET", "/metrics", headers={"Host": f"evil.example:{port}"})
    assert (status, answer) == (403, host_refusal(f"evil.example:{port}"))
    status, _, answer = send(port, "GET", "/metrics", headers={"Host": f"127.0.0.1:{port}"})
    assert status == 200 and b"dynastore_requests_total" in answer


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "LocalHost.", "127.0.0.1", "127.0.0.1:9", "[::1]:8000", "[::1]",
             "192.168.1.10:8000", "10.0.0.1", "[2001:db8::1]:443"],
)  # fmt: skip
def test_localhost_and_addresses_are_answered(server: ServerProcess, host: str) -> None:
    status, _, answer = send(server.port, "POST", "/", b"{}", {"Host": host, **LIST_TABLES, **SIGNED})
    assert status == 200 and "TableNames" in json.loads(answer)
    status, _, answer = send(server.port, "GET", "/", headers={"Host": host})
    assert (status, answer) == (200, f"healthy: {host} ".encode())


def test_boto3_through_localhost_and_the_loopback_address(server: ServerProcess) -> None:
    for url in (f"http://localhost:{server.port}", f"http://127.0.0.1:{server.port}"):
        client = make_client(url)
        name = unique_name()
        client.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        )
        client.put_item(TableName=name, Item={"pk": {"S": "a"}})
        assert client.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
        assert len(make_streams_client(url).list_streams(TableName=name)["Streams"]) == 1


PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization,content-type,x-amz-date,x-amz-target",
}


def test_a_page_of_another_site_is_refused_with_auth_none(server: ServerProcess) -> None:
    host = f"localhost:{server.port}"
    for origin in ("https://evil.example", "http://evil.example:3000", "null", "http://203.0.113.7"):
        status, headers, answer = send(server.port, "OPTIONS", "/", headers={"Host": host, "Origin": origin,
                                                                             **PREFLIGHT})  # fmt: skip
        assert (status, answer) == (403, origin_refusal(origin))
        assert not [name for name in headers if name.startswith("access-control")]
        status, _, answer = send(server.port, "POST", "/", b"{}", {"Host": host, "Origin": origin, **LIST_TABLES,
                                                                  **SIGNED})  # fmt: skip
        assert (status, answer) == (403, origin_refusal(origin))


@pytest.mark.parametrize(
    "origin", ["http://localhost:3000", "https://localhost", "http://127.0.0.1:5500", "http://[::1]:8080"]
)
def test_a_local_page_uses_the_sdk_with_auth_none(server: ServerProcess, origin: str) -> None:
    host = f"localhost:{server.port}"
    status, headers, answer = send(server.port, "OPTIONS", "/", headers={"Host": host, "Origin": origin, **PREFLIGHT})
    assert (status, answer) == (200, b"")
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-headers"] == PREFLIGHT["Access-Control-Request-Headers"]
    assert headers["access-control-allow-methods"] == "POST"
    assert headers["access-control-expose-headers"] == "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
    status, headers, answer = send(server.port, "POST", "/", b"{}", {"Host": host, "Origin": origin, **LIST_TABLES,
                                                                    **SIGNED})  # fmt: skip
    assert status == 200 and "TableNames" in json.loads(answer)
    assert headers["access-control-allow-origin"] == "*"


def test_the_servers_own_pages_call_it_from_any_address(server: ServerProcess) -> None:
    """The console opened at the machine's LAN address: the page's origin is the Host it was served for."""
    host = f"192.168.1.10:{server.port}"
    status, _, answer = send(server.port, "GET", "/dynastore/clock", headers={"Host": host, "Origin": f"http://{host}"})
    assert (status, answer["manual"]) == (200, True)
    status, _, answer = send(
        server.port, "GET", "/dynastore/clock", headers={"Host": host, "Origin": "http://192.168.1.10:1"}
    )
    assert (status, answer) == (403, origin_refusal("http://192.168.1.10:1"))  # fmt: skip


def test_allowed_hosts_names_more_hosts_and_local_pages() -> None:
    server = ServerProcess("--allowed-hosts", "db.example, Dev.Example.")
    try:
        for host in ("db.example", "db.example:8000", "DEV.example", "dev.example.:1"):
            status, _, answer = send(server.port, "GET", "/", headers={"Host": host})
            assert (status, answer) == (200, f"healthy: {host} ".encode())
        assert send(server.port, "GET", "/", headers={"Host": "sub.db.example"})[0] == 403
        origin = "http://dev.example:3000"
        status, headers, _ = send(server.port, "OPTIONS", "/", headers={"Host": "db.example", "Origin": origin,
                                                                        **PREFLIGHT})  # fmt: skip
        assert (status, headers["access-control-allow-origin"]) == (200, "*")
    finally:
        server.stop()


def test_allowed_hosts_from_the_environment_and_any_host() -> None:
    server = ServerProcess(env={"DYNASTORE_ALLOWED_HOSTS": "*"})
    try:
        for host in ("evil.example", "anything:1"):
            status, _, answer = send(server.port, "POST", "/", b"{}", {"Host": host, **LIST_TABLES, **SIGNED})
            assert status == 200 and "TableNames" in json.loads(answer)
        status, headers, _ = send(server.port, "OPTIONS", "/", headers={"Host": "evil.example",
                                                                        "Origin": "https://evil.example",
                                                                        **PREFLIGHT})  # fmt: skip
        assert (status, headers["access-control-allow-origin"]) == (200, "*")
    finally:
        server.stop()


def test_the_host_given_with_host_is_answered() -> None:
    server = ServerProcess("--host", "localhost")
    try:
        status, _, answer = send(server.port, "GET", "/", headers={"Host": f"localhost:{server.port}"})
        assert status == 200
        assert send(server.port, "GET", "/", headers={"Host": "localhost.example"})[0] == 403
    finally:
        server.stop()


def test_with_sigv4_any_origin_is_answered_as_dynamodb_answers_it() -> None:
    server = ServerProcess("--auth", "sigv4", env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": "AKIAHOSTSADMIN000001",
                                                   "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": "secret"})  # fmt: skip
    try:
        status, headers, _ = send(server.port, "OPTIONS", "/", headers={"Host": "127.0.0.1",
                                                                        "Origin": "https://app.example",
                                                                        **PREFLIGHT})  # fmt: skip
        assert (status, headers["access-control-allow-origin"]) == (200, "*")
        assert headers["access-control-expose-headers"] == "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
        status, _, answer = send(server.port, "GET", "/", headers={"Host": "evil.example"})
        assert (status, answer) == (403, host_refusal("evil.example"))  # the Host rule holds in every mode
    finally:
        server.stop()


def test_a_bad_allowed_host_stops_the_start() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", "0", "--allowed-hosts",
         "http://db.example:8000"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "dynastore serve: error: --allowed-hosts takes host names (or *), without scheme, port or path: "
        "'http://db.example:8000'"
    )


def presigned_list_tables(server: ServerProcess, region: str) -> tuple[str, dict[str, str]]:
    """A ListTables request presigned (signature in the query string) for ``region``: its query and headers."""
    from botocore.auth import SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(
        method="POST",
        url=f"http://localhost:{server.port}/",
        data=b"",
        headers={**LIST_TABLES, "X-Amz-Content-Sha256": hashlib.sha256(b"{}").hexdigest()},
    )
    SigV4QueryAuth(Credentials("AKIDEXAMPLE", "secret"), "dynamodb", region, expires=300).add_auth(request)
    return urlsplit(request.url).query, {"Host": f"localhost:{server.port}", **dict(request.headers.items())}


def listed_by_presigned(server: ServerProcess, region: str) -> list[str]:
    query, headers = presigned_list_tables(server, region)
    status, _, answer = send(server.port, "POST", f"/?{query}", b"{}", headers)
    assert status == 200
    names: list[str] = json.loads(answer)["TableNames"]
    return names


def test_a_presigned_request_is_served_with_auth_none(server: ServerProcess) -> None:
    assert isinstance(listed_by_presigned(server, "us-east-1"), list)
    query, headers = presigned_list_tables(server, "us-east-1")
    cut = query.replace("X-Amz-Credential=", "X-Amz-Nothing=")
    status, _, answer = send(server.port, "POST", f"/?{cut}", b"{}", headers)
    assert (status, json.loads(answer)) == (
        400,
        {"__type": "com.amazon.coral.service#IncompleteSignatureException",
         "message": "AWS query-string parameters must include 'X-Amz-Credential'. Re-examine the query-string "
         "parameters."},
    )  # fmt: skip


def test_a_presigned_request_is_in_the_region_of_its_credential_scope(server: ServerProcess) -> None:
    import boto3

    from tests.e2e.conftest import BOTO_CONFIG

    name = unique_name("presigned")
    ohio = boto3.client(
        "dynamodb", endpoint_url=server.url, region_name="us-east-2", aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret", config=BOTO_CONFIG,
    )  # fmt: skip
    ohio.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    assert name in listed_by_presigned(server, "us-east-2")
    assert name not in listed_by_presigned(server, "us-east-1")
