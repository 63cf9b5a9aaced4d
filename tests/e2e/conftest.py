"""End-to-end fixtures: one real server process per session, boto3 with client validation and retries off.

With --dynastore-cluster the session's dynastore is a three-node cluster instead (replication/local_cluster.py:
three etcd members, three `dynastore serve --cluster` nodes, with the flags the single server would have had), and
the fixtures that reach it (``endpoint``, ``ddb``, ``send``, ...) are made per test module, each module's on the next
node, so that every node serves as the endpoint. A test that cannot pass against a cluster by its nature is marked
``not_on_cluster(reason)`` and is not collected then (docs/cluster.md "What differs").
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError

from dynastore.pytest_plugin import (
    ServerDynastore,
    admin_environment,
    auth_of,
    mode_of,
    serve_flags,
    session_credentials,
)
from dynastore.security.sigv4 import sign_headers

# What a request to dynastore's own endpoints (/dynastore/...) carries: a POST changes state only with it.
ADMIN = {"Content-Type": "application/json"}

BOTO_CONFIG = BotoConfig(parameter_validation=False, retries={"max_attempts": 0}, connect_timeout=10, read_timeout=60)


def make_client(url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=BOTO_CONFIG,
    )


T = TypeVar("T")
THROTTLED = ("ThrottlingException", "ProvisionedThroughputExceededException")


def retrying_throttled(call: Callable[[], T]) -> T:
    """``call()`` as an SDK's retries make it: a request refused for throughput is sent again after a pause. Tests
    that load megabytes in a burst use it, so that they pass under --dynastore-capacity=enforce too, where such a
    burst is throttled as DynamoDB throttles it."""
    for _ in range(1200):
        try:
            return call()
        except ClientError as e:
            if e.response["Error"]["Code"] not in THROTTLED:
                raise
            time.sleep(0.05)
    return call()


def make_streams_client(url: str, signed_as: dict[str, str] | None = None) -> Any:
    """A DynamoDB Streams client of the same endpoint, signing with ``signed_as`` (the session admin's key when
    the suite runs with --dynastore-auth=sigv4) or a stand-in key."""
    credentials = signed_as or {"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}
    return boto3.client("dynamodbstreams", endpoint_url=url, region_name="us-east-1", config=BOTO_CONFIG, **credentials)


IN_PROCESS_HAS_NO_SOCKET = (
    "speaks HTTP over a socket: an in-process dynastore has none (runs with --dynastore-mode=server, the default)"
)


def in_process(request: pytest.FixtureRequest) -> bool:
    """Whether the session's dynastore (dynastore.pytest_plugin) runs in this process (--dynastore-mode=inprocess)."""
    return not request.config.getoption("--url") and mode_of(request.config) == "inprocess"


# ---- the session's dynastore as a cluster (--dynastore-cluster) ------------------------------------------------
CLUSTER = "--dynastore-cluster"


def on_cluster(config: pytest.Config) -> bool:
    return bool(config.getoption(CLUSTER, default=False))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "not_on_cluster(reason): cannot pass against a cluster by its nature (it restarts the session's server, "
        "reads its data directory, ...): not collected with --dynastore-cluster",
    )


# The fixtures that reach the session's dynastore (with --dynastore-cluster, the module's node): a test using none of
# them, directly or through another fixture, runs against servers of its own (server_process.py) or none.
SESSION_FIXTURES = frozenset(
    {
        "endpoint",
        "ddb",
        "ddb_old_form",
        "signed_as",
        "signer",
        "send",
        "cluster_node",
        "dynastore_cluster",
        "dynastore",
        "dynamodb",
        "dynamodb_resource",
    }
)


