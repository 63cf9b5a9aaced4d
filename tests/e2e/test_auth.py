"""--auth sigv4 end to end: users made with `dynastore users` sign through boto3; refusals carry DynamoDB's types
and texts; the running server sees the store change; temporary credentials; clock skew by the server's clock;
admin endpoints; the partitions command; presigned requests; hostile headers; TLS."""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import boto3
import pytest

from tests.e2e.conftest import BOTO_CONFIG, error_of, sign_for, unique_name
from tests.e2e.server_process import ServerProcess

INVALID_TOKEN = ("UnrecognizedClientException", "The security token included in the request is invalid.")
MISMATCH = (
    "InvalidSignatureException",
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access "
    "Key and signing method. Consult the service documentation for details.",
)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DYNASTORE_", "AWS_"))}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, env=environ, timeout=60
    )


def add_user(data: Path, name: str, *extra: str) -> dict[str, str]:
    result = cli("users", "add", name, "--data-dir", str(data), "--json", *extra)
    assert result.returncode == 0, result.stderr
    shown: dict[str, str] = json.loads(result.stdout)
    return {"aws_access_key_id": shown["AccessKeyId"], "aws_secret_access_key": shown["SecretAccessKey"]}


LIST_TABLES_ONLY = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:ListTables", "Resource": "*"}]}'
)


def may_list_tables(where: Path, user: str, account: str = "000000000000", *, policies_file: bool = False) -> None:
    """Attach a policy allowing ListTables to ``user``: what these tests call to see a key accepted (without a
    policy an accepted key is refused with AccessDeniedException, which names the user)."""
    document = where.parent / f"list-tables-{user}.json"
    document.write_text(LIST_TABLES_ONLY)
    store = ["--policies-file", str(where)] if policies_file else ["--data-dir", str(where)]
    result = cli("policies", "put", *store, "--account-id", account, "--user", user, "--name", "list",
                 "--file", str(document))  # fmt: skip
    assert result.returncode == 0, result.stderr


def client(server: ServerProcess, credentials: dict[str, str], service: str = "dynamodb", **extra: Any) -> Any:
    arguments: dict[str, Any] = {"endpoint_url": server.url, "region_name": "us-east-1", "config": BOTO_CONFIG}
    arguments.update(credentials)
    arguments.update(extra)
    return boto3.client(service, **arguments)


def send(
    server: ServerProcess, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else None
    finally:
        conn.close()


def admin(
    server: ServerProcess, credentials: dict[str, str], method: str, path: str, body: Any = None, **overrides: str
) -> tuple[int, Any]:
    """A signed request to dynastore's own endpoints."""
    data = b"" if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Host": f"{server.host}:{server.port}"}
    return send(server, method, path, data, sign_for(credentials, method, path, headers, data, **overrides))


def amz(epoch: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(int(epoch)))


class Secured:
    def __init__(self, data: Path) -> None:
        self.data = data
        self.root = add_user(data, "root", "--admin")
        self.bob = add_user(data, "bob", "--group", "readers", "--account", "210987654321")
        may_list_tables(data, "bob", "210987654321")
        may_list_tables(data, "carol")
        self.server = ServerProcess("--auth", "sigv4", "--manual-clock", data_dir=data)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    setup = Secured(tmp_path_factory.mktemp("auth") / "data")
    yield setup
    setup.server.stop()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Secured]:
    """A server of its own, for tests that move its clock."""
    setup = Secured(tmp_path / "data")
    yield setup
    setup.server.stop()


def test_users_sign_tables_and_streams(secured: Secured) -> None:
    root = client(secured.server, secured.root)
    name = unique_name()
    root.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )
    root.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"S": "é" * 100}})
    assert root.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"]["v"] == {"S": "é" * 100}
    # bob's key is verified too; his tables are his own account's (none), and only ListTables is his to call
    assert client(secured.server, secured.bob).list_tables()["TableNames"] == []
    assert error_of(lambda: client(secured.server, secured.bob).describe_table(TableName=name)) == (
        "AccessDeniedException",
        f"User: arn:aws:iam::210987654321:user/bob is not authorized to perform: dynamodb:DescribeTable on "
        f"resource: arn:aws:dynamodb:us-east-1:210987654321:table/{name} because no identity-based policy allows "
        "the dynamodb:DescribeTable action",
    )
    streams = client(secured.server, secured.root, "dynamodbstreams").list_streams(TableName=name)["Streams"]
    assert len(streams) == 1


