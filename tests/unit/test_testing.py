"""In-process mode (dynastore.testing): clients made in the block are answered through the protocol layer, others
are not; answers wait for durability; options, the manual clock and the decorator."""

from __future__ import annotations

import asyncio
import re
import socket
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse, HeadersDict
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError, EndpointConnectionError

from dynastore.testing import InProcess, in_process, make_config, mock_dynamodb
from dynastore.util.clock import ManualClock

NO_RETRIES = BotoConfig(retries={"max_attempts": 0}, connect_timeout=5, read_timeout=30)
KEY_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}]
DEFINITIONS = [{"AttributeName": "pk", "AttributeType": "S"}]


def create(client: Any, name: str = "things") -> None:
    client.create_table(
        TableName=name, KeySchema=KEY_SCHEMA, AttributeDefinitions=DEFINITIONS, BillingMode="PAY_PER_REQUEST"
    )


def error_of(call: Callable[[], Any]) -> tuple[str, str, int]:
    with pytest.raises(ClientError) as info:
        call()
    response = info.value.response
    return response["Error"]["Code"], response["Error"]["Message"], response["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def ds() -> Iterator[InProcess]:
    with in_process() as dynastore:
        yield dynastore


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


# ---------------------------------------------------------------- what is answered, and how


def test_a_client_made_in_the_block_is_answered_as_the_server_answers(ds: InProcess) -> None:
    client = boto3.client("dynamodb", config=NO_RETRIES)  # no endpoint: it would go to AWS without the hook
    create(client)
    client.put_item(TableName="things", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    response = client.get_item(TableName="things", Key={"pk": {"S": "a"}})
    assert response["Item"] == {"pk": {"S": "a"}, "n": {"N": "1"}}
    headers = response["ResponseMetadata"]["HTTPHeaders"]
    assert len(headers["x-amzn-requestid"]) == 52
    body = b'{"Item":{"pk":{"S":"a"},"n":{"N":"1"}}}'
    assert headers["x-amz-crc32"] == str(zlib.crc32(body))
    assert headers["content-type"] == "application/x-amz-json-1.0"


def test_a_responses_headers_behave_as_botocores_own_mapping(ds: InProcess) -> None:
    """The mapping botocore and its event handlers read a response's headers from: any case finds a name, names
    keep the case they were sent in, and it answers every read as botocore's HeadersDict of the same headers."""
    seen: list[Any] = []
    client = boto3.client("dynamodb", config=NO_RETRIES)
    client.meta.events.register("before-parse.dynamodb", lambda response_dict, **_: seen.append(response_dict))
    create(client)
    headers = seen[-1]["headers"]
    same = HeadersDict(list(headers.items()))
    assert isinstance(headers, HeadersDict)
    assert list(headers) == list(same) == ["Content-Type", "Content-Length", "x-amzn-RequestId", "x-amz-crc32"]
    assert dict(headers) == dict(same) and len(headers) == len(same) == 4
    assert headers["X-AMZN-REQUESTID"] == headers.get("x-amzn-requestid") == same["x-amzn-requestid"]
    assert "content-type" in headers and "x-amz-crc32" in headers and "etag" not in headers
    assert headers.get("etag") is None and headers.get("etag", "-") == "-"
    with pytest.raises(KeyError):
        headers["etag"]
    headers["CONTENT-TYPE"] = "text/plain"  # a new value under the name as first sent, as botocore's keeps it
    same["CONTENT-TYPE"] = "text/plain"
    del headers["content-length"]
    del same["content-length"]
    assert list(headers.items()) == list(same.items())
    assert repr(headers) == repr(same)
    assert dict(headers.copy()) == dict(headers)


def test_errors_carry_dynamodbs_codes_messages_and_status(ds: InProcess) -> None:
    client = boto3.client("dynamodb", config=NO_RETRIES)
    assert error_of(lambda: client.get_item(TableName="missing", Key={"pk": {"S": "a"}})) == (
        "ResourceNotFoundException",
        "Requested resource not found",
        400,
    )
    assert error_of(lambda: client.describe_table(TableName="ab")) == (
        "ValidationException",
        "1 validation error detected: Value at 'TableName' failed to satisfy constraint: "
        "Member must have length greater than or equal to 3",
        400,
    )


def test_a_resource_made_in_the_block_is_answered(ds: InProcess) -> None:
    table = boto3.resource("dynamodb").create_table(
        TableName="things", KeySchema=KEY_SCHEMA, AttributeDefinitions=DEFINITIONS, BillingMode="PAY_PER_REQUEST"
    )
    table.put_item(Item={"pk": "a", "v": 2})
    assert table.get_item(Key={"pk": "a"})["Item"] == {"pk": "a", "v": 2}


def test_a_dynamodb_streams_client_made_in_the_block_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where an unhooked client would go: a closed local port (never AWS).
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", f"http://127.0.0.1:{closed_port()}")
    with in_process():
        stream = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}}
        boto3.client("dynamodb", config=NO_RETRIES).create_table(
            TableName="things", KeySchema=KEY_SCHEMA, AttributeDefinitions=DEFINITIONS,
            BillingMode="PAY_PER_REQUEST", **stream,
        )  # fmt: skip
        streams = boto3.client("dynamodbstreams", config=NO_RETRIES)  # the code under test's, no endpoint
        listed = streams.list_streams()["Streams"]
        assert [s["TableName"] for s in listed] == ["things"]
        assert listed[0]["StreamArn"].startswith("arn:aws:dynamodb:us-east-1:000000000000:table/things/stream/")


