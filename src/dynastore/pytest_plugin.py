"""The pytest plugin installed with dynastore (entry point ``pytest11``): a session-wide dynastore and boto3 fixtures.

Fixtures: ``dynastore`` (the session's dynastore: in process by default, or a ``dynastore serve`` process),
``dynamodb`` (a boto3 client) and ``dynamodb_resource`` (a boto3 resource), both starting each test with no
tables unless ``dynastore_isolation = none``. Options (command line, or the ini name in pytest.ini /
pyproject.toml): ``--dynastore-mode`` / ``dynastore_mode`` (``inprocess`` or ``server``), ``--dynastore-capacity``
/ ``dynastore_capacity``, ``--dynastore-manual-clock`` / ``dynastore_manual_clock``, ``--dynastore-auth`` /
``dynastore_auth`` (``sigv4``: the dynastore verifies signatures, and the fixtures' clients sign with the key of an
admin user made for the session, ``dynastore.credentials``), ``--dynastore-flags`` / ``dynastore_flags`` (any
``dynastore serve`` flags), ``dynastore_isolation`` and ``dynastore_hook_clients`` (true: every DynamoDB and
DynamoDB Streams client the session makes is answered in process, or, with a server, sent to it: ``pointed_at``).

Only pytest is imported here: dynastore, boto3 and botocore load when a test first asks for a fixture, so a
project that installs dynastore but does not use these fixtures pays nothing.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from dynastore.config import Config
    from dynastore.testing import Response

MODES = ("inprocess", "server")
AUTH = ("none", "sigv4")
ISOLATION = ("tables", "none")
_LISTENING = re.compile(r"listening on (http://[\d.]+:\d+)")
# botocore's endpoint variables of the services a dynastore serves (DynamoDB, and DynamoDB Streams at the same URL).
ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_DYNAMODB_STREAMS")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dynastore", "dynastore (DynamoDB-compatible database) fixtures")
    group.addoption("--dynastore-mode", choices=MODES, default=None, help="where the session's dynastore runs")
    group.addoption("--dynastore-capacity", default=None, help="the capacity mode: enforce or report")
    group.addoption(
        "--dynastore-manual-clock", action="store_true", default=None, help="time moves only when a test moves it"
    )
    group.addoption(
        "--dynastore-auth", choices=AUTH, default=None, help="sigv4: requests must be signed (an admin user is made)"
    )
    group.addoption("--dynastore-flags", default=None, help='more "dynastore serve" flags, e.g. "--region eu-west-1"')
    parser.addini("dynastore_mode", "inprocess (default) or server", default="inprocess")
    parser.addini("dynastore_capacity", "capacity mode of the session's dynastore", default="")
    parser.addini("dynastore_manual_clock", "the session's dynastore has a manual clock", type="bool", default=False)
    parser.addini("dynastore_auth", "none (default) or sigv4", default="none")
    parser.addini("dynastore_flags", '"dynastore serve" flags for the session\'s dynastore', default="")
    parser.addini("dynastore_isolation", "tables: each test starts with no tables; none: tables stay", default="tables")
    parser.addini(
        "dynastore_hook_clients",
        "every DynamoDB (and Streams) client made in the session is answered in process, or sent to the server "
        "(false: only the fixtures' clients)",
        type="bool",
        default=True,
    )


def _setting(config: pytest.Config, name: str) -> Any:
    value = config.getoption(f"--{name.replace('_', '-')}")
    return config.getini(name) if value is None else value


def serve_flags(config: pytest.Config) -> list[str]:
    """The ``dynastore serve`` flags the session's dynastore runs with, from the options."""
    flags = shlex.split(_setting(config, "dynastore_flags"))
    capacity = _setting(config, "dynastore_capacity")
    if capacity:
        flags += ["--capacity", capacity]
    if _setting(config, "dynastore_manual_clock"):
        flags.append("--manual-clock")
    if auth_of(config) == "sigv4":
        flags += ["--auth", "sigv4"]
    if "--data-dir" not in flags and "--in-memory" not in flags:
        flags.append("--in-memory")
    return flags


