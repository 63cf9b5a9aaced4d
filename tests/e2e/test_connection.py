"""The wire protocol through raw HTTP: health, content types, JSON, targets, auth, CORS, compression, limits."""

from __future__ import annotations

import gzip
import http.client
import json
import zlib
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.e2e.conftest import Signer, error_of

AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)


class Raw:
    def __init__(self, endpoint: str, signer: Signer) -> None:
        parsed = urlparse(endpoint)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 80
        self.signer = signer

    def request(
        self, method: str = "POST", body: bytes = b"", headers: dict[str, str] | None = None, path: str = "/"
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=self.signer(method, path, headers or {}, body))
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            conn.close()

    def call(self, target: str, payload: Any, **headers: str) -> tuple[int, dict[str, str], Any]:
        base = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"DynamoDB_20120810.{target}",
            "X-Amz-Date": "20260101T000000Z",
            "Authorization": AUTH,
        }
        base.update(headers)
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        status, response_headers, data = self.request("POST", body, base)
        return status, response_headers, json.loads(data) if data else None


@pytest.fixture(scope="module")
def raw(endpoint: str, signer: Signer) -> Raw:
    return Raw(endpoint, signer)


def test_get_is_a_health_check_naming_the_host_used(raw: Raw) -> None:
    status, headers, body = raw.request("GET")
    assert status == 200
    assert body == f"healthy: {raw.host}:{raw.port} ".encode()
    assert int(headers["x-amz-crc32"]) == zlib.crc32(body)
    status, _, body = raw.request("GET", headers={"Host": "localhost:8000"})
    assert (status, body) == (200, b"healthy: localhost:8000 ")


@pytest.mark.parametrize(("method", "path"), [("GET", "/health"), ("GET", "/index.htm"), ("POST", "/abc")])
def test_other_paths_are_unknown_operations(raw: Raw, method: str, path: str) -> None:
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "X-Amz-Date": "20260101T000000Z",
        "Authorization": AUTH,
    }
    status, response_headers, body = raw.request(method, b"{}" if method == "POST" else b"", headers, path)
    assert (status, body) == (404, b"<UnknownOperationException/>\n")
    assert int(response_headers["x-amz-crc32"]) == zlib.crc32(body)


def test_errors_are_json_1_0_even_for_a_json_1_1_request(raw: Raw) -> None:
    status, headers, body = raw.call(
        "DescribeTable", {"TableName": "no_such_table"}, **{"Content-Type": "application/x-amz-json-1.1"}
    )
    assert status == 400
    assert headers["content-type"] == "application/x-amz-json-1.0"
    assert body["__type"] == "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"


@pytest.mark.parametrize("content_type", ["application/x-amz-json-1.0", "application/x-amz-json-1.1"])
def test_streams_errors_are_json_1_0_too(raw: Raw, content_type: str) -> None:
    """botocore speaks JSON 1.0 to DynamoDB Streams (its model's one protocol); errors answer in it whatever the
    request's JSON type, as DynamoDB's do."""
    status, headers, body = raw.call(
        "",
        {"StreamArn": "arn:aws:dynamodb:us-east-1:000000000000:table/none/stream/2026-01-01T00:00:00.000"},
        **{"X-Amz-Target": "DynamoDBStreams_20120810.DescribeStream", "Content-Type": content_type},
    )
    assert status == 400
    assert headers["content-type"] == "application/x-amz-json-1.0"
    assert body["__type"].startswith("com.amazonaws.dynamodb.v20120810#")


def test_responses_carry_request_id_and_crc32(raw: Raw) -> None:
    status, headers, body = raw.request(
        "POST",
        b"{}",
        {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "X-Amz-Date": "20260101T000000Z",
            "Authorization": AUTH,
        },
    )
    assert status == 200
    assert len(headers["x-amzn-requestid"]) == 52
    assert int(headers["x-amz-crc32"]) == zlib.crc32(body)
    assert headers["content-type"] == "application/x-amz-json-1.0"


def test_wrong_content_type_is_unknown_operation_404(raw: Raw) -> None:
    status, _, body = raw.request("POST", b"{}", {"Content-Type": "text/plain"})
    assert status == 404
    assert body == b"<UnknownOperationException/>\n"


def test_malformed_json_is_serialization_exception(raw: Raw) -> None:
    status, _, body = raw.call("ListTables", b"{not json")
    assert status == 400
    assert body == {"__type": "com.amazon.coral.service#SerializationException"}


def test_unknown_target(raw: Raw) -> None:
    status, _, body = raw.call("NoSuchOperation", {})
    assert status == 400
    assert body == {"__type": "com.amazon.coral.service#UnknownOperationException"}


@pytest.mark.parametrize("target", ["DynamoDBStreams_20120810.NoSuchOperation", "DynamoDBStreams_20120810.PutItem"])
def test_unknown_streams_target(raw: Raw, target: str) -> None:
    status, _, body = raw.call("", {}, **{"X-Amz-Target": target})
    assert status == 400
    assert body == {"__type": "com.amazon.coral.service#UnknownOperationException"}


def test_a_dynamodb_target_does_not_reach_a_streams_operation(raw: Raw) -> None:
    status, _, body = raw.call("ListStreams", {})
    assert status == 400
    assert body == {"__type": "com.amazon.coral.service#UnknownOperationException"}


@pytest.mark.parametrize(
    ("method", "params", "operation"),
    [
        ("search_vectors", {"TableName": "t"}, "SearchVectors"),
    ],
)
def test_operation_not_served_yet_is_named(ddb: Any, method: str, params: dict[str, Any], operation: str) -> None:
    code, message = error_of(lambda: getattr(ddb, method)(**params))
    assert code == "UnknownOperationException"
    assert message == f"{operation} is a DynamoDB operation that dynastore does not serve yet (see docs/operations.md)"


