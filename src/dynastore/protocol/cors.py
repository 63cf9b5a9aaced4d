"""CORS for browser clients (dynamodb-admin, the JavaScript SDK in a page)."""

from __future__ import annotations

_EXPOSED = "x-amzn-RequestId,x-amzn-ErrorType,x-amz-crc32,Date"
_ALLOWED_METHODS = "GET,POST,PUT,DELETE,OPTIONS"
_DEFAULT_ALLOWED_HEADERS = (
    "authorization,content-type,content-encoding,x-amz-date,x-amz-target,x-amz-security-token,"
    "x-amz-user-agent,x-amz-content-sha256,amz-sdk-invocation-id,amz-sdk-request"
)
_PREFLIGHT_MAX_AGE = "172800"


def preflight_headers(headers: dict[str, str]) -> list[tuple[str, str]]:
    requested = headers.get("access-control-request-headers") or _DEFAULT_ALLOWED_HEADERS
    return [
        ("Access-Control-Allow-Origin", headers.get("origin", "*")),
        ("Access-Control-Allow-Methods", _ALLOWED_METHODS),
        ("Access-Control-Allow-Headers", requested),
        ("Access-Control-Max-Age", _PREFLIGHT_MAX_AGE),
        ("Access-Control-Expose-Headers", _EXPOSED),
    ]


def response_headers(origin: str) -> list[tuple[str, str]]:
    return [("Access-Control-Allow-Origin", origin), ("Access-Control-Expose-Headers", _EXPOSED)]
