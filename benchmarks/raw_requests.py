"""DynamoDB requests as a benchmark's client sends them: pre-built JSON bodies and headers over plain keep-alive
HTTP connections, with a fixed signature-shaped Authorization header (servers run with ``--auth none`` check its
form only), so that the client stays cheap beside the server it measures."""

from __future__ import annotations

import http.client
import json
from typing import Any

__all__ = ["AUTH", "call", "request_headers"]

AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)


def request_headers(target: str) -> dict[str, str]:
    """The headers of a request for the operation ``target`` (GetItem, PutItem, ...)."""
    return {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": f"DynamoDB_20120810.{target}",
        "X-Amz-Date": "20260101T000000Z",
        "Authorization": AUTH,
    }


def call(conn: http.client.HTTPConnection, target: str, body: dict[str, Any]) -> bytes:
    """One request on ``conn``; raises RuntimeError unless it is answered 200."""
    conn.request("POST", "/", json.dumps(body).encode(), request_headers(target))
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"{target}: {response.status} {data[:200]!r}")
    return data