def test_refusals_through_boto3(secured: Secured) -> None:
    unknown = {"aws_access_key_id": "AKIAUNKNOWNUNKNOWN00", "aws_secret_access_key": "x"}
    assert error_of(lambda: client(secured.server, unknown).list_tables()) == INVALID_TOKEN
    wrong_secret = {**secured.root, "aws_secret_access_key": "wrong"}
    assert error_of(lambda: client(secured.server, wrong_secret).list_tables()) == MISMATCH
    assert error_of(lambda: client(secured.server, secured.root, region_name="moon").list_tables()) == (
        "InvalidSignatureException",
        "Credential should be scoped to a valid region, not 'moon'. ",
    )
    with_token = {**secured.root, "aws_session_token": "FwoGZXIvYXdzEXAMPLE"}
    assert error_of(lambda: client(secured.server, with_token).list_tables()) == INVALID_TOKEN
    status, body = send(
        secured.server,
        "POST",
        "/",
        b"{}",
        {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables"},
    )
    assert (status, body) == (
        400,
        {"__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
         "message": "Request is missing Authentication Token"},
    )  # fmt: skip


def _poll(check: Any, seconds: float = 10.0) -> bool:
    """The server re-reads the store at most every quarter second: poll (bounded) for a change to show."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def _refused(server: ServerProcess, credentials: dict[str, str]) -> bool:
    from botocore.exceptions import ClientError

    try:
        client(server, credentials).list_tables()
    except ClientError as e:
        return bool(e.response["Error"]["Code"] == "UnrecognizedClientException")
    return False


def test_the_running_server_sees_users_cli_changes(secured: Secured) -> None:
    data = str(secured.data)
    carol = add_user(secured.data, "carol")
    assert "TableNames" in client(secured.server, carol).list_tables()  # at once: a new key is looked up
    rotated = json.loads(cli("users", "rotate-key", "carol", "--data-dir", data, "--json").stdout)
    new = {"aws_access_key_id": rotated["AccessKeyId"], "aws_secret_access_key": rotated["SecretAccessKey"]}
    assert "TableNames" in client(secured.server, new).list_tables()
    assert "TableNames" in client(secured.server, carol).list_tables()  # the old key works until retired
    result = cli("users", "retire-key", "carol", carol["aws_access_key_id"], "--data-dir", data)
    assert result.returncode == 0, result.stderr
    assert _poll(lambda: _refused(secured.server, carol))
    assert "TableNames" in client(secured.server, new).list_tables()
    assert cli("users", "remove", "carol", "--data-dir", data).returncode == 0
    assert _poll(lambda: _refused(secured.server, new))


def test_users_list_shows_no_secrets(secured: Secured) -> None:
    result = cli("users", "list", "--data-dir", str(secured.data))
    assert result.returncode == 0
    assert "root arn:aws:iam::000000000000:user/root AIDA" in result.stdout
    assert "bob arn:aws:iam::210987654321:user/bob" in result.stdout and "groups=readers" in result.stdout
    assert secured.root["aws_access_key_id"] in result.stdout
    assert secured.root["aws_secret_access_key"] not in result.stdout
    assert secured.bob["aws_secret_access_key"] not in result.stdout
    path = secured.data / "security" / "credentials.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"


def test_temporary_credentials_work_until_they_expire(fresh: Secured) -> None:
    result = cli("users", "issue-temporary", "bob", "--duration", "900", "--data-dir", str(fresh.data))
    assert result.returncode == 0, result.stderr
    issued = json.loads(result.stdout)["Credentials"]
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", issued["AccessKeyId"])
    temporary = {
        "aws_access_key_id": issued["AccessKeyId"],
        "aws_secret_access_key": issued["SecretAccessKey"],
        "aws_session_token": issued["SessionToken"],
    }
    assert "TableNames" in client(fresh.server, temporary).list_tables()
    no_token = {k: v for k, v in temporary.items() if k != "aws_session_token"}
    assert error_of(lambda: client(fresh.server, no_token).list_tables()) == INVALID_TOKEN
    # The command dates the credentials by the wall clock; the server's manual clock stood still since it started.
    expires = datetime.fromisoformat(issued["Expiration"].replace("Z", "+00:00")).timestamp()
    status, body = admin(fresh.server, fresh.root, "GET", "/dynastore/clock")
    assert status == 200, body
    status, body = admin(fresh.server, fresh.root, "POST", "/dynastore/clock", {"advance": expires - body["now"] + 2})
    assert status == 200, body
    # The server's clock is past the expiry (Expiration is in whole seconds), within the skew allowed.
    assert error_of(lambda: client(fresh.server, temporary).list_tables()) == (
        "ExpiredTokenException",
        "The security token included in the request is expired",
    )


def test_clock_skew_is_judged_by_the_servers_clock(fresh: Secured) -> None:
    status, body = admin(fresh.server, fresh.root, "GET", "/dynastore/clock")
    assert status == 200 and body["manual"] is True
    start = body["now"]
    assert admin(fresh.server, fresh.root, "POST", "/dynastore/clock", {"advance": 960})[0] == 200
    server_now = start + 960  # a manual clock moves only when told to
    code, message = error_of(lambda: client(fresh.server, fresh.root).list_tables())
    signed = re.fullmatch(r"Signature expired: (\d{8}T\d{6}Z) is now earlier than (\S+) \((\S+) - 15 min\.\)", message)
    assert code == "InvalidSignatureException" and signed is not None, message
    assert (signed.group(2), signed.group(3)) == (amz(server_now - 900), amz(server_now))
    # Signed by the server's time, requests pass again; 16 minutes ahead of it, they are not yet current.
    status, _ = admin(fresh.server, fresh.root, "GET", "/dynastore/clock", amz_date=amz(server_now))
    assert status == 200
    ahead = amz(server_now + 960)
    status, body = admin(fresh.server, fresh.root, "GET", "/dynastore/clock", amz_date=ahead)
    assert status == 403
    assert body["error"].endswith(
        f"InvalidSignatureException: Signature not yet current: {ahead} is still later than "
        f"{amz(server_now + 900)} ({amz(server_now)} + 15 min.)"
    )


def test_admin_endpoints_need_an_admin_signature(secured: Secured) -> None:
    status, body = send(secured.server, "GET", "/dynastore/clock")
    assert (status, body) == (
        403,
        {"error": "this endpoint needs a request signed (SigV4) by an admin user: "
         "MissingAuthenticationTokenException: Request is missing Authentication Token"},
    )  # fmt: skip
    status, body = admin(secured.server, secured.bob, "GET", "/dynastore/clock")
    assert (status, body) == (
        403,
        {"error": "arn:aws:iam::210987654321:user/bob is not an admin user (dynastore users add NAME --admin)"},
    )
    wrong = {**secured.root, "aws_secret_access_key": "wrong"}
    status, body = admin(secured.server, wrong, "POST", "/dynastore/clock", {"advance": 1})
    assert status == 403 and "InvalidSignatureException" in body["error"]
    status, body = admin(secured.server, secured.root, "GET", "/dynastore/clock")
    assert status == 200 and body["manual"] is True


def _metrics(port: int, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/metrics", headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_metrics_on_the_main_port_need_an_admin_signature(secured: Secured) -> None:
    """The page names every table with its item count: on the main port it is an admin endpoint."""
    name = unique_name()
    client(secured.server, secured.root).create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    status, body = _metrics(secured.server.port)
    assert (status, json.loads(body)) == (
        403,
        {"error": "this endpoint needs a request signed (SigV4) by an admin user: "
         "MissingAuthenticationTokenException: Request is missing Authentication Token"},
    )  # fmt: skip
    host = {"Host": f"{secured.server.host}:{secured.server.port}"}
    status, body = _metrics(secured.server.port, sign_for(secured.bob, "GET", "/metrics", host, b""))
    assert (status, json.loads(body)) == (
        403,
        {"error": "arn:aws:iam::210987654321:user/bob is not an admin user (dynastore users add NAME --admin)"},
    )
    status, body = _metrics(secured.server.port, sign_for(secured.root, "GET", "/metrics", host, b""))
    assert status == 200 and f'dynastore_table_items{{table="{name}"}}'.encode() in body


def test_the_metrics_port_stays_open_with_authentication(tmp_path: Path) -> None:
    server = ServerProcess(
        "--auth", "sigv4", "--metrics-port", "0",
        env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": "AKIAMETRICSADMIN0001", "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": "secret"},
    )  # fmt: skip
    try:
        assert server.process.stdout is not None
        line = server.process.stdout.readline()  # dynastore metrics on http://127.0.0.1:PORT/metrics
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        status, body = _metrics(port)
        assert status == 200 and b"dynastore_requests_total" in body
        assert _metrics(server.port)[0] == 403
    finally:
        server.stop()


def test_the_partitions_command_signs_its_requests(secured: Secured) -> None:
    name = unique_name()
    client(secured.server, secured.root).create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    endpoint = ["--endpoint", secured.server.url, "--json"]
    refused = cli("partitions", name, *endpoint)
    assert refused.returncode == 1
    assert "needs a request signed (SigV4) by an admin user" in refused.stderr
    env = {"AWS_ACCESS_KEY_ID": secured.root["aws_access_key_id"],
           "AWS_SECRET_ACCESS_KEY": secured.root["aws_secret_access_key"]}  # fmt: skip
    shown = cli("partitions", name, *endpoint, "--set-as-if", "4", env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["partition_count"] == 4


def test_presigned_requests_over_http(secured: Secured) -> None:
    import hashlib

    from botocore.auth import SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    body = b"{}"
    request = AWSRequest(
        method="POST",
        url=secured.server.url + "/",
        data=b"",
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "X-Amz-Content-Sha256": hashlib.sha256(body).hexdigest(),
        },
    )
    credentials = Credentials(secured.root["aws_access_key_id"], secured.root["aws_secret_access_key"])
    SigV4QueryAuth(credentials, "dynamodb", "us-east-1", expires=300).add_auth(request)
    parts = urlsplit(request.url)
    path = f"{parts.path}?{parts.query}"
    status, answer = send(secured.server, "POST", path, body, dict(request.headers.items()))
    assert status == 200 and "TableNames" in answer
    status, answer = send(secured.server, "POST", path, b'{"Limit": 1}', dict(request.headers.items()))
    assert (status, answer["__type"].split("#")[1]) == (400, "InvalidSignatureException")


def _mutated(rng: random.Random, text: str) -> str:
    pieces = ["Credential=", ", ", "/", "=", "%2F", "%", "\t", "é", "X-Amz-Signature=", "&", "AWS4-HMAC-SHA256 "]
    chars = list(text)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(chars) + 1)
        if rng.random() < 0.5 and chars:
            del chars[min(at, len(chars) - 1)]
        else:
            chars[at:at] = list(rng.choice(pieces))
    return "".join(chars)


def test_hostile_signatures_never_get_a_500(secured: Secured) -> None:
    rng = random.Random(1124)
    body = b"{}"
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "Host": f"{secured.server.host}:{secured.server.port}",
    }
    good = sign_for(secured.root, "POST", "/", headers, body)
    statuses: dict[int, int] = {}
    conn = http.client.HTTPConnection(secured.server.host, secured.server.port, timeout=30)
    for i in range(400):
        sent = dict(good)
        path = "/"
        if i % 2:
            sent["Authorization"] = _mutated(rng, good["Authorization"])
            if rng.random() < 0.2:
                sent["X-Amz-Date"] = _mutated(rng, good["X-Amz-Date"])
        else:
            sent.pop("Authorization")
            query = good["Authorization"].replace("AWS4-HMAC-SHA256 ", "X-Amz-Algorithm=AWS4-HMAC-SHA256&")
            query = query.replace(", ", "&").replace("Credential=", "X-Amz-Credential=")
            path = "/?" + quote(_mutated(rng, f"{query}&X-Amz-Date={good['X-Amz-Date']}"), safe="/&=%;,+-_.~")
        try:
            latin = {k: v.encode().decode("latin-1") for k, v in sent.items()}  # header bytes as they are: UTF-8
            conn.request("POST", path, body=body, headers=latin)
            response = conn.getresponse()
            response.read()
            statuses[response.status] = statuses.get(response.status, 0) + 1
        except (http.client.HTTPException, OSError):
            conn.close()
            conn = http.client.HTTPConnection(secured.server.host, secured.server.port, timeout=30)
    conn.close()
    assert 500 not in statuses and set(statuses) <= {200, 400, 404}, statuses
    assert statuses.get(400, 0) > 300
    assert "TableNames" in client(secured.server, secured.root).list_tables()


def test_an_in_memory_server_needs_users() -> None:
    result = cli("serve", "--in-memory", "--auth", "sigv4", "--port", "0")
    assert result.returncode == 2
    assert result.stderr.endswith(
        "error: --auth sigv4 with --in-memory needs users: --users-file PATH or DYNASTORE_ADMIN_ACCESS_KEY_ID and "
        "DYNASTORE_ADMIN_SECRET_ACCESS_KEY\n"
    )


def test_an_in_memory_server_with_a_users_file_and_a_seeded_admin(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    dave = cli("users", "add", "dave", "--users-file", str(users_file), "--json")
    assert dave.returncode == 0, dave.stderr
    shown = json.loads(dave.stdout)
    may_list_tables(tmp_path / "policies.json", "dave", policies_file=True)
    seeded = {"aws_access_key_id": "AKIASEEDEDADMIN00001", "aws_secret_access_key": "seeded-secret"}
    server = ServerProcess(
        "--auth", "sigv4", "--users-file", str(users_file), "--policies-file", str(tmp_path / "policies.json"),
        env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": seeded["aws_access_key_id"],
             "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": seeded["aws_secret_access_key"]},
    )  # fmt: skip
    try:
        dave_key = {"aws_access_key_id": shown["AccessKeyId"], "aws_secret_access_key": shown["SecretAccessKey"]}
        assert "TableNames" in client(server, dave_key).list_tables()
        assert "TableNames" in client(server, seeded).list_tables()
        assert admin(server, seeded, "GET", "/dynastore/clock")[0] == 200
        assert admin(server, dave_key, "GET", "/dynastore/clock")[0] == 403
    finally:
        server.stop()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the openssl command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a certificate")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_tls_serves_https_with_keep_alive(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    seeded = {"aws_access_key_id": "AKIATLSADMIN00000001", "aws_secret_access_key": "tls-secret"}
    server = ServerProcess(
        "--auth", "sigv4", "--tls-cert", str(cert), "--tls-key", str(key),
        env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": seeded["aws_access_key_id"],
             "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": seeded["aws_secret_access_key"]},
    )  # fmt: skip
    try:
        assert server.url.startswith("https://127.0.0.1:")
        secure = client(server, seeded, verify=str(cert))
        name = unique_name()
        secure.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for i in range(20):
            secure.put_item(TableName=name, Item={"pk": {"S": f"k{i}"}})
        assert secure.scan(TableName=name)["Count"] == 20
        # Several requests over one TLS connection (keep-alive).
        context = ssl.create_default_context(cafile=str(cert))
        conn = http.client.HTTPSConnection(server.host, server.port, context=context, timeout=30)
        for _ in range(3):
            headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables",
                       "Host": f"{server.host}:{server.port}"}  # fmt: skip
            conn.request("POST", "/", body=b"{}", headers=sign_for(seeded, "POST", "/", headers, b"{}"))
            response = conn.getresponse()
            assert response.status == 200 and name in json.loads(response.read())["TableNames"]
        conn.close()
        # A client that does not trust the certificate does not get through.
        untrusting = http.client.HTTPSConnection(server.host, server.port, timeout=30)
        with pytest.raises(ssl.SSLError):
            untrusting.request("GET", "/")
        untrusting.close()
    finally:
        server.stop()


def test_a_certificate_that_does_not_load_stops_the_start(tmp_path: Path) -> None:
    missing = tmp_path / "missing.pem"
    result = cli("serve", "--in-memory", "--port", "0", "--tls-cert", str(missing), "--tls-key", str(missing))
    assert result.returncode == 1
    assert result.stderr.startswith("dynastore: error: cannot load the TLS certificate and key: ")
    half = cli("serve", "--in-memory", "--port", "0", "--tls-cert", str(missing))
    assert half.returncode == 2 and half.stderr.endswith("error: --tls-cert and --tls-key go together\n")


def test_users_command_refusals_are_one_line(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    assert cli("users", "add", "erin", "--data-dir", data).returncode == 0
    cases = [
        (("users", "add", "erin"), "dynastore users: error: user erin exists already\n"),
        (("users", "remove", "nobody"), "dynastore users: error: no user nobody\n"),
        (("users", "retire-key", "erin", "AKIANOSUCHKEYNOSUCHK"),
         "dynastore users: error: user erin has no access key AKIANOSUCHKEYNOSUCHK\n"),
        (("users", "add", "frank", "--account", "42"),
         "dynastore users: error: '42' is not an account id: 12 digits\n"),
        (("users", "issue-temporary", "erin", "--duration", "60"),
         "dynastore users: error: --duration must be 900 to 129600 seconds\n"),
    ]  # fmt: skip
    for args, stderr in cases:
        result = cli(*args, "--data-dir", data)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", stderr)
    shown = cli("users", "add", "gina", "--data-dir", data)
    assert shown.returncode == 0
    assert re.search(r"^AccessKeyId:     AKIA[A-Z2-7]{16}$", shown.stdout, re.MULTILINE)
    assert re.search(r"^SecretAccessKey: \S{40}$", shown.stdout, re.MULTILINE)
    assert "(the secret is shown only now: keep it)" in shown.stdout
