"""CORS for browser clients (dynamodb-admin, the JavaScript SDK in a page), as DynamoDB sends it.

Headers go out only when the request has an Origin. DynamoDB allows every origin with ``*`` (a request is
authorised by its signature, not by where the page came from) rather than echoing the Origin; a preflight's
answer repeats the headers and method the browser asked for. dynastore's own endpoints get no CORS headers.
"""

from __future__ import annotations

_EXPOSED = "x-amzn-RequestId,x-amzn-ErrorType,x-amz-crc32,Date"
_PREFLIGHT_MAX_AGE = "172800"
_ANY_ORIGIN = ("Access-Control-Allow-Origin", "*")
_RESPONSE_HEADERS = (_ANY_ORIGIN, ("Access-Control-Expose-Headers", _EXPOSED))


def preflight_headers(headers: dict[str, str]) -> list[tuple[str, str]]:
    out = [_ANY_ORIGIN]
    requested_headers = headers.get("access-control-request-headers")
    if requested_headers:
        out.append(("Access-Control-Allow-Headers", requested_headers))
    requested_method = headers.get("access-control-request-method")
    if requested_method:
        out.append(("Access-Control-Allow-Methods", requested_method))
    out.append(("Access-Control-Max-Age", _PREFLIGHT_MAX_AGE))
    return out


def response_headers() -> tuple[tuple[str, str], ...]:
    return _RESPONSE_HEADERS
