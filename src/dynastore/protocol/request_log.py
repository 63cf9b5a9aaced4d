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
import math
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

__all__ = ["FORMATS", "LoggedProtocol", "RequestLog", "tables_of"]

FORMATS = ("text", "json")
_REQUEST_ID = "x-amzn-RequestId"
_PLAIN = re.compile(r"[\w.\-/:,]+").fullmatch  # what table names, operations and error types are made of
# Lines wait for the end of the event loop's turn and are written together: one write for many requests (a write
# per line cost as much as the rest of the line). At most this many wait, whatever the turn.
_MOST_PENDING = 256
_TEXTS_KEPT = 1024  # texts formatted once and kept, of each kind (operations, tables, errors, units repeat)
# The ends of the two fields that have milliseconds, by the count of thousandths: the time's (".042Z") and the
# latency's (".042", ".5", ".0": its shortest form as a float, as the JSON format writes it).
_MILLISECONDS = tuple(f".{thousandths:03d}Z" for thousandths in range(1000))
_SECONDS = tuple(f"{seconds:02d}" for seconds in range(60))
# Below this many microseconds the latency's text is had from _FRACTIONS in both formats (checked against str and
# orjson for every value below 3,000,000 and a million random ones below it); above, orjson formats it.
_EXACT_MICROS = 10**12
_FRACTIONS = tuple(f"{thousandths / 1000:.3f}".rstrip("0")[1:] if thousandths else ".0" for thousandths in range(1000))


class RequestLog:
    """Formats and writes request lines (to stderr: stdout's first line is the server's "listening on").

    A line costs a few look-ups and one string, in either format: nothing of it is formatted from a float (that
    alone cost more than the rest of a line), what repeats from line to line is formatted once and kept (the time
    up to the minute, the operation, table, status and error, the capacity units; the last of each is compared
    first, which costs less than a look-up by a tuple), and lines are written a turn of the event loop at a
    time."""

    def __init__(self, form: str = "text", write: Callable[[bytes], object] | None = None) -> None:
        if form not in FORMATS:
            raise ValueError(f"log format must be one of {', '.join(FORMATS)}")
        self._json = form == "json"
        self._write = write if write is not None else _Stderr().write
        self._second = -1
        self._second_stamp = ""  # the time field up to the second of self._second
        self._minute = -1
        self._minute_stamp = ""  # the time field up to the minute of self._minute, with its colon
        self._pending: list[bytes] = []
        self._outcomes: dict[tuple[str, str | None, int, str | None], str] = {}
        self._units: dict[tuple[float, float], str] = {}  # (read units, write units) -> their text
        # The last outcome and units, and their texts (a request is most often like the one before it).
        self._last_operation = ""
        self._last_table: str | None = None
        self._last_status = -1
        self._last_error: str | None = None
        self._last_outcome = ""
        self._last_reads = math.nan  # equal to no units at all
        self._last_writes = math.nan
        self._last_units = ""

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
        # The time field in ISO 8601, UTC, with milliseconds; the latency with microsecond precision.
        second = int(arrived)
        thousandths = int((arrived - second) * 1000)
        if second != self._second:
            self._new_second(second)
        micros = int(latency * 1_000_000)
        if (
            operation is self._last_operation
            and status == self._last_status
            and table == self._last_table
            and error == self._last_error
        ):
            outcome = self._last_outcome
        else:
            outcome = self._outcome(operation, table, status, error)
        if units[0] == self._last_reads and units[1] == self._last_writes:
            unit_text = self._last_units
        else:
            unit_text = self._unit(units)
        if self._json:
            if micros < _EXACT_MICROS and request_id.encode().isalnum():
                # The fields as orjson writes the dictionary of them (tests/unit/protocol/test_request_log.py
                # compares the two): the kept texts are orjson's own, the request id needs no escape (only ASCII
                # letters and digits pass; checked in its bytes, a fifth of the cost of the text's check).
                text = (
                    f'{{"time":"{self._second_stamp}{_MILLISECONDS[thousandths]}","request_id":"{request_id}",'
                    f'{outcome},"latency_ms":{micros // 1000}{_FRACTIONS[micros % 1000]},{unit_text}}}\n'
                )
            else:
                text = self._json_line(thousandths, request_id, operation, table, status, error, micros, units)
        else:
            text = (
                f"time={self._second_stamp}{_MILLISECONDS[thousandths]} request_id={request_id} "
                f"{outcome} latency_ms={micros // 1000}{_FRACTIONS[micros % 1000]} {unit_text}\n"
            )
        pending = self._pending
        pending.append(text.encode())
        if len(pending) == 1 or len(pending) >= _MOST_PENDING:
            self._kept(pending)

    def _json_line(
        self,
        thousandths: int,
        request_id: str,
        operation: str,
        table: str | None,
        status: int,
        error: str | None,
        micros: int,
        units: tuple[float, float],
    ) -> str:
        """The JSON line of a request whose id needs escaping or whose latency is too long for _FRACTIONS."""
        fields = {
            "time": self._second_stamp + _MILLISECONDS[thousandths],
            "request_id": request_id,
            "operation": operation,
            "table": table,
            "status": status,
            "error": error,
            "latency_ms": micros / 1000,
            "rcu": units[0],
            "wcu": units[1],
        }
        return orjson.dumps(fields, option=orjson.OPT_APPEND_NEWLINE).decode()

    def _kept(self, pending: list[bytes]) -> None:
        """The first line of a turn has its writing scheduled for the turn's end; too many lines are written now."""
        if len(pending) >= _MOST_PENDING:
            self.flush()
            return
        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:  # no event loop runs (a host drives the protocol itself): written at once
            self.flush()

    def flush(self) -> None:
        """Write the lines still waiting (the server does at the end of each turn of its loop, and when it stops)."""
        pending = self._pending
        if pending:
            self._pending = []
            self._write(b"".join(pending))

    def _outcome(self, operation: str, table: str | None, status: int, error: str | None) -> str:
        """The text of the operation, table, status and error fields (kept, and remembered as the last)."""
        key = (operation, table, status, error)
        text = self._outcomes.get(key)
        if text is None:
            if self._json:
                text = _json({"operation": operation, "table": table, "status": status, "error": error})[1:-1]
            else:
                text = f"operation={_text(operation)} table={_text(table)} status={status} error={_text(error)}"
            if len(self._outcomes) < _TEXTS_KEPT:
                self._outcomes[key] = text
        self._last_operation, self._last_table, self._last_status, self._last_error = key
        self._last_outcome = text
        return text

    def _unit(self, units: tuple[float, float]) -> str:
        """The text of the rcu and wcu fields (kept, and remembered as the last)."""
        text = self._units.get(units)
        if text is None:
            if self._json:
                text = _json({"rcu": units[0], "wcu": units[1]})[1:-1]
            else:
                text = f"rcu={units[0]:g} wcu={units[1]:g}"
            if len(self._units) < _TEXTS_KEPT:
                self._units[units] = text
        self._last_reads, self._last_writes = units
        self._last_units = text
        return text

    def _new_second(self, second: int) -> None:
        self._second = second
        minute, seconds = divmod(second, 60)  # (POSIX time has no leap seconds: a minute is 60 of them)
        if minute != self._minute:
            self._minute = minute
            self._minute_stamp = time.strftime("%Y-%m-%dT%H:%M:", time.gmtime(minute * 60))
        self._second_stamp = self._minute_stamp + _SECONDS[seconds]