def test_clients_of_other_services_are_left_alone(ds: InProcess) -> None:
    client = boto3.client("s3", config=NO_RETRIES)
    seen: list[str] = []

    def network(request: Any, **_: Any) -> AWSResponse:
        seen.append(request.url)
        body = b"<ListAllMyBucketsResult><Buckets></Buckets></ListAllMyBucketsResult>"
        return AWSResponse(request.url, 200, {"Content-Type": "application/xml"}, _Raw(body))

    client.meta.events.register("before-send", network)
    assert client.list_buckets()["Buckets"] == []
    assert len(seen) == 1


def test_a_client_made_before_the_block_is_not_hooked() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    before = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1", config=NO_RETRIES,
                          aws_access_key_id="a", aws_secret_access_key="b")  # fmt: skip
    with in_process():
        with pytest.raises(EndpointConnectionError):
            before.list_tables()
        inside = boto3.client("dynamodb", endpoint_url=url, config=NO_RETRIES)
        assert inside.list_tables()["TableNames"] == []


def test_after_the_block_a_hooked_client_refuses_rather_than_reach_the_network() -> None:
    with in_process():
        client = boto3.client("dynamodb", config=NO_RETRIES)
        client.list_tables()
    with pytest.raises(RuntimeError, match="has stopped"):
        client.list_tables()


def test_the_innermost_block_answers_and_the_outer_one_resumes() -> None:
    with in_process() as outer:
        create(outer.client(config=NO_RETRIES), "outer_table")
        with in_process():
            assert boto3.client("dynamodb", config=NO_RETRIES).list_tables()["TableNames"] == []
        assert boto3.client("dynamodb", config=NO_RETRIES).list_tables()["TableNames"] == ["outer_table"]


# ---------------------------------------------------------------- durability


class _HeldDurability:
    """Stands in for the group committer: nothing is durable until ``release`` (run on the loop thread)."""

    def __init__(self) -> None:
        self.waiting: list[tuple[int, Callable[[BaseException | None], None]]] = []

    @property
    def durable_seq(self) -> int:
        return 0

    def poll(self) -> None:
        pass

    def when_durable(self, seq: int, callback: Callable[[BaseException | None], None]) -> None:
        self.waiting.append((seq, callback))

    def release(self, error: BaseException | None) -> None:
        for _, callback in self.waiting:
            callback(error)


def _hold_writes(ds: InProcess) -> _HeldDurability:
    held = _HeldDurability()
    ds._committer = held
    return held


def _release_later(ds: InProcess, held: _HeldDurability, error: BaseException | None) -> list[int]:
    """Release the held writes 50 ms into the next call (the loop runs while a call waits); the list gets the
    number of writes that were waiting then."""
    released: list[int] = []

    def release() -> None:
        released.append(len(held.waiting))
        held.release(error)

    assert ds._loop is not None
    ds._loop.call_later(0.05, release)
    return released


def test_a_write_is_answered_only_once_durable(ds: InProcess) -> None:
    client = ds.client(config=NO_RETRIES)
    create(client)
    held = _hold_writes(ds)
    released = _release_later(ds, held, None)
    answer = client.put_item(TableName="things", Item={"pk": {"S": "a"}})
    assert released == [1]  # the write waited, and was answered once released
    assert held.waiting[0][0] > 0
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_a_write_that_cannot_be_made_durable_is_answered_500(ds: InProcess) -> None:
    client = ds.client(config=NO_RETRIES)
    create(client)
    held = _hold_writes(ds)
    released = _release_later(ds, held, OSError("disk gone"))
    with pytest.raises(ClientError) as e:
        client.put_item(TableName="things", Item={"pk": {"S": "a"}})
    assert released == [1]
    assert e.value.response["Error"]["Code"] == "InternalServerError"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500


def test_a_call_from_inside_a_running_event_loop_is_answered(ds: InProcess) -> None:
    client = ds.client(config=NO_RETRIES)
    create(client)

    async def from_async_code() -> list[str]:
        names: list[str] = client.list_tables()["TableNames"]  # a loop already runs on this thread
        return names

    assert asyncio.run(from_async_code()) == ["things"]