def reaches_the_session(item: pytest.Item) -> bool:
    """Whether the test uses the session's dynastore (its fixtures' closure names one of SESSION_FIXTURES)."""
    return not SESSION_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --dynastore-cluster: the tests marked not_on_cluster are left out, and so are the tests that never reach
    the session's dynastore (they start servers of their own, which are single servers either way: the run
    without --dynastore-cluster runs them, and running them again would only repeat it)."""
    if not on_cluster(config):
        return
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        marker = item.get_closest_marker("not_on_cluster")
        if marker is not None and not marker.args:
            raise pytest.UsageError(f"{item.nodeid}: not_on_cluster needs its reason")
        (kept if marker is None and reaches_the_session(item) else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


class ClusterNode(ServerDynastore):
    """One node of the session's cluster, with the methods of the single server (dynastore.pytest_plugin): its
    clients and requests go to this node, which forwards to the leader what it does not answer itself (writes,
    dynastore's own endpoints: the clock is the leader's)."""

    def __init__(self, url: str, credentials: dict[str, str] | None, region: str) -> None:
        self.url = url
        self.credentials = credentials
        self.region = region

    def stop(self) -> None:
        """The cluster stops at the end of the session, not its nodes one by one."""


class SessionCluster:
    """The session's cluster; ``next_node()`` hands out its nodes in turn."""

    def __init__(self, config: pytest.Config, directory: Any) -> None:
        from dynastore.pytest_plugin import _serve_config
        from dynastore.replication.local_cluster import ClusterError, LocalCluster

        flags = [f for f in serve_flags(config) if f != "--in-memory"]  # every node keeps its replica on disk
        credentials = session_credentials() if auth_of(config) == "sigv4" else None
        self.credentials = credentials
        self.region = _serve_config(flags, credentials).region
        signing = None if credentials is None else {**credentials, "region": self.region}
        self.cluster = LocalCluster(
            directory, serve_flags=flags, env=admin_environment(credentials), credentials=signing
        )
        try:
            self.cluster.start()
        except ClusterError as e:  # as the single server's failure to start: one error, not one per test
            raise pytest.UsageError(f"--dynastore-cluster: the cluster did not start: {e}") from None
        self._turns = itertools.cycle(self.cluster.urls)

    def next_node(self) -> ClusterNode:
        return ClusterNode(next(self._turns), self.credentials, self.region)


@pytest.fixture(scope="session")
def dynastore_cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    session = SessionCluster(request.config, tmp_path_factory.mktemp("cluster"))
    try:
        yield session
    finally:
        session.cluster.stop()


@pytest.fixture(scope="module")
def cluster_node(dynastore_cluster: SessionCluster) -> ClusterNode:
    """The node this test module's clients use (the next one for each module)."""
    return dynastore_cluster.next_node()


def session_dynastore(request: pytest.FixtureRequest) -> Any:
    """The session's dynastore (dynastore.pytest_plugin's), or with --dynastore-cluster this module's node."""
    return request.getfixturevalue("cluster_node" if on_cluster(request.config) else "dynastore")


def per_module_on_a_cluster(fixture_name: str, config: pytest.Config) -> Any:
    """The scope of the fixtures that reach the session's dynastore: the session, or the test module when each
    module uses another node of a cluster."""
    return "module" if on_cluster(config) else "session"


@pytest.fixture(scope=per_module_on_a_cluster)
def endpoint(request: pytest.FixtureRequest) -> str:
    """The URL of the session's dynastore: --url, or the plugin's server process. Functional tests must not depend
    on timing: they write megabytes in bursts that throttle in enforce mode (as they would on DynamoDB), so the
    session's dynastore runs with --capacity report (pyproject.toml); throttling itself is tested on servers of its
    own (test_capacity*.py)."""
    url: str | None = request.config.getoption("--url")
    if url:
        return url
    if in_process(request):
        pytest.skip(IN_PROCESS_HAS_NO_SOCKET)
    server: Any = session_dynastore(request)
    return str(server.url)


@pytest.fixture(scope=per_module_on_a_cluster)
def ddb(request: pytest.FixtureRequest) -> Any:
    """A boto3 client of the session's dynastore (over HTTP, or answered in process)."""
    url: str | None = request.config.getoption("--url")
    if url:
        return make_client(url)
    session: Any = session_dynastore(request)
    # With --dynastore-auth=sigv4 the session's dynastore fills in its admin user's key; else a stand-in one.
    stand_in = {} if session.credentials is not None else {"aws_access_key_id": "AKIDEXAMPLE"}
    return session.client(region_name="us-east-1", config=BOTO_CONFIG, **stand_in)