class _Stderr:
    """Whole lines straight to file descriptor 2 (no buffer of its own, so no line is left half written)."""

    def __init__(self) -> None:
        self._fd = sys.stderr.fileno()

    def write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # stderr closed: the lines are lost, the requests are not
            written = os.write(self._fd, data)
            while written < len(data):  # a pipe may take a part of a long write
                written += os.write(self._fd, data[written:])


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


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
            operations,
            region=region,
            commit_seq=commit_seq,
            extension=extension,
            not_served=not_served,
            streams_operations=streams_operations,
            metrics=metrics,
            account_id=account_id,
        )
        self.request_log = request_log
        self._meters = meters
        self.keeps_request = True  # Protocol keeps the decoded request of the operation it runs, read in handle
        self.durability: Durability | None = None  # set once the server runs: writes are logged when durable
        self._operations_by_target: dict[str, str] = {}

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        arrived, started = time.time(), time.perf_counter()
        read_meter, write_meter = self._meters
        reads, writes = read_meter.units, write_meter.units
        response = Protocol.handle(self, method, headers, body, path)  # (super() costs an object a request)
        units = (read_meter.units - reads, write_meter.units - writes)
        # Kept by Protocol (its _call and _error) during the call, read and cleared here. (Not cleared before the
        # call: the type checker would take the attribute to be None after it, and compiled code checks that at
        # run time.)
        error, request = self._error_type, self.kept_request
        self._error_type = self.kept_request = None
        if error is None and response.status == 404 and response.body == UNKNOWN_OPERATION_XML:
            error = "UnknownOperationException"
        # The common request names one table: read here rather than through a call of tables_of.
        table = request.get("TableName") if request.__class__ is dict else None
        if table.__class__ is not str:
            table = tables_of(request)
        # Both looked up here for the common request, a call each only for others (see the two functions).
        target = headers.get("x-amz-target")
        operation = self._operations_by_target.get(target) if target is not None and path == "/" else None
        if operation is None:
            operation = self._operation_of(method, target, path)
        answered = response.headers
        request_id = answered[-2][1] if len(answered) > 1 and answered[-2][0] == _REQUEST_ID else _request_id(answered)
        durability = self.durability
        seq = response.commit_seq
        if seq and durability is not None and seq > durability.durable_seq:
            # Registered before the connection's own wait: logged first. (A method of its own, so that the
            # closure is made only for a write that waits.)
            self._when_durable(durability, seq, arrived, started, request_id, operation, table, response, error, units)
        else:
            latency = time.perf_counter() - started
            self.request_log.line(arrived, request_id, operation, table, response.status, error, latency, units)
        return response

    def _when_durable(
        self,
        durability: Durability,
        seq: int,
        arrived: float,
        started: float,
        request_id: str,
        operation: str,
        table: str | None,
        response: RawResponse,
        error: str | None,
        units: tuple[float, float],
    ) -> None:
        def write(failure: BaseException | None) -> None:
            status, error_type = (500, "InternalServerError") if failure is not None else (response.status, error)
            latency = time.perf_counter() - started
            self.request_log.line(arrived, request_id, operation, table, status, error_type, latency, units)

        durability.when_durable(seq, write)

    def _operation_of(self, method: str, target: str | None, path: str) -> str:
        """The X-Amz-Target's operation (its text after the last dot, kept per target); ``METHOD /path`` for a
        request without one and for dynastore's own endpoints."""
        if not target or (path != "/" and path.startswith(EXTENSION_PREFIX)):
            return f"{method} {path}"
        operation = self._operations_by_target.get(target)
        if operation is None:
            operation = target.rpartition(".")[2]
            if len(self._operations_by_target) < _TEXTS_KEPT:  # targets are the client's: any text at all
                self._operations_by_target[target] = operation
        return operation


def _request_id(headers: list[tuple[str, str]]) -> str:
    """The response's request id: its last x-amzn-RequestId header (Protocol puts it just before the CRC32)."""
    return next((value for name, value in reversed(headers) if name == _REQUEST_ID), "")
