"""Requests read in one pass and requests read by the parser, pipelined on one connection of a real server
(docs/design.md, "The common request, read in one pass"): every one is answered, in the order sent, each as its
own request, and nothing after a request that closes the connection is served."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.e2e.server_process import ServerProcess

AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)
TABLE = "read_either_way"


def _request(target: str, payload: dict[str, object], extra: str = "") -> bytes:
    body = json.dumps(payload).encode()
    head = (
        f"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: DynamoDB_20120810.{target}\r\nX-Amz-Date: 20260101T000000Z\r\n"
        f"Authorization: {AUTH}\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _responses(data: bytes) -> list[tuple[int, bytes]]:
    """Each response's status and body, from the bytes of several in a row (each with a Content-Length)."""
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        lengths = [int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")]
        length = lengths[0] if lengths else 0  # an interim 100 Continue has neither a length nor a body
        out.append((int(lines[0].split()[1]), rest[:length]))
        data = rest[length:]
    return out


def _exchange(server: ServerProcess, data: bytes) -> list[tuple[int, bytes]]:
    """Send ``data`` in one write and read until the server closes the connection."""
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return _responses(received)


def test_pipelined_requests_read_either_way_are_answered_in_order(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)  # durable: the writes' answers wait for their sync
    try:
        server.ddb.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        key = {"pk": {"S": "k"}}
        data = (
            _request("PutItem", {"TableName": TABLE, "Item": {**key, "v": {"N": "1"}}})
            # A tab in a header value: the parser reads this one.
            + _request("PutItem", {"TableName": TABLE, "Item": {**key, "v": {"N": "2"}}}, "X-Note: a\tb\r\n")
            + _request("GetItem", {"TableName": TABLE, "Key": key, "ConsistentRead": True})
            + _request(
                "UpdateItem",
                {
                    "TableName": TABLE,
                    "Key": key,
                    "UpdateExpression": "SET v = v + :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                    "ReturnValues": "UPDATED_NEW",
                },
                "Expect: 100-continue\r\n",
            )  # fmt: skip
            + _request("GetItem", {"TableName": TABLE, "Key": key, "ConsistentRead": True}, "Connection: close\r\n")
            + _request("DeleteItem", {"TableName": TABLE, "Key": key})  # after the close: never served
        )
        answers = _exchange(server, data)
        # The Expect request's 100 Continue is a response of its own, with no body, before its answer.
        statuses = [status for status, _ in answers]
        assert statuses == [200, 200, 200, 100, 200, 200], statuses
        bodies = [json.loads(body) if body else None for _, body in answers]
        assert bodies[2] == {"Item": {**key, "v": {"N": "2"}}}
        assert bodies[4] == {"Attributes": {"v": {"N": "3"}}}
        assert bodies[5] == {"Item": {**key, "v": {"N": "3"}}}
        item = server.ddb.get_item(TableName=TABLE, Key=key, ConsistentRead=True)
        assert item["Item"] == {**key, "v": {"N": "3"}}  # the DeleteItem after the close was not served
    finally:
        server.stop()