@pytest.fixture(scope=per_module_on_a_cluster)
def ddb_old_form(request: pytest.FixtureRequest) -> Any:
    """A client of the session's dynastore in eu-south-2, a region that still words validation messages in the
    older form (docs/operations.md "Validation messages"): values echoed, so a test can see what was validated."""
    url: str | None = request.config.getoption("--url")
    if url:
        return boto3.client(
            "dynamodb", endpoint_url=url, region_name="eu-south-2", aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key="secret", config=BOTO_CONFIG,
        )  # fmt: skip
    session: Any = session_dynastore(request)
    stand_in = {} if session.credentials is not None else {"aws_access_key_id": "AKIDEXAMPLE"}
    return session.client(region_name="eu-south-2", config=BOTO_CONFIG, **stand_in)


@pytest.fixture(scope=per_module_on_a_cluster)
def signed_as(request: pytest.FixtureRequest) -> dict[str, str] | None:
    """The session admin's key (``aws_access_key_id``, ``aws_secret_access_key``) when the suite runs with
    --dynastore-auth=sigv4, else None: tests whose answer depends on who asks (policies) look here."""
    if request.config.getoption("--url"):
        return None
    credentials: dict[str, str] | None = session_dynastore(request).credentials
    return credentials


def cross_account_denial(signed_as: dict[str, str] | None, action: str, arn: str) -> tuple[str, str]:
    """What a request for another account's (or region's) table gets: without authentication the anonymous caller
    is refused outright; with it, the admin is refused as IAM refuses a cross-account request that no resource
    policy allows."""
    if signed_as is None:
        return ("AccessDeniedException", "Access is denied")
    return (
        "AccessDeniedException",
        f"User: arn:aws:iam::000000000000:user/admin is not authorized to perform: {action} on resource: {arn} "
        f"because no resource-based policy allows the {action} action",
    )


# (method, path, headers, body) -> headers: a hand-written request's headers as the session's dynastore takes them.
# Without authentication they are left as they are; with --dynastore-auth=sigv4 a request whose Authorization header
# is well formed (a stand-in signature), or that goes to dynastore's own endpoints without one, is signed for real
# with the session's admin key, so that it reaches the checks it was written for; others are left as they are.
Signer = Callable[[str, str, dict[str, str], bytes], dict[str, str]]


