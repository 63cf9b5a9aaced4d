"""The DynamoDB wire protocol, free of sockets: one request in, one response out.

Order of checks follows DynamoDB: health and CORS first, then content type, JSON, X-Amz-Target, authentication,
then the operation (whose shape validation and semantics live in validation/ and api/).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
import zlib
from asyncio import Future
from collections.abc import Callable
from typing import Any, Final

import orjson

from dynastore import messages
from dynastore.errors import (
    OLD_FORM_REGIONS,
    DynamoError,
    InternalServerError,
    SerializationException,
    ServiceUnavailable,
    UnknownOperationException,
    ValidationException,
)
from dynastore.protocol import cors, encoding, prometheus
from dynastore.protocol.metrics import METRICS_PATH, Metrics
from dynastore.protocol.targets import DYNAMODB_TARGET_PREFIXES, STREAMS_TARGET_PREFIX
from dynastore.security.authenticator import Authenticator, check_form
from dynastore.security.caller import AnonymousCallers, Caller
from dynastore.security.sts import FORM_CONTENT_TYPE, XML_CONTENT_TYPE, StsService
from dynastore.storage.kv import NOT_APPLIED, StorageError

log = logging.getLogger("dynastore")

# What every request calls, as Final names: compiled code reads each from a C static, instead of looking it up in
# this module's dictionary (or another module's) on every call.
crc32: Final = zlib.crc32
perf_counter: Final = time.perf_counter
_loads: Final = orjson.loads
_dumps: Final = orjson.dumps
_COMPRESSION_MIN_BYTES: Final = encoding.COMPRESSION_MIN_BYTES

JSON_10 = "application/x-amz-json-1.0"
JSON_11 = "application/x-amz-json-1.1"
_ACCEPTED_CONTENT_TYPES: Final = frozenset({JSON_10, JSON_11, "application/json"})
UNKNOWN_OPERATION_XML = b"<UnknownOperationException/>\n"
_HOST = re.compile(r"[A-Za-z0-9.\-\[\]:]+")  # what the health check repeats of a Host header

Headers = dict[str, str]  # lower-case names (a dict: compiled code reads it directly)
EXTENSION_PREFIX = "/dynastore/"
CONSOLE_PREFIX = "/console"  # the web console's files (admin/console.py), also served by the extension


class RawResponse:
    # A plain class rather than a dataclass: one is made per request, and a compiled build makes a dataclass
    # through its interpreted __init__ (docs/design.md "Compiled modules").
    __slots__ = ("status", "body", "content_type", "headers", "commit_seq", "later")

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
        # A response that another process is still making (a cluster node forwarding to its leader): sent, in its
        # place, once this future holds it.
        self.later: asyncio.Future[RawResponse] | None = None


class Operation:
    """A registered operation: the body it accepts and the function that serves it."""

    __slots__ = ("name", "run")

    def __init__(self, name: str, run: Callable[[Any, Caller], Any]) -> None:
        self.name = name
        self.run = run


# An extension endpoint: (method, headers, path with query string, body) -> response.
Extension = Callable[[str, Headers, str, bytes], RawResponse]


class _RequestIds:
    """52-character upper-case ids as DynamoDB's, cheap to make: a random per-process stem of 36 hex digits and a
    counter. The counter is written in decimal from 10**15 on: always 16 digits, and ``str`` of an int costs a
    fraction of a formatted hex field (about 5k instructions a request, compiled)."""

    def __init__(self) -> None:
        self._stem = os.urandom(18).hex().upper()
        self._counter = 10**15

    def next(self) -> str:
        self._counter += 1
        return self._stem + str(self._counter)


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
        not_served: frozenset[str] = frozenset(),
        streams_operations: dict[str, Operation] | None = None,
        metrics: Metrics | None = None,
        account_id: str = "000000000000",
    ) -> None:
        # Every request's caller while authentication is off: by the region of its credential scope (app.py makes
        # them all the configured region's with --shared-namespace).
        self.anonymous = AnonymousCallers(account_id, region)
        self.authenticator: Authenticator | None = None  # --auth sigv4: verifies every request (set by app.py)
        self.sts: StsService | None = None  # --auth sigv4: the STS endpoint, for form-encoded POSTs (set by app.py)
        self._not_served = not_served  # DynamoDB operations refused with a message naming them
        # Each X-Amz-Target an SDK sends, to its operation: one look-up a request (the prefixes are read only for
        # the error of a target that names none).
        self._by_target = {prefix + name: op for name, op in operations.items() for prefix in DYNAMODB_TARGET_PREFIXES}
        for name, op in (streams_operations or {}).items():
            self._by_target[STREAMS_TARGET_PREFIX + name] = op
        self._extension = extension
        self._health = f"healthy: dynamodb.{region}.amazonaws.com ".encode()
        self._commit_seq = commit_seq
        self._ids = _RequestIds()
        self.metrics = metrics  # None: no /metrics, nothing counted (--no-metrics)
        self._error_type: str | None = None  # the error type of the request being answered (set by _error)
        # The request log (request_log.LoggedProtocol) reads each request as decoded, kept when an operation runs.
        self.keeps_request = False
        self.kept_request: Any = None

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        metrics = self.metrics
        if metrics is None:
            return self._answer(method, headers, body, path)
        if path != "/" and path.split("?", 1)[0] == METRICS_PATH:
            # Not counted: a scrape is not a request to the database. It names every table: with authentication
            # on, an admin's signature is needed here (the --metrics-port listener stays the operator's choice).
            refusal = self.refuse_admin(method, headers, path, body)
            return metrics_response(metrics, method) if refusal is None else refusal
        started = perf_counter()
        response = self._answer(method, headers, body, path)
        error_type = self._error_type
        if error_type is None and response.status == 404 and response.body == UNKNOWN_OPERATION_XML:
            error_type = "UnknownOperationException"
        metrics.requests.observe(headers.get("x-amz-target"), error_type, response.status, response.commit_seq, started)
        return response

    def _answer(self, method: str, headers: Headers, body: bytes, path: str) -> RawResponse:
        # Cleared here rather than in handle: there the type checker would take it to be None after the call, and
        # compiled code checks that at run time.
        self._error_type = None
        request_id = self._ids.next()
        if path != "/" and self._extension is not None and is_extension_path(path):
            response = self._extend(method, headers, path, body)  # never CORS headers: see protocol/cors.py
        else:
            response = self._dispatch(method, headers, body, path)
            if "origin" in headers and method != "OPTIONS":
                response.headers.extend(cors.response_headers())
        later = response.later
        if later is not None:  # (a global table's strongly consistent request: protocol/protocol.py ``_later``)
            response.later = _headed(later, response.headers, request_id)
            return response
        response.headers.append(("x-amzn-RequestId", request_id))
        response.headers.append(("x-amz-crc32", str(crc32(response.body))))
        return response

    def _dispatch(self, method: str, headers: Headers, body: bytes, path: str) -> RawResponse:
        if path != "/" and path.split("?", 1)[0] != "/":
            return RawResponse(404, UNKNOWN_OPERATION_XML, "text/plain")
        if method == "OPTIONS" and "origin" in headers:
            return RawResponse(200, b"", "text/plain", cors.preflight_headers(headers))
        if method == "GET" and not body:
            return RawResponse(200, self._health_text(headers), "text/plain")
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if method != "POST" or (body and content_type not in _ACCEPTED_CONTENT_TYPES):
            if self.sts is not None and content_type == FORM_CONTENT_TYPE and method == "POST":
                return self._sts(headers, body, path)  # STS's query protocol: never a DynamoDB request
            return RawResponse(404, UNKNOWN_OPERATION_XML, "text/plain")
        try:
            response = self._call(headers, body, path)
            if content_type in _ACCEPTED_CONTENT_TYPES:
                response.content_type = content_type  # a success answers in the request's JSON type
        except DynamoError as e:
            response = self._error(e)  # errors are always application/x-amz-json-1.0
        except NOT_APPLIED:
            # The store refuses writes (the reason is in the log, once): nothing was done, a retry may succeed.
            response = self._error(ServiceUnavailable(messages.STORAGE_UNAVAILABLE))
        except StorageError as storage_error:
            # A write the store could not make durable (it was taken back); not a bug, so no traceback.
            log.error("storage failure serving a request: %s", storage_error)
            response = self._error(InternalServerError())
        except Exception:
            log.exception("unexpected error serving a request")
            response = self._error(InternalServerError())
        if len(response.body) >= _COMPRESSION_MIN_BYTES:
            accepted = headers.get("accept-encoding")
            coding = encoding.response_coding(accepted) if accepted else None
            if coding is not None:
                response.body = encoding.compress(coding, response.body)
                response.headers.append(("Content-Encoding", coding))
        return response

    def _sts(self, headers: Headers, body: bytes, path: str) -> RawResponse:
        assert self.sts is not None
        try:
            status, answer = self.sts.handle(headers, body, path)
        except Exception:
            log.exception("unexpected error serving an STS request")
            self._error_type = "InternalFailure"
            return RawResponse(500, b"<ErrorResponse><Error><Type>Receiver</Type><Code>InternalFailure</Code>"
                               b"</Error></ErrorResponse>", XML_CONTENT_TYPE)  # fmt: skip
        return RawResponse(status, answer, XML_CONTENT_TYPE)

    def _error(self, error: DynamoError) -> RawResponse:
        """The response to a request refused with ``error``; its type is kept for the metrics and the request log."""
        self._error_type = type(error).__name__
        return _error_response(error)

    def _health_text(self, headers: Headers) -> bytes:
        """DynamoDB names the host the client asked for (its Host header)."""
        host = headers.get("host", "")
        if not host or len(host) > 255 or not _HOST.fullmatch(host):
            return self._health
        return f"healthy: {host} ".encode()

    def _extend(self, method: str, headers: Headers, path: str, body: bytes) -> RawResponse:
        """dynastore's own endpoints (``/dynastore/...``, see admin/routes.py); never DynamoDB's."""
        assert self._extension is not None
        if self.authenticator is not None and not path.startswith(CONSOLE_PREFIX):
            # The console's files hold no data (they sign in and then sign every request they make): served to
            # anyone, as a login page is; the endpoints behind them need an admin's signature.
            refusal = self.refuse_admin(method, headers, path, body)
            if refusal is not None:
                return refusal
        seq_before = self._commit_seq()
        try:
            response = self._extension(method, headers, path, body)
        except Exception:
            log.exception("unexpected error serving an extension request")
            response = RawResponse(500, b'{"error":"internal error"}', "application/json")
        seq_after = self._commit_seq()
        response.commit_seq = seq_after if seq_after != seq_before else 0
        return response

    def refuse_admin(self, method: str, headers: Headers, path: str, body: bytes) -> RawResponse | None:
        """With authentication on, dynastore's own endpoints answer only requests signed by an admin user: None for
        such a request, else the 403 to answer."""
        authenticator = self.authenticator
        if authenticator is None:
            return None
        try:
            caller = authenticator.authenticate(method, path, headers, body)
        except DynamoError as e:
            reason = f"{type(e).__name__}: {e.message}" if e.message else type(e).__name__
            return _forbidden(messages.ADMIN_NOT_SIGNED.format(reason=reason))
        if not caller.admin:
            return _forbidden(messages.ADMIN_NOT_ADMIN.format(arn=caller.arn))
        return None

    def _call(self, headers: Headers, sent: bytes, path: str) -> RawResponse:
        data: Any = None
        coding = headers.get("content-encoding")
        body = encoding.decompress(coding, sent) if coding else sent  # empty is no gzip either: 500, as on DynamoDB
        if body:
            try:
                data = _loads(body)
            except orjson.JSONDecodeError:
                raise SerializationException() from None
        operation = self._operation(headers.get("x-amz-target", ""))
        authenticator = self.authenticator
        if authenticator is None:
            # Any access key is taken, but the signature's form is DynamoDB's; its scope names the caller's region.
            caller = self.anonymous.in_region(check_form(headers, path))
        else:
            caller = authenticator.authenticate("POST", path, headers, sent)  # the signature covers the bytes sent
        if not body:
            raise SerializationException()
        seq_before = self._commit_seq()
        if self.keeps_request:
            self.kept_request = data
        try:  # costs nothing unless an exception is raised
            result = operation.run(data, caller)
        except ValidationException as error:
            if caller.region in OLD_FORM_REGIONS:
                error.in_old_form()
            raise
        if result.__class__ is not dict and isinstance(result, Future):
            return _later(result, caller.region)
        seq_after = self._commit_seq()
        payload = result if isinstance(result, bytes) else _dumps(result)
        return RawResponse(200, payload, commit_seq=seq_after if seq_after != seq_before else 0)

    def _operation(self, target: str) -> Operation:
        operation = self._by_target.get(target)
        if operation is not None:
            return operation
        # No operation of this server: an operation of DynamoDB's it does not serve is named in the error.
        for prefix in DYNAMODB_TARGET_PREFIXES:
            if target.startswith(prefix):
                name = target[len(prefix) :]
                if name in self._not_served:
                    raise UnknownOperationException(messages.OPERATION_NOT_SERVED.format(operation=name))
                break
        raise UnknownOperationException()


def _later(pending: asyncio.Future[Any], region: str) -> RawResponse:
    """The response of an operation that answered with a future of its result (a write or strong read of a global
    table with multi-region strong consistency, api/strong_items.py): sent once the future is done, with what it
    holds or the error it raised, as ``_call`` would have sent them."""
    placeholder = RawResponse(200, b"")
    made: asyncio.Future[RawResponse] = pending.get_loop().create_future()

    def finish(done: asyncio.Future[Any]) -> None:
        if not made.done():
            made.set_result(_response_of(done, region))

    pending.add_done_callback(finish)
    placeholder.later = made
    return placeholder


def _response_of(done: asyncio.Future[Any], region: str) -> RawResponse:
    error: BaseException | None = ServiceUnavailable() if done.cancelled() else done.exception()
    if error is None:
        result = done.result()
        return RawResponse(200, result if isinstance(result, bytes) else _dumps(result))
    if isinstance(error, ValidationException) and region in OLD_FORM_REGIONS:
        error.in_old_form()
    if not isinstance(error, DynamoError):
        log.error("a request failed", exc_info=error)
        error = InternalServerError()
    return _error_response(error)


def _headed(
    later: asyncio.Future[RawResponse], headers: list[tuple[str, str]], request_id: str
) -> asyncio.Future[RawResponse]:
    """``later``'s response with the headers every response carries (and those given to its placeholder)."""
    headed: asyncio.Future[RawResponse] = later.get_loop().create_future()

    def finish(done: asyncio.Future[RawResponse]) -> None:
        if headed.done():
            return
        if done.cancelled() or done.exception() is not None:
            headed.set_result(_error_response(InternalServerError()))
            return
        response = done.result()
        response.headers.extend(headers)
        response.headers.append(("x-amzn-RequestId", request_id))
        response.headers.append(("x-amz-crc32", str(crc32(response.body))))
        headed.set_result(response)

    later.add_done_callback(finish)
    return headed


