"""protocol.Protocol.handle without sockets: the order of checks and the shape of responses."""

from __future__ import annotations

import gzip
import re
import zlib
from typing import Any

import orjson
import pytest

from dynastore.errors import ConditionalCheckFailedException
from dynastore.protocol.protocol import Operation, Protocol
from dynastore.security.caller import Caller

AUTH = {
    "authorization": "AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=s",
    "x-amz-date": "20260101T000000Z",
}


class Recorder:
    def __init__(self) -> None:
        self.seq = 0
        self.calls: list[Any] = []

    def echo(self, body: Any, caller: Caller) -> Any:
        self.calls.append(body)
        return {"Echo": body}

    def write(self, body: Any, caller: Caller) -> Any:
        self.seq += 1
        return {}

    def fail(self, body: Any, caller: Caller) -> Any:
        raise ConditionalCheckFailedException(Item={"a": {"S": "x"}})

    def crash(self, body: Any, caller: Caller) -> Any:
        raise KeyError("boom")


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def protocol(recorder: Recorder) -> Protocol:
    operations = {
        "Echo": Operation("Echo", recorder.echo),
        "Write": Operation("Write", recorder.write),
        "Fail": Operation("Fail", recorder.fail),
        "Crash": Operation("Crash", recorder.crash),
    }
    return Protocol(operations, region="eu-west-1", commit_seq=lambda: recorder.seq)


def call(protocol: Protocol, target: str, body: bytes = b"{}", **headers: str) -> Any:
    all_headers = {"content-type": "application/x-amz-json-1.0", "x-amz-target": f"DynamoDB_20120810.{target}"}
    all_headers.update(AUTH)
    all_headers.update(headers)
    return protocol.handle("POST", all_headers, body)


def test_health_names_the_region(protocol: Protocol) -> None:
    response = protocol.handle("GET", {}, b"")
    assert (response.status, response.body) == (200, b"healthy: dynamodb.eu-west-1.amazonaws.com ")


def test_success_has_crc32_and_request_id(protocol: Protocol) -> None:
    response = call(protocol, "Echo", b'{"a": 1}')
    headers = dict(response.headers)
    assert response.status == 200
    assert orjson.loads(response.body) == {"Echo": {"a": 1}}
    assert headers["x-amz-crc32"] == str(zlib.crc32(response.body))
    assert re.fullmatch("[0-9A-F]{52}", headers["x-amzn-RequestId"])


def test_request_ids_differ(protocol: Protocol) -> None:
    first = dict(call(protocol, "Echo").headers)["x-amzn-RequestId"]
    second = dict(call(protocol, "Echo").headers)["x-amzn-RequestId"]
    assert first != second


def test_json_is_checked_before_the_target(protocol: Protocol) -> None:
    response = call(protocol, "NoSuchThing", b"{oops")
    assert orjson.loads(response.body) == {"__type": "com.amazon.coral.service#SerializationException"}


def test_target_is_checked_before_auth(protocol: Protocol) -> None:
    response = protocol.handle(
        "POST", {"content-type": "application/x-amz-json-1.0", "x-amz-target": "DynamoDB_20120810.Nope"}, b"{}"
    )
    assert orjson.loads(response.body) == {"__type": "com.amazon.coral.service#UnknownOperationException"}


def test_a_dynamodb_operation_not_served_is_named(recorder: Recorder) -> None:
    protocol = Protocol(
        {"Echo": Operation("Echo", recorder.echo)},
        region="eu-west-1",
        commit_seq=lambda: recorder.seq,
        not_served=frozenset({"ExecuteStatement"}),
    )
    response = protocol.handle(
        "POST",
        {"content-type": "application/x-amz-json-1.0", "x-amz-target": "DynamoDB_20120810.ExecuteStatement"},
        b"{}",
    )
    assert response.status == 400
    assert orjson.loads(response.body) == {
        "__type": "com.amazon.coral.service#UnknownOperationException",
        "message": "ExecuteStatement is a DynamoDB operation that dynastore does not serve yet "
        "(see docs/operations.md)",
    }
    other = call(protocol, "NoSuchThing")
    assert orjson.loads(other.body) == {"__type": "com.amazon.coral.service#UnknownOperationException"}