def test_reads_do_not_wait_for_durability(ds: InProcess) -> None:
    client = ds.client(config=NO_RETRIES)
    create(client)
    client.get_item(TableName="things", Key={"pk": {"S": "a"}})  # the table's first request may set state up
    held = _hold_writes(ds)
    assert client.get_item(TableName="things", Key={"pk": {"S": "a"}})["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert held.waiting == []


def test_a_store_in_a_directory_keeps_its_data(tmp_path: Path) -> None:
    with in_process(data_dir=tmp_path) as first:
        assert not first.config.in_memory
        client = first.client(config=NO_RETRIES)
        create(client)
        client.put_item(TableName="things", Item={"pk": {"S": "kept"}})
    with in_process(data_dir=tmp_path) as second:
        item = second.client(config=NO_RETRIES).get_item(TableName="things", Key={"pk": {"S": "kept"}})
        assert item["Item"] == {"pk": {"S": "kept"}}


# ---------------------------------------------------------------- options, clock, decorator


def test_options_are_the_servers_config_fields() -> None:
    config = make_config(capacity="report", region="eu-west-1", manual_clock=True)
    assert (config.capacity, config.region, config.in_memory) == ("report", "eu-west-1", True)
    assert isinstance(config.clock, ManualClock)
    with pytest.raises(TypeError):
        make_config(no_such_option=1)


def test_the_region_given_is_the_one_clients_use() -> None:
    with in_process(region="eu-west-1") as ds:
        client = ds.client(config=NO_RETRIES)
        create(client)
        arn = client.describe_table(TableName="things")["Table"]["TableArn"]
        assert arn.startswith("arn:aws:dynamodb:eu-west-1:")


def test_tables_are_per_region_as_on_the_server_unless_the_namespace_is_shared() -> None:
    with in_process() as ds:
        create(ds.client(config=NO_RETRIES))  # the configured region's (us-east-1)
        assert boto3.client("dynamodb", region_name="us-east-2", config=NO_RETRIES).list_tables()["TableNames"] == []
        assert boto3.client("dynamodb", region_name="us-east-1", config=NO_RETRIES).list_tables()["TableNames"] == [
            "things"
        ]
    with in_process(shared_namespace=True) as ds:
        create(ds.client(config=NO_RETRIES))
        ohio = boto3.client("dynamodb", region_name="us-east-2", config=NO_RETRIES)
        assert ohio.list_tables()["TableNames"] == ["things"]


def test_the_manual_clock_moves_only_when_told() -> None:
    with in_process(manual_clock=True) as ds:
        before = ds.request("GET", "/dynastore/clock").json()
        assert before["manual"] is True
        assert ds.advance_clock(30) == before["now"] + 30
        assert ds.request("GET", "/dynastore/clock").json()["now"] == before["now"] + 30


def test_the_system_clock_cannot_be_moved(ds: InProcess) -> None:
    with pytest.raises(RuntimeError, match="the clock is the system's: start the server with --manual-clock"):
        ds.advance_clock(1)


def test_a_failed_start_raises_in_the_caller(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    dynastore = InProcess(data_dir=blocker / "store")
    with pytest.raises(NotADirectoryError):
        dynastore.start()
    assert not dynastore.running


def test_a_new_directory_is_made(tmp_path: Path) -> None:
    with in_process(data_dir=tmp_path / "new" / "store") as ds:
        create(ds.client(config=NO_RETRIES))
    assert (tmp_path / "new" / "store").is_dir()


@mock_dynamodb
def _decorated_tables() -> list[str]:
    client = boto3.client("dynamodb", config=NO_RETRIES)
    before: list[str] = client.list_tables()["TableNames"]
    create(client)
    return before


@mock_dynamodb(capacity="report")
def _decorated_with_options() -> str:
    client = boto3.client("dynamodb", config=NO_RETRIES)
    create(client)
    mode: str = client.describe_table(TableName="things")["Table"]["BillingModeSummary"]["BillingMode"]
    return mode


def test_the_decorator_gives_each_call_a_fresh_dynastore() -> None:
    assert _decorated_tables() == []
    assert _decorated_tables() == []
    assert _decorated_with_options() == "PAY_PER_REQUEST"


def test_the_readme_example_runs() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\n((?: {6}.*\n|\n)+)", readme.split("**In process**", 1)[1])
    assert block is not None
    code = "\n".join(line[6:] for line in block.group(1).splitlines())
    assert "in_process()" in code
    exec(compile(code, "README.md", "exec"), {})


def test_botocores_response_holds_the_body_and_streams_it(ds: InProcess) -> None:
    """The response handed to botocore is its own type, with the body read already and ``raw`` streaming it to
    any handler that reads it."""
    seen: list[Any] = []
    client = ds.client(config=NO_RETRIES)
    client.meta.events.register("after-call.dynamodb", lambda http_response, **_: seen.append(http_response))
    create(client)
    client.put_item(TableName="things", Item={"pk": {"S": "a"}})
    client.get_item(TableName="things", Key={"pk": {"S": "a"}})
    response = seen[-1]
    body = b'{"Item":{"pk":{"S":"a"}}}'
    assert isinstance(response, AWSResponse) and response.status_code == 200
    assert response.content == body and b"".join(response.raw.stream()) == body
    assert response.headers["Content-Length"] == str(len(body))
