"""The pytest plugin (dynastore.pytest_plugin), run by pytest's own ``pytester`` on small test files."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

INI = """
[pytest]
filterwarnings =
    error
    ignore::DeprecationWarning:botocore.*
    ignore::DeprecationWarning:dateutil.*
{extra}
"""

MAKE_TABLE = """
def make_table(client, name):
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
"""


def configure(pytester: pytest.Pytester, extra: str = "") -> None:
    pytester.makeini(INI.format(extra=extra))


def test_each_test_starts_with_no_tables_in_one_session_dynastore(pytester: pytest.Pytester) -> None:
    configure(pytester)
    pytester.makepyfile(
        MAKE_TABLE
        + """
seen = []

def test_first(dynamodb, dynastore):
    seen.append(id(dynastore))
    assert dynamodb.list_tables()["TableNames"] == []
    make_table(dynamodb, "first_table")
    dynamodb.put_item(TableName="first_table", Item={"pk": {"S": "a"}})
    assert dynamodb.list_tables()["TableNames"] == ["first_table"]

def test_second(dynamodb, dynastore):
    seen.append(id(dynastore))
    assert dynamodb.list_tables()["TableNames"] == []
    make_table(dynamodb, "first_table")  # the same name again: the old one is gone, not deleting
    assert seen[0] == seen[1]
    assert type(dynastore).__name__ == "InProcess"
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_the_resource_fixture_and_errors_as_dynamodbs(pytester: pytest.Pytester) -> None:
    configure(pytester)
    pytester.makepyfile(
        MAKE_TABLE
        + """
import pytest
from botocore.exceptions import ClientError

def test_resource(dynamodb, dynamodb_resource):
    make_table(dynamodb, "things")
    table = dynamodb_resource.Table("things")
    table.put_item(Item={"pk": "a", "n": 3})
    assert table.get_item(Key={"pk": "a"})["Item"] == {"pk": "a", "n": 3}
    with pytest.raises(ClientError) as info:
        dynamodb.get_item(TableName="missing", Key={"pk": {"S": "a"}})
    assert info.value.response["Error"] == {
        "Code": "ResourceNotFoundException", "Message": "Requested resource not found"
    }
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_code_under_test_making_its_own_client_is_answered(pytester: pytest.Pytester) -> None:
    configure(pytester)
    pytester.makepyfile(
        MAKE_TABLE
        + """
import boto3

def count_tables():  # application code: its own client, no endpoint
    return len(boto3.client("dynamodb", region_name="us-east-1").list_tables()["TableNames"])

def test_app(dynamodb):
    make_table(dynamodb, "app_table")
    assert count_tables() == 1
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_isolation_none_keeps_tables(pytester: pytest.Pytester) -> None:
    configure(pytester, "dynastore_isolation = none")
    pytester.makepyfile(
        MAKE_TABLE
        + """
def test_first(dynamodb):
    make_table(dynamodb, "kept_table")

def test_second(dynamodb):
    assert dynamodb.list_tables()["TableNames"] == ["kept_table"]
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


@pytest.mark.parametrize("mode", ["inprocess", "server"])
def test_options_from_the_ini_file(pytester: pytest.Pytester, mode: str) -> None:
    configure(pytester, f"dynastore_mode = {mode}\ndynastore_manual_clock = true\ndynastore_flags = --region eu-west-1")
    pytester.makepyfile(
        MAKE_TABLE
        + """
def test_clock_and_region(dynastore, dynamodb):
    now = dynastore.request("GET", "/dynastore/clock").json()["now"]
    assert dynastore.advance_clock(60) == now + 60
    make_table(dynamodb, "regional")
    arn = dynamodb.describe_table(TableName="regional")["Table"]["TableArn"]
    assert arn.startswith("arn:aws:dynamodb:eu-west-1:")
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


CAPACITY_TEST = (
    MAKE_TABLE
    + """
def test_capacity(dynastore):
    assert dynastore.request("GET", "/").status == 200
    mode = dynastore.request("GET", "/dynastore/clock").json()["manual"]
    assert mode is True
"""
)


def test_command_line_options_win_over_the_ini_file(pytester: pytest.Pytester) -> None:
    configure(pytester, "dynastore_manual_clock = false")
    pytester.makepyfile(CAPACITY_TEST)
    pytester.runpytest("-p", "no:cacheprovider", "--dynastore-manual-clock").assert_outcomes(passed=1)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)


def test_server_mode_runs_a_server_process(pytester: pytest.Pytester) -> None:
    configure(pytester)
    pytester.makepyfile(
        MAKE_TABLE
        + """
def test_server(dynastore, dynamodb):
    assert dynastore.url.startswith("http://127.0.0.1:")
    assert dynastore.process.poll() is None
    make_table(dynamodb, "served")
    assert dynamodb.meta.endpoint_url == dynastore.url
    assert dynamodb.list_tables()["TableNames"] == ["served"]
    assert dynastore.request("POST", "/dynastore/clock", {"advance": 1}).status == 400
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--dynastore-mode=server").assert_outcomes(passed=1)


def test_a_bad_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    configure(pytester, "dynastore_mode = cloud")
    pytester.makepyfile("def test_x(dynastore):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*dynastore_mode: 'cloud' is not one of inprocess, server*"])


def test_the_decorator_on_a_test_with_fixtures(pytester: pytest.Pytester) -> None:
    configure(pytester)
    pytester.makepyfile(
        MAKE_TABLE
        + """
import boto3
from dynastore.testing import mock_dynamodb

@mock_dynamodb(capacity="report")
def test_decorated(tmp_path):
    client = boto3.client("dynamodb", region_name="us-east-1")
    make_table(client, "decorated")
    assert tmp_path.is_dir()
    assert client.list_tables()["TableNames"] == ["decorated"]
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize("mode", ["inprocess", "server"])
def test_a_wrong_flag_is_a_usage_error_naming_it(pytester: pytest.Pytester, mode: str) -> None:
    configure(pytester)
    pytester.makepyfile("def test_x(dynastore):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--dynastore-mode={mode}",
                                           "--dynastore-capacity=sometimes")  # fmt: skip
    assert result.ret != 0
    assert "invalid choice: 'sometimes'" in result.stderr.str() + result.stdout.str()


def test_a_project_not_using_the_fixtures_imports_nothing_of_dynastore(pytester: pytest.Pytester) -> None:
    configure(pytester)
    pytester.makepyfile(
        """
import sys

def test_nothing_loaded():
    assert "dynastore.testing" not in sys.modules
    assert "dynastore.app" not in sys.modules
    assert "boto3" not in sys.modules
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "dynastore.pytest_plugin").assert_outcomes(passed=1)


AUTH_TEST = (
    MAKE_TABLE
    + """
import boto3
import pytest
from botocore.exceptions import ClientError


def test_signed(dynastore, dynamodb, dynamodb_resource):
    key = dynastore.credentials["aws_access_key_id"]
    assert key.startswith("AKIA") and len(key) == 20
    make_table(dynamodb, "signed")
    dynamodb_resource.Table("signed").put_item(Item={"pk": "a"})
    assert dynamodb.get_item(TableName="signed", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    assert dynastore.request("GET", "/dynastore/clock").status == 200  # signed as the session's admin
    assert dynastore.request("GET", "/dynastore/clock", sign=False).status == 403
    stranger = dynastore.client(aws_access_key_id="AKIASTRANGERSTRANGER", aws_secret_access_key="x")
    with pytest.raises(ClientError) as info:
        stranger.list_tables()
    assert info.value.response["Error"]["Code"] == "UnrecognizedClientException"
"""
)


@pytest.mark.parametrize("mode", ["inprocess", "server"])
def test_sigv4_auth_signs_the_fixtures_clients_with_a_session_admin(pytester: pytest.Pytester, mode: str) -> None:
    configure(pytester)
    pytester.makepyfile(AUTH_TEST)
    arguments = ["-p", "no:cacheprovider", f"--dynastore-mode={mode}", "--dynastore-auth=sigv4"]
    pytester.runpytest_subprocess(*arguments).assert_outcomes(passed=1)
    # Without authentication the session has no credentials: the test's first line fails.
    pytester.runpytest_subprocess(*arguments[:-1]).assert_outcomes(failed=1)


# Application code: clients with no endpoint, region or credentials of their own.
APPLICATION_CODE_TEST = (
    MAKE_TABLE
    + """
import boto3


def test_application_clients_reach_the_session_s_server(dynastore, dynamodb):
    make_table(dynamodb, "served")
    app = boto3.client("dynamodb")
    assert app.meta.endpoint_url == dynastore.url  # checked before any call: no request can go anywhere else
    assert app.list_tables()["TableNames"] == ["served"]
    assert boto3.resource("dynamodb").Table("served").table_status == "ACTIVE"
    streams = boto3.client("dynamodbstreams")
    assert streams.meta.endpoint_url == dynastore.url
    assert streams.list_streams()["Streams"] == []
"""
)

# Records, once the session is over (its dynastore stopped), the variables the plugin sets.
RECORD_ENVIRONMENT = """
import json
import os

NAMES = ["AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_DYNAMODB_STREAMS", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
         "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"]


def pytest_sessionfinish(session):
    after = {name: os.environ.get(name) for name in NAMES}
    (session.config.rootpath / "environment_after.json").write_text(json.dumps(after))
"""

# Where a client that was not pointed at the session's server would send its requests: a closed local port.
UNREACHABLE = "http://127.0.0.1:9"


def without_aws_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials, no region; an endpoint variable naming a closed port, and configured endpoints ignored (a
    plugin that left them so would let clients go elsewhere than to its server)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION",
                 "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB_STREAMS"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", UNREACHABLE)
    monkeypatch.setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")


@pytest.mark.parametrize("auth", ["none", "sigv4"])
def test_server_mode_sends_the_code_under_test_s_own_clients_to_its_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, auth: str
) -> None:
    configure(pytester)
    without_aws_environment(monkeypatch)
    pytester.makeconftest(RECORD_ENVIRONMENT)
    pytester.makepyfile(APPLICATION_CODE_TEST)
    arguments = ["-p", "no:cacheprovider", "--dynastore-mode=server", f"--dynastore-auth={auth}"]
    pytester.runpytest_subprocess(*arguments).assert_outcomes(passed=1)
    after = json.loads((pytester.path / "environment_after.json").read_text())
    assert after == {  # as they were before the session
        "AWS_ENDPOINT_URL_DYNAMODB": UNREACHABLE,
        "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": None,
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
        "AWS_ACCESS_KEY_ID": None,
        "AWS_SECRET_ACCESS_KEY": None,
        "AWS_DEFAULT_REGION": None,
    }


def test_server_mode_without_hooked_clients_leaves_other_clients_alone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(pytester, "dynastore_hook_clients = false")
    without_aws_environment(monkeypatch)
    pytester.makepyfile(
        MAKE_TABLE
        + """
import boto3


def test_only_the_fixtures_clients(dynastore, dynamodb):
    make_table(dynamodb, "served")
    assert dynamodb.list_tables()["TableNames"] == ["served"]
    # Left as the environment configures it (here: the variables ignored, so AWS's endpoint; no call is made).
    other = boto3.client("dynamodb", region_name="us-east-1").meta.endpoint_url
    assert other == "https://dynamodb.us-east-1.amazonaws.com"
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--dynastore-mode=server").assert_outcomes(passed=1)


def test_in_process_mode_answers_the_code_under_test_s_clients(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(pytester)
    without_aws_environment(monkeypatch)
    pytester.makepyfile(
        MAKE_TABLE
        + """
import boto3


def test_application_clients_are_answered_here(dynamodb):
    make_table(dynamodb, "answered")
    assert boto3.client("dynamodb").list_tables()["TableNames"] == ["answered"]
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