def test_empty_body_is_serialization_exception_after_auth(protocol: Protocol, recorder: Recorder) -> None:
    response = call(protocol, "Echo", b"")
    assert orjson.loads(response.body) == {"__type": "com.amazon.coral.service#SerializationException"}
    assert recorder.calls == []


def test_dynamo_errors_carry_extra_members(protocol: Protocol) -> None:
    response = call(protocol, "Fail")
    assert response.status == 400
    assert orjson.loads(response.body) == {
        "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
        "message": "The conditional request failed",
        "Item": {"a": {"S": "x"}},
    }


def test_unexpected_exception_is_a_500_without_details(protocol: Protocol) -> None:
    response = call(protocol, "Crash")
    assert response.status == 500
    assert orjson.loads(response.body) == {
        "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
        "message": "Internal server error",
    }


def test_writes_report_their_commit(protocol: Protocol, recorder: Recorder) -> None:
    assert call(protocol, "Echo").commit_seq == 0
    assert call(protocol, "Write").commit_seq == 1
    assert call(protocol, "Write").commit_seq == 2


def test_gzip_and_deflate_bodies(protocol: Protocol, recorder: Recorder) -> None:
    call(protocol, "Echo", gzip.compress(b'{"g": 1}'), **{"content-encoding": "gzip"})
    call(protocol, "Echo", zlib.compress(b'{"d": 1}'), **{"content-encoding": "deflate"})
    assert recorder.calls == [{"g": 1}, {"d": 1}]


INTERNAL_ERROR = {"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError", "message": "Internal server error"}


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", b"not gzip"),
        ("gzip", gzip.compress(b'{"g": 1}', mtime=0)[:-1]),  # cut short (mtime 0: the same test id in every process)
        ("gzip", b""),
        ("deflate", b"not deflate"),
        ("garbage", b"{}"),
    ],
)
def test_a_body_that_does_not_decompress_is_a_500_as_on_dynamodb(
    protocol: Protocol, recorder: Recorder, coding: str, body: bytes
) -> None:
    response = call(protocol, "Echo", body, **{"content-encoding": coding})
    assert (response.status, orjson.loads(response.body)) == (500, INTERNAL_ERROR)
    assert response.content_type == "application/x-amz-json-1.0"
    assert recorder.calls == []


def test_concatenated_gzip_members_are_one_body_and_trailing_junk_is_ignored(
    protocol: Protocol, recorder: Recorder
) -> None:
    call(protocol, "Echo", gzip.compress(b'{"a"') + gzip.compress(b": 1}"), **{"content-encoding": "gzip"})
    call(protocol, "Echo", gzip.compress(b'{"b": 2}') + b"junk", **{"content-encoding": "gzip"})
    assert recorder.calls == [{"a": 1}, {"b": 2}]


def test_gzip_bomb_over_16_mb_is_refused(protocol: Protocol) -> None:
    bomb = gzip.compress(b"{" + b" " * (16 * 1024 * 1024 + 1) + b"}")
    response = call(protocol, "Echo", bomb, **{"content-encoding": "gzip"})
    assert response.status == 413


def test_responses_of_4096_bytes_or_more_are_compressed_when_accepted(protocol: Protocol) -> None:
    value = "y" * (4096 - len('{"Echo":{"x":""}}'))
    body = orjson.dumps({"x": value})
    response = call(protocol, "Echo", body, **{"accept-encoding": "gzip, deflate"})
    assert ("Content-Encoding", "gzip") in response.headers
    assert orjson.loads(gzip.decompress(response.body)) == {"Echo": {"x": value}}
    assert ("x-amz-crc32", str(zlib.crc32(response.body))) in response.headers  # of the bytes sent
    deflated = call(protocol, "Echo", body, **{"accept-encoding": "deflate"})
    assert ("Content-Encoding", "deflate") in deflated.headers
    assert orjson.loads(zlib.decompress(deflated.body)) == {"Echo": {"x": value}}
    smaller = call(protocol, "Echo", orjson.dumps({"x": value[1:]}), **{"accept-encoding": "gzip"})
    assert not [name for name, _ in smaller.headers if name == "Content-Encoding"]
    assert len(smaller.body) == 4095


