"""The DynamoDB wire protocol, free of sockets: one request in, one response out.

Order of checks follows DynamoDB: health and CORS first, then content type, JSON, X-Amz-Target, authentication,
then the operation (whose shape validation and semantics live in validation/ and api/).
"""

from __future__ import annotations

import logging
import os
import zlib
from collections.abc import Callable
from itertools import count
from typing import Any

import orjson

from dynastore import messages
from dynastore.errors import (
    DynamoError,
    InternalServerError,
    RequestEntityTooLargeException,
    SerializationException,
    ServiceUnavailable,
    UnknownOperationException,
)
from dynastore.limits import MAX_REQUEST_BYTES
from dynastore.protocol import auth, cors
from dynastore.storage.kv import StorageError, StorageUnavailableError

log = logging.getLogger("dynastore")

JSON_10 = "application/x-amz-json-1.0"
JSON_11 = "application/x-amz-json-1.1"
_ACCEPTED_CONTENT_TYPES = frozenset({JSON_10, JSON_11, "application/json"})
_TARGET_PREFIXES = ("DynamoDB_20120810.", "DynamoDB_20111205.")
_UNKNOWN_OPERATION_XML = b"<UnknownOperationException/>\n"
# Bodies smaller than this go out uncompressed even when the client accepts gzip: compression would not pay.
GZIP_MIN_BYTES = 1024

Headers = dict[str, str]  # lower-case names (a dict: compiled code reads it directly)
EXTENSION_PREFIX = "/dynastore/"


class RawResponse:
    # A plain class rather than a dataclass: one is made per request, and a compiled build makes a dataclass
    # through its interpreted __init__ (docs/design.md "Compiled modules").
    __slots__ = ("status", "body", "content_type", "headers", "commit_seq")

    def __init__(
        self,
        status: int,
        body: bytes,
        content_type: str = JSON_10,
        headers: list[tuple[str, str]] | None = None,
        commit_seq: int = 0,
    ) -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers: list[tuple[str, str]] = [] if headers is None else headers
        # The storage commit this response reports on; the server sends it only once that commit is durable.
        self.commit_seq = commit_seq


class Operation:
    """A registered operation: the body it accepts and the function that serves it."""

    __slots__ = ("name", "run")

    def __init__(self, name: str, run: Callable[[dict[str, Any]], Any]) -> None:
        self.name = name
        self.run = run


# An extension endpoint: (method, path with query string, body) -> response.
Extension = Callable[[str, str, bytes], RawResponse]


class _RequestIds:
    """52-character upper-case ids as DynamoDB's, cheap to make: a random per-process stem and a counter."""

    def __init__(self) -> None:
        stem = os.urandom(20).hex().upper()
        self._stem = stem[:36]
        self._counter = count(1)

    def next(self) -> str:
        return f"{self._stem}{next(self._counter):016X}"