def is_extension_path(path: str) -> bool:
    """dynastore's own endpoints and the console's pages; every other path is DynamoDB's (and only ``/`` is)."""
    if path.startswith(EXTENSION_PREFIX):
        return True
    return path.startswith(CONSOLE_PREFIX) and (len(path) == len(CONSOLE_PREFIX) or path[len(CONSOLE_PREFIX)] in "/?")


class MetricsEndpoint:
    """What the ``--metrics-port`` listener answers: ``GET /metrics``, and 404 to anything else."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        if path.split("?", 1)[0] == METRICS_PATH:
            return metrics_response(self._metrics, method)
        return RawResponse(404, b"not found: this port serves GET /metrics\n", "text/plain")


def metrics_response(metrics: Metrics, method: str) -> RawResponse:
    """``GET /metrics``: the page in the Prometheus text format (other methods: 405 as a plain text)."""
    if method != "GET":
        return RawResponse(405, b"method not allowed: GET /metrics\n", "text/plain", [("Allow", "GET")])
    return RawResponse(200, metrics.page(), prometheus.CONTENT_TYPE)


def _forbidden(text: str) -> RawResponse:
    return RawResponse(403, orjson.dumps({"error": text}), "application/json")


def _error_response(error: DynamoError) -> RawResponse:
    return RawResponse(error.status, orjson.dumps(error.to_body()))


def durability_failure(error: BaseException) -> DynamoError:
    """The answer to a write that was committed but could not be made durable: taken back by a storage failure
    (``WriteTakenBackError``), it was not applied and is answered as the writes refused after it are (503);
    anything else leaves its outcome unknown (500)."""
    if isinstance(error, NOT_APPLIED):
        return ServiceUnavailable(messages.STORAGE_UNAVAILABLE)
    return InternalServerError()