def test_errors_are_json_1_0_whatever_the_request_type(protocol: Protocol) -> None:
    response = call(protocol, "Fail", b"{}", **{"content-type": "application/x-amz-json-1.1"})
    assert (response.status, response.content_type) == (400, "application/x-amz-json-1.0")
    success = call(protocol, "Echo", b"{}", **{"content-type": "application/x-amz-json-1.1"})
    assert (success.status, success.content_type) == (200, "application/x-amz-json-1.1")


def test_health_names_the_host_the_client_used(protocol: Protocol) -> None:
    response = protocol.handle("GET", {"host": "localhost:8000"}, b"")
    assert (response.status, response.body) == (200, b"healthy: localhost:8000 ")
    odd = protocol.handle("GET", {"host": "<script>"}, b"")
    assert odd.body == b"healthy: dynamodb.eu-west-1.amazonaws.com "


@pytest.mark.parametrize(("method", "path"), [("GET", "/health"), ("POST", "/abc"), ("PUT", "/"), ("DELETE", "/x")])
def test_other_paths_and_methods_are_unknown_operations(protocol: Protocol, method: str, path: str) -> None:
    headers = {"content-type": "application/x-amz-json-1.0", "x-amz-target": "DynamoDB_20120810.Echo", **AUTH}
    response = protocol.handle(method, headers, b"{}", path)
    assert (response.status, response.body) == (404, b"<UnknownOperationException/>\n")
    assert ("x-amz-crc32", str(zlib.crc32(response.body))) in response.headers


def test_cors_only_with_an_origin_and_never_reflecting_it(protocol: Protocol) -> None:
    plain = call(protocol, "Echo")
    assert not [name for name, _ in plain.headers if name.startswith("Access-Control")]
    browser = call(protocol, "Echo", origin="https://evil.example")
    assert ("Access-Control-Allow-Origin", "*") in browser.headers
    preflight = protocol.handle(
        "OPTIONS",
        {
            "origin": "https://evil.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,x-amz-target",
        },
        b"",
    )
    assert preflight.status == 200
    assert [h for h in preflight.headers if h[0].startswith("Access-Control")] == [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Allow-Headers", "content-type,x-amz-target"),
        ("Access-Control-Allow-Methods", "POST"),
        ("Access-Control-Expose-Headers", "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"),
        ("Access-Control-Max-Age", "172800"),
    ]
    assert protocol.handle("OPTIONS", {}, b"").status == 404


STS_FORM = {"content-type": "application/x-www-form-urlencoded; charset=utf-8"}


def test_without_authentication_a_form_post_is_no_sts_request(protocol: Protocol) -> None:
    """--auth none serves no STS: a form-encoded POST is answered as before, the unknown-operation 404."""
    response = protocol.handle("POST", STS_FORM, b"Action=GetCallerIdentity&Version=2011-06-15")
    assert (response.status, response.body) == (404, b"<UnknownOperationException/>\n")


def test_with_sts_a_form_post_is_answered_in_stss_xml(protocol: Protocol) -> None:
    class Sts:
        def handle(self, headers: dict[str, str], body: bytes, path: str) -> tuple[int, bytes]:
            return 403, b"<ErrorResponse/>"

    protocol.sts = Sts()  # type: ignore[assignment]
    response = protocol.handle("POST", STS_FORM, b"Action=GetCallerIdentity&Version=2011-06-15")
    assert (response.status, response.body, response.content_type) == (403, b"<ErrorResponse/>", "text/xml")
    # DynamoDB's requests never reach it
    assert orjson.loads(call(protocol, "Echo", b'{"a": 1}').body) == {"Echo": {"a": 1}}