class Protocol:
    """Turns HTTP requests into operation calls. ``operations`` maps an operation name to a callable that takes
    the decoded JSON body and returns the response body as a dict or as ready JSON bytes."""

    def __init__(
        self,
        operations: dict[str, Operation],
        *,
        region: str,
        commit_seq: Callable[[], int],
        extension: Extension | None = None,
    ) -> None:
        self._operations = operations
        self._extension = extension
        self._health = f"healthy: dynamodb.{region}.amazonaws.com ".encode()
        self._commit_seq = commit_seq
        self._ids = _RequestIds()

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        request_id = self._ids.next()
        if self._extension is not None and path.startswith(EXTENSION_PREFIX):
            response = self._extend(method, path, body)
        else:
            response = self._dispatch(method, headers, body)
        response.headers.append(("x-amzn-RequestId", request_id))
        origin = headers.get("origin")
        if origin is not None and method != "OPTIONS":
            response.headers.extend(cors.response_headers(origin))
        return response

    def _dispatch(self, method: str, headers: Headers, body: bytes) -> RawResponse:
        if method == "OPTIONS":
            return RawResponse(200, b"", "text/plain", cors.preflight_headers(headers))
        if method == "GET" and not body:
            return RawResponse(200, self._health, "text/plain")
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if method != "POST" or (body and content_type not in _ACCEPTED_CONTENT_TYPES):
            return RawResponse(404, _UNKNOWN_OPERATION_XML, "text/plain")
        reply_type = content_type if content_type in _ACCEPTED_CONTENT_TYPES else JSON_10
        try:
            response = self._call(headers, body)
        except DynamoError as e:
            response = _error_response(e)
        except StorageUnavailableError:
            # The store refuses writes (the reason is in the log, once): nothing was done, a retry may succeed.
            response = _error_response(ServiceUnavailable(messages.STORAGE_UNAVAILABLE))
        except StorageError as storage_error:
            # A write the store could not make durable (it was taken back); not a bug, so no traceback.
            log.error("storage failure serving a request: %s", storage_error)
            response = _error_response(InternalServerError())
        except Exception:
            log.exception("unexpected error serving a request")
            response = _error_response(InternalServerError())
        response.content_type = reply_type
        if response.body and len(response.body) >= GZIP_MIN_BYTES and _accepts_gzip(headers):
            response.body = _gzip(response.body)
            response.headers.append(("Content-Encoding", "gzip"))
        response.headers.append(("x-amz-crc32", str(zlib.crc32(response.body))))
        return response

    def _extend(self, method: str, path: str, body: bytes) -> RawResponse:
        """dynastore's own endpoints (``/dynastore/...``, see protocol/extensions.py); never DynamoDB's."""
        assert self._extension is not None
        seq_before = self._commit_seq()
        try:
            response = self._extension(method, path, body)
        except Exception:
            log.exception("unexpected error serving an extension request")
            response = RawResponse(500, b'{"error":"internal error"}', "application/json")
        seq_after = self._commit_seq()
        response.commit_seq = seq_after if seq_after != seq_before else 0
        return response

    def _call(self, headers: Headers, body: bytes) -> RawResponse:
        data: Any = None
        if body:
            body = _decompress(headers.get("content-encoding"), body)
            try:
                data = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise SerializationException() from None
        operation = self._operation(headers.get("x-amz-target", ""))
        auth.check(headers)
        if not body:
            raise SerializationException()
        seq_before = self._commit_seq()
        result = operation.run(data)
        seq_after = self._commit_seq()
        payload = result if isinstance(result, bytes) else orjson.dumps(result)
        return RawResponse(200, payload, commit_seq=seq_after if seq_after != seq_before else 0)

    def _operation(self, target: str) -> Operation:
        for prefix in _TARGET_PREFIXES:
            if target.startswith(prefix):
                operation = self._operations.get(target[len(prefix) :])
                if operation is not None:
                    return operation
                break
        raise UnknownOperationException()


def _error_response(error: DynamoError) -> RawResponse:
    return RawResponse(error.status, orjson.dumps(error.to_body()))


def _accepts_gzip(headers: Headers) -> bool:
    return "gzip" in headers.get("accept-encoding", "")


def _gzip(body: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    return compressor.compress(body) + compressor.flush()


def _decompress(encoding: str | None, body: bytes) -> bytes:
    """Undo a Content-Encoding of gzip or deflate; the result is held to the same 16 MB request limit."""
    if not encoding or encoding == "identity":
        return body
    wbits = {"gzip": 31, "x-gzip": 31, "deflate": 15}.get(encoding.strip().lower())
    if wbits is None:
        raise SerializationException()
    try:
        decompressor = zlib.decompressobj(wbits)
        out = decompressor.decompress(body, MAX_REQUEST_BYTES + 1)
    except zlib.error:
        if wbits == 15:  # some clients send raw deflate without the zlib header
            try:
                out = zlib.decompressobj(-15).decompress(body, MAX_REQUEST_BYTES + 1)
            except zlib.error:
                raise SerializationException() from None
        else:
            raise SerializationException() from None
    if len(out) > MAX_REQUEST_BYTES:
        raise RequestEntityTooLargeException()
    return out