def test_missing_authorization(raw: Raw) -> None:
    status, _, body = raw.call("ListTables", {}, Authorization="")
    assert status == 400
    assert body == {
        "__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
        "message": "Request is missing Authentication Token",
    }


def test_incomplete_signature(raw: Raw) -> None:
    status, _, body = raw.call("ListTables", {}, Authorization="AWS4-HMAC-SHA256 Credential=abc")
    assert status == 400
    assert body == {
        "__type": "com.amazon.coral.service#IncompleteSignatureException",
        "message": "Authorization header requires 'Signature' parameter. "
        "Authorization header requires 'SignedHeaders' parameter. "
        "Authorization=AWS4-HMAC-SHA256 Credential=abc",
    }


def test_json_1_1_is_accepted_and_echoed(raw: Raw) -> None:
    status, headers, body = raw.call("ListTables", {}, **{"Content-Type": "application/x-amz-json-1.1"})
    assert status == 200
    assert headers["content-type"] == "application/x-amz-json-1.1"
    assert "TableNames" in body


def test_gzip_request_body(raw: Raw) -> None:
    status, _, body = raw.call("ListTables", gzip.compress(b"{}"), **{"Content-Encoding": "gzip"})
    assert status == 200
    assert "TableNames" in body


def test_deflate_request_body(raw: Raw) -> None:
    status, _, body = raw.call("ListTables", zlib.compress(b"{}"), **{"Content-Encoding": "deflate"})
    assert status == 200
    assert "TableNames" in body


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_compressed_response_when_accepted(raw: Raw, ddb: Any, table_s: str, coding: str) -> None:
    ddb.put_item(TableName=table_s, Item={"pk": {"S": "big"}, "v": {"S": "x" * 5000}})
    conn = http.client.HTTPConnection(raw.host, raw.port, timeout=30)
    body = json.dumps({"TableName": table_s, "Key": {"pk": {"S": "big"}}}).encode()
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.GetItem",
        "X-Amz-Date": "20260101T000000Z",
        "Authorization": AUTH,
        "Accept-Encoding": f"br, {coding}",
    }
    conn.request("POST", "/", body=body, headers=raw.signer("POST", "/", headers, body))
    response = conn.getresponse()
    data = response.read()
    conn.close()
    assert response.getheader("Content-Encoding") == coding
    assert int(response.getheader("x-amz-crc32") or 0) == zlib.crc32(data)
    plain = gzip.decompress(data) if coding == "gzip" else zlib.decompress(data)
    assert json.loads(plain)["Item"]["v"] == {"S": "x" * 5000}


def test_a_gzip_body_that_does_not_decompress_is_a_500_and_writes_nothing(raw: Raw, ddb: Any, table_s: str) -> None:
    item = {"TableName": table_s, "Item": {"pk": {"S": "never"}}}
    for body in (json.dumps(item).encode(), gzip.compress(json.dumps(item).encode())[:-1], b""):
        status, headers, answer = raw.call("PutItem", body, **{"Content-Encoding": "gzip"})
        assert status == 500
        assert headers["content-type"] == "application/x-amz-json-1.0"
        assert answer == {
            "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
            "message": "Internal server error",
        }
    assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "never"}}, ConsistentRead=True)


def test_concatenated_gzip_members_are_one_request(raw: Raw, ddb: Any, table_s: str) -> None:
    body = json.dumps({"TableName": table_s, "Item": {"pk": {"S": "two-members"}}}).encode()
    status, _, _ = raw.call(
        "PutItem", gzip.compress(body[:10]) + gzip.compress(body[10:]), **{"Content-Encoding": "gzip"}
    )
    assert status == 200
    assert ddb.get_item(TableName=table_s, Key={"pk": {"S": "two-members"}})["Item"] == {"pk": {"S": "two-members"}}


def test_cors_preflight(raw: Raw) -> None:
    status, headers, body = raw.request(
        "OPTIONS",
        headers={
            "Origin": "http://localhost:8001",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-amz-target",
        },
    )
    assert (status, body) == (200, b"")
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-headers"] == "content-type,x-amz-target"
    assert headers["access-control-allow-methods"] == "POST"
    assert headers["access-control-expose-headers"] == "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
    assert headers["access-control-max-age"] == "172800"


def test_cors_headers_only_with_an_origin(raw: Raw) -> None:
    _, headers, _ = raw.call("ListTables", {}, Origin="http://localhost:8001")
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-expose-headers"] == "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
    _, headers, _ = raw.call("ListTables", {})
    assert not [name for name in headers if name.startswith("access-control")]


def test_request_over_16_mb_is_refused_and_server_keeps_serving(raw: Raw) -> None:
    status, _, _ = raw.call("ListTables", b"{" + b" " * (16 * 1024 * 1024 + 10) + b"}")
    assert status == 413
    status, _, body = raw.call("ListTables", {})
    assert status == 200


@pytest.mark.parametrize(
    "payload",
    [
        b"[]",
        b"null",
        b"123",
        b'"s"',
        b'{"TableName": null, "Item": [1, 2]}',
        b"\xff\xfe\x00",
        b'{"a":' * 5000,
    ],
)
def test_junk_never_gets_a_500(raw: Raw, payload: bytes) -> None:
    status, _, body = raw.call("PutItem", payload)
    assert status == 400
    assert body["__type"].split("#")[1] in ("SerializationException", "ValidationException")