def auth_of(config: pytest.Config) -> str:
    auth = str(_setting(config, "dynastore_auth"))
    if auth not in AUTH:
        raise pytest.UsageError(f"dynastore_auth: {auth!r} is not one of {', '.join(AUTH)}")
    return auth


def session_credentials() -> dict[str, str]:
    """A new admin user's access key for the session's dynastore (the server seeds it from its environment)."""
    import base64
    import secrets

    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    return {
        "aws_access_key_id": "AKIA" + "".join(secrets.choice(alphabet) for _ in range(16)),
        "aws_secret_access_key": base64.b64encode(secrets.token_bytes(30)).decode(),
    }


def admin_environment(credentials: dict[str, str] | None) -> dict[str, str]:
    if credentials is None:
        return {}
    return {
        "DYNASTORE_ADMIN_ACCESS_KEY_ID": credentials["aws_access_key_id"],
        "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": credentials["aws_secret_access_key"],
    }


def mode_of(config: pytest.Config) -> str:
    mode = str(_setting(config, "dynastore_mode"))
    if mode not in MODES:
        raise pytest.UsageError(f"dynastore_mode: {mode!r} is not one of {', '.join(MODES)}")
    return mode


class ServerDynastore:
    """A ``dynastore serve`` process for the session, with the same methods as testing.InProcess."""

    def __init__(self, flags: list[str], credentials: dict[str, str] | None = None, region: str = "us-east-1") -> None:
        command = [sys.executable, "-m", "dynastore", "serve", "--port", "0", *flags]
        # The admin user clients sign with (None: the server takes any signature).
        self.credentials = credentials
        self.region = region  # the server's --region: its clients sign for it (tables are per region)
        environment = {**os.environ, **admin_environment(credentials)}
        # Its log goes to a file (a pipe nobody reads would fill up and stop it), read back if it fails to start.
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, text=True, env=environment)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = _LISTENING.search(line)
        if match is None:
            self.process.kill()
            self.process.wait()
            self.log.seek(0)
            reason = self.log.read().decode(errors="replace").strip()
            self.log.close()
            raise pytest.UsageError(f"dynastore serve {' '.join(flags)} did not start: {reason or line!r}")
        self.url = match.group(1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()

    def client(self, **kwargs: Any) -> Any:
        import boto3

        return boto3.client("dynamodb", **_client_arguments(self.url, self.region, kwargs, self.credentials))

    def resource(self, **kwargs: Any) -> Any:
        import boto3

        return boto3.resource("dynamodb", **_client_arguments(self.url, self.region, kwargs, self.credentials))

    def request(
        self,
        method: str,
        path: str,
        body: bytes | dict[str, Any] = b"",
        headers: dict[str, str] | None = None,
        *,
        sign: bool | None = None,
    ) -> Response:
        import urllib.error
        import urllib.request

        import orjson

        from dynastore.testing import Response

        sent = dict(headers or {})
        if isinstance(body, dict):
            body = orjson.dumps(body)
            sent.setdefault("Content-Type", "application/json")
        unsigned = not any(name.lower() == "authorization" for name in sent)
        if self.credentials is not None and sign is not False and (sign or unsigned):
            sent = signed(self.credentials, method, self.url + path, sent, body, self.region)
        request = urllib.request.Request(self.url + path, data=body or None, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return Response(answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read())
        except urllib.error.HTTPError as e:
            return Response(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())

    def advance_clock(self, seconds: float) -> float:
        response = self.request("POST", "/dynastore/clock", {"advance": seconds})
        if response.status != 200:
            raise RuntimeError(response.json()["error"])
        return float(response.json()["now"])


def signed(
    credentials: dict[str, str], method: str, url: str, headers: dict[str, str], body: bytes, region: str = "us-east-1"
) -> dict[str, str]:
    """``headers`` signed (SigV4, now) with ``credentials`` for a request to ``url``."""
    import time
    from urllib.parse import urlsplit

    from dynastore.security.sigv4 import sign_headers

    parts = urlsplit(url)
    return sign_headers(
        method,
        parts.path + (f"?{parts.query}" if parts.query else ""),
        {**headers, "Host": parts.netloc},
        body,
        access_key_id=credentials["aws_access_key_id"],
        secret=credentials["aws_secret_access_key"],
        region=region,
        amz_date=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
        session_token=credentials.get("aws_session_token", ""),
    )


def _client_arguments(
    url: str, region: str, kwargs: dict[str, Any], credentials: dict[str, str] | None
) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "endpoint_url": url,
        "region_name": region,
        "aws_access_key_id": "dynastore",
        "aws_secret_access_key": "dynastore",
    }
    if credentials is not None:
        arguments.update(credentials)
    arguments.update(kwargs)
    return arguments


@pytest.fixture(scope="session")
def dynastore(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The session's dynastore: a dynastore.testing.InProcess, or a ServerDynastore with ``--dynastore-mode
    server``. Both have ``client()``, ``resource()``, ``request(method, path, body)`` and ``advance_clock(s)``."""
    flags = serve_flags(request.config)
    credentials = session_credentials() if auth_of(request.config) == "sigv4" else None
    config = _serve_config(flags, credentials)
    hook_clients = bool(request.config.getini("dynastore_hook_clients"))
    if mode_of(request.config) == "server":
        server = ServerDynastore(flags, credentials, config.region)
        try:
            with pointed_at(server) if hook_clients else nullcontext():
                yield server
        finally:
            server.stop()
        return
    from dynastore.testing import InProcess

    with InProcess(config, hook_clients=hook_clients) as in_process:
        yield in_process


def _serve_config(flags: list[str], credentials: dict[str, str] | None) -> Config:
    """The Config the session's dynastore runs with (a server process takes the same flags)."""
    from dynastore.cli import serve_config

    try:
        with _environment(admin_environment(credentials)):
            return serve_config(flags)
    except SystemExit:  # argparse said why on stderr
        raise pytest.UsageError(f"not flags of dynastore serve: {' '.join(flags)}") from None


@contextmanager
def pointed_at(server: ServerDynastore) -> Iterator[None]:
    """While it lasts, every botocore DynamoDB and DynamoDB Streams client made without an endpoint of its own (the
    code under test's) goes to ``server``, never to AWS: botocore's service-specific endpoint variables name it
    (and configured endpoints are not ignored), and credentials and a region are filled in where the environment
    has none (``dynastore.testing.stand_in_environment``). Everything is put back afterwards."""
    from dynastore.testing import stand_in_environment

    forced = dict.fromkeys(ENDPOINT_VARIABLES, server.url)
    forced["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "false"
    missing = stand_in_environment(server.region, server.credentials)
    with _environment(forced), _environment({k: v for k, v in missing.items() if k not in os.environ}):
        yield


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="session")
def _dynastore_session_client(dynastore: Any) -> Any:
    return dynastore.client()


def delete_every_table(client: Any) -> None:
    """A clean slate without a restart: every table deleted, and gone before this returns."""
    names = [name for page in client.get_paginator("list_tables").paginate() for name in page["TableNames"]]
    for name in names:
        client.delete_table(TableName=name)
    waiter = client.get_waiter("table_not_exists")
    for name in names:
        waiter.wait(TableName=name, WaiterConfig={"Delay": 0.02, "MaxAttempts": 3000})


@pytest.fixture
def dynamodb(request: pytest.FixtureRequest, _dynastore_session_client: Any) -> Any:
    """A boto3 DynamoDB client of the session's dynastore; the test starts with no tables (dynastore_isolation)."""
    isolation = request.config.getini("dynastore_isolation")
    if isolation not in ISOLATION:
        raise pytest.UsageError(f"dynastore_isolation: {isolation!r} is not one of {', '.join(ISOLATION)}")
    if isolation == "tables":
        delete_every_table(_dynastore_session_client)
    return _dynastore_session_client


@pytest.fixture
def dynamodb_resource(dynamodb: Any, dynastore: Any) -> Any:
    """A boto3 DynamoDB resource of the session's dynastore (the same clean slate as ``dynamodb``)."""
    return dynastore.resource()
