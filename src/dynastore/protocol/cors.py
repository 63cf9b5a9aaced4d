"""CORS for browser clients (dynamodb-admin, the JavaScript SDK in a page), as DynamoDB sends it.

Headers go out only when the request has an Origin. DynamoDB allows every origin with ``*`` (a request is
authorised by its signature, not by where the page came from) rather than echoing the Origin; a preflight's
answer repeats the headers and method the browser asked for. Which origins are answered at all is decided before
(protocol/hosts.py: with ``--auth none``, only local pages). dynastore's own endpoints get no CORS headers.

Exposed headers: those of AWS's JSON front end, ``x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date``,
on every answer to a request with an Origin, the preflight's included. ``x-amz-crc32`` is not among them (an AWS
SDK maintainer: "this header isn't accessible in the JavaScript runtime because the service doesn't explicitly
expose it", aws/aws-sdk-js#1614): a browser undoes a gzip response before the page reads it, so an SDK that could
read the checksum of the compressed bytes would find it wrong. docs/design.md "The HTTP layer" has the sources.
"""

from __future__ import annotations

_EXPOSED = ("Access-Control-Expose-Headers", "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date")
_PREFLIGHT_MAX_AGE = "172800"
_ANY_ORIGIN = ("Access-Control-Allow-Origin", "*")
_RESPONSE_HEADERS = (_ANY_ORIGIN, _EXPOSED)


def preflight_headers(headers: dict[str, str]) -> list[tuple[str, str]]:
    out = [_ANY_ORIGIN]
    requested_headers = headers.get("access-control-request-headers")
    if requested_headers:
        out.append(("Access-Control-Allow-Headers", requested_headers))
    requested_method = headers.get("access-control-request-method")
    if requested_method:
        out.append(("Access-Control-Allow-Methods", requested_method))
    out.append(_EXPOSED)
    out.append(("Access-Control-Max-Age", _PREFLIGHT_MAX_AGE))
    return out


def response_headers() -> tuple[tuple[str, str], ...]:
    return _RESPONSE_HEADERS