@pytest.fixture(scope=per_module_on_a_cluster)
def signer(request: pytest.FixtureRequest) -> Signer:
    credentials: dict[str, str] | None = None
    host = "localhost"
    if not request.config.getoption("--url"):
        session: Any = session_dynastore(request)
        credentials = session.credentials
        if not in_process(request):
            host = urlsplit(session.url).netloc

    def sign(method: str, path: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        if credentials is None:
            return headers
        authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        own_endpoint = authorization is None and path.startswith("/dynastore/")  # they need an admin's signature
        well_formed = authorization is not None and all(
            part in authorization for part in ("Credential=", "SignedHeaders=", "Signature=")
        )
        if not (own_endpoint or well_formed):
            return headers
        kept = {k: v for k, v in headers.items() if k.lower() not in ("authorization", "x-amz-date", "host")}
        return sign_for(credentials, method, path, {**kept, "Host": host}, body)

    return sign


def sign_for(
    credentials: dict[str, str], method: str, path: str, headers: dict[str, str], body: bytes, **overrides: str
) -> dict[str, str]:
    """``headers`` (which name the Host) signed now with ``credentials``; ``overrides`` replace sign_headers's
    arguments (e.g. ``region``, ``amz_date``)."""
    arguments: dict[str, Any] = {
        "access_key_id": credentials["aws_access_key_id"],
        "secret": credentials["aws_secret_access_key"],
        "region": "us-east-1",
        "amz_date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
        "session_token": credentials.get("aws_session_token", ""),
    }
    arguments.update(overrides)
    return sign_headers(method, path, headers, body, **arguments)


# A request sent as it is (method, path, body, headers) -> (status, body): what tests of malformed or hand-written
# requests use, through a socket to a server or to an in-process dynastore's protocol layer (signed by ``signer``).
Send = Callable[[str, str, bytes, dict[str, str]], tuple[int, bytes]]


@pytest.fixture(scope=per_module_on_a_cluster)
def send(request: pytest.FixtureRequest, signer: Signer) -> Send:
    if in_process(request):
        session: Any = session_dynastore(request)

        def in_process_send(method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
            response = session.request(method, path, body, signer(method, path, headers, body), sign=False)
            return response.status, response.body

        return in_process_send
    url: str = request.getfixturevalue("endpoint")

    def http_send(method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        headers = signer(method, path, headers, body)
        sent = urllib.request.Request(url + path, data=body or None, method=method, headers=headers)
        try:
            with urllib.request.urlopen(sent, timeout=60) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    return http_send


def unique_name(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def create_table(
    ddb: Any,
    hash_type: str = "S",
    range_type: str | None = None,
    *,
    indexed: dict[str, str] | None = None,
    **extra: Any,
) -> str:
    """A new on-demand table keyed by ``pk`` (and ``sk``), once ACTIVE; ``indexed``: the types of the other
    attributes its indexes (in ``extra``) are keyed by."""
    name = unique_name()
    key_schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    definitions = [{"AttributeName": "pk", "AttributeType": hash_type}]
    if range_type is not None:
        key_schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        definitions.append({"AttributeName": "sk", "AttributeType": range_type})
    definitions += [{"AttributeName": attribute, "AttributeType": kind} for attribute, kind in (indexed or {}).items()]
    ddb.create_table(
        TableName=name,
        KeySchema=key_schema,
        AttributeDefinitions=definitions,
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    return name


def create_table_with_gsi(ddb: Any, projection: str = "ALL") -> str:
    """A new on-demand table keyed by the string ``pk``, with the GSI ``by_g`` on the string ``g``."""
    index = {
        "IndexName": "by_g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": projection},
    }
    return create_table(ddb, indexed={"g": "S"}, GlobalSecondaryIndexes=[index])


def create_provisioned_table_with_gsi(ddb: Any, read: int = 5, write: int = 5, **extra: Any) -> str:
    """A new provisioned table (``read`` and ``write`` units) keyed by the string ``pk``, with the GSI ``by_g``
    (all attributes, 5 read and 5 write units) on the string ``g``; not waited for."""
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
            }
        ],
        **extra,
    )
    return name


@pytest.fixture(scope="module")
def table_s(ddb: Any) -> str:
    """A table with a string hash key `pk`."""
    return create_table(ddb, "S")


@pytest.fixture(scope="module")
def table_sn(ddb: Any) -> str:
    """A table with a string hash key `pk` and a number range key `sk`."""
    return create_table(ddb, "S", "N")


@pytest.fixture(scope="module")
def table_ss(ddb: Any) -> str:
    return create_table(ddb, "S", "S")


@pytest.fixture(scope="module")
def table_b(ddb: Any) -> str:
    return create_table(ddb, "B")


def error_of(call: Callable[[], Any]) -> tuple[str, str]:
    """Run ``call``, which must fail, and return (code, message)."""
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as info:
        call()
    error = info.value.response["Error"]
    return error["Code"], error.get("Message", "")


# The AWS CLI's tests run where `aws` is installed and are skipped, with this reason, where it is not.
needs_aws_cli = pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is not installed")


def aws(endpoint: str, *args: str, signed_as: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``aws dynamodb <args>`` against ``endpoint`` with JSON output; (exit code, stdout, stderr)."""
    key = signed_as or {"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": key["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": key["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_PAGER": "",
    }
    done = subprocess.run(
        ["aws", "dynamodb", *args, "--endpoint-url", endpoint, "--output", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr
