"""The request log (``--log-requests``): one line on stderr per request, as text (``key=value``) or JSON.

Fields, in order: ``time`` (UTC, when the request arrived), ``request_id`` (its ``x-amzn-RequestId``),
``operation`` (the X-Amz-Target's operation; ``METHOD /path`` for other requests), ``table`` (the table or tables
the request names, comma-separated), ``status`` (HTTP), ``error`` (the error's type), ``latency_ms`` (from arrival
until the answer may leave: for a write, once it is durable) and ``rcu`` / ``wcu`` (the read and write capacity
units it consumed, table and indexes together: a throttled request consumes none, and with ``--capacity report``
one that would have been throttled counts what it was served).

Nothing here runs unless the log is on: the server then builds a ``LoggedProtocol`` instead of a ``Protocol``.
Every piece of a line is had without parsing anything again: the operation is in a header, the table names in
the request the operation was given (decoded once, by the protocol), the error in the exception, the capacity
in the capacity model's meters (engine/capacity/buckets.Meter: totals the request's difference is taken from).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from dynastore.engine.capacity.buckets import Meter
from dynastore.protocol.http_server import Durability
from dynastore.protocol.metrics import Metrics
from dynastore.protocol.protocol import (
    EXTENSION_PREFIX,
    UNKNOWN_OPERATION_XML,
    Extension,
    Headers,
    Operation,
    Protocol,
    RawResponse,
)
from dynastore.security.caller import Caller

__all__ = ["FORMATS", "LoggedProtocol", "RequestLog", "tables_of"]

FORMATS = ("text", "json")
_REQUEST_ID = "x-amzn-RequestId"
_PLAIN = re.compile(r"[\w.\-/:,]+").fullmatch  # what table names, operations and error types are made of
# Lines wait for the end of the event loop's turn and are written together: one write for many requests (a write
# per line cost as much as the rest of the line). At most this many wait, whatever the turn.
_MOST_PENDING = 256
_WORDS_KEPT = 1024  # text fields formatted once and kept (operations, table names and error types repeat)


class RequestLog:
    """Formats and writes request lines (to stderr: stdout's first line is the server's "listening on")."""

    def __init__(self, form: str = "text", write: Callable[[bytes], object] | None = None) -> None:
        if form not in FORMATS:
            raise ValueError(f"log format must be one of {', '.join(FORMATS)}")
        self._json = form == "json"
        self._write = write if write is not None else _Stderr().write
        self._second = -1
        self._stamp = ""
        self._pending: list[bytes] = []
        self._words: dict[str, str] = {}

    def line(
        self,
        arrived: float,
        request_id: str,
        operation: str,
        table: str | None,
        status: int,
        error: str | None,
        latency: float,
        units: tuple[float, float],
    ) -> None:
        stamp = self._time(arrived)
        ms = int(latency * 1_000_000) / 1000  # microsecond precision; round() costs more than the rest
        if self._json:
            fields = {
                "time": stamp,
                "request_id": request_id,
                "operation": operation,
                "table": table,
                "status": status,
                "error": error,
                "latency_ms": ms,
                "rcu": units[0],
                "wcu": units[1],
            }
            self._emit(orjson.dumps(fields) + b"\n")
        else:
            self._emit(
                f"time={stamp} request_id={request_id} operation={self._text(operation)} table={self._text(table)} "
                f"status={status} error={self._text(error)} latency_ms={ms} rcu={units[0]:g} wcu={units[1]:g}\n"
                "".encode()
            )

    def _emit(self, line: bytes) -> None:
        pending = self._pending
        pending.append(line)
        if len(pending) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no event loop runs (a host drives the protocol itself): written at once
                self.flush()
        elif len(pending) >= _MOST_PENDING:
            self.flush()

    def flush(self) -> None:
        """Write the lines still waiting (the server does at the end of each turn of its loop, and when it stops)."""
        pending = self._pending
        if pending:
            self._pending = []
            self._write(b"".join(pending))

    def _text(self, value: str | None) -> str:
        if value is None:
            return "-"
        words = self._words
        text = words.get(value)
        if text is None:
            text = _text(value)
            if len(words) < _WORDS_KEPT:
                words[value] = text
        return text

    def _time(self, t: float) -> str:
        """ISO 8601 in UTC with milliseconds; the part up to the second is formatted once a second."""
        second = int(t)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._stamp}.{int((t - second) * 1000):03d}Z"


class _Stderr:
    """Whole lines straight to file descriptor 2 (no buffer of its own, so no line is left half written)."""

    def __init__(self) -> None:
        self._fd = sys.stderr.fileno()

    def write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # stderr closed: the lines are lost, the requests are not
            written = os.write(self._fd, data)
            while written < len(data):  # a pipe may take a part of a long write
                written += os.write(self._fd, data[written:])


def _text(value: str | None) -> str:
    """A text field's value: "-" for none, quoted (JSON style) when it would not read back as one word."""
    if value is None:
        return "-"
    if _PLAIN(value) is not None:
        return value
    return orjson.dumps(value).decode()


def tables_of(request: Any) -> str | None:
    """The table names a request names (TableName; RequestItems' keys; TransactItems' tables; a table ARN), in
    order, comma-separated; None when it names none. The request is as the client sent it (not yet validated)."""
    if not isinstance(request, dict):
        return None
    name = request.get("TableName")
    if isinstance(name, str):
        return name
    names: list[str] = []
    items = request.get("RequestItems")
    if isinstance(items, dict):
        names.extend(str(k) for k in items)
    actions = request.get("TransactItems")
    if isinstance(actions, list):
        for action in actions:
            for part in action.values() if isinstance(action, dict) else ():
                table = part.get("TableName") if isinstance(part, dict) else None
                if isinstance(table, str) and table not in names:
                    names.append(table)
    arn = request.get("ResourceArn")
    if isinstance(arn, str) and ":table/" in arn:
        names.append(arn.split(":table/", 1)[1].split("/", 1)[0])
    return ",".join(names) if names else None


class LoggedProtocol(Protocol):
    """A Protocol that logs every request it answers (see the module docstring)."""

    def __init__(
        self,
        operations: dict[str, Operation],
        *,
        region: str,
        commit_seq: Callable[[], int],
        request_log: RequestLog,
        meters: tuple[Meter, Meter],
        extension: Extension | None = None,
        not_served: frozenset[str] = frozenset(),
        streams_operations: dict[str, Operation] | None = None,
        metrics: Metrics | None = None,
        account_id: str = "000000000000",
    ) -> None:
        super().__init__(
            {name: Operation(name, self._keeping(op.run)) for name, op in operations.items()},
            region=region,
            commit_seq=commit_seq,
            extension=extension,
            not_served=not_served,
            streams_operations={
                name: Operation(name, self._keeping(op.run)) for name, op in (streams_operations or {}).items()
            },
            metrics=metrics,
            account_id=account_id,
        )
        self.request_log = request_log
        self._meters = meters
        self._request: Any = None  # the decoded request of the operation being served
        self.durability: Durability | None = None  # set once the server runs: writes are logged when durable

    def _keeping(self, run: Callable[[Any, Caller], Any]) -> Callable[[Any, Caller], Any]:
        def keep(request: Any, caller: Caller) -> Any:
            self._request = request
            return run(request, caller)

        return keep

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        arrived, started = time.time(), time.perf_counter()
        read_meter, write_meter = self._meters
        reads, writes = read_meter.units, write_meter.units
        response = super().handle(method, headers, body, path)
        units = (read_meter.units - reads, write_meter.units - writes)
        target = headers.get("x-amz-target")
        if target and not path.startswith(EXTENSION_PREFIX):
            operation = target.rpartition(".")[2]
        else:
            operation = f"{method} {path}"
        # Kept by _keeping and Protocol._error during super().handle, read and cleared here. (Not cleared before
        # the call: the type checker would take the attribute to be None after it, and compiled code checks that
        # at run time.)
        error, request = self._error_type, self._request
        self._error_type = self._request = None
        if error is None and response.status == 404 and response.body == UNKNOWN_OPERATION_XML:
            error = "UnknownOperationException"
        request_id = next((value for name, value in reversed(response.headers) if name == _REQUEST_ID), "")
        table = tables_of(request)

        def write(failure: BaseException | None) -> None:
            status, error_type = (500, "InternalServerError") if failure is not None else (response.status, error)
            latency = time.perf_counter() - started
            self.request_log.line(arrived, request_id, operation, table, status, error_type, latency, units)

        durability = self.durability
        seq = response.commit_seq
        if durability is not None and seq and seq > durability.durable_seq:
            durability.when_durable(seq, write)  # registered before the connection's own wait: logged first
        else:
            write(None)
        return response
