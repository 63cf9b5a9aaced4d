"""protocol/request_log.py without a server: table names from requests, the line formats, the logged protocol."""

from __future__ import annotations

import asyncio
import os
import random
import re
import sys
import time
from typing import Any

import orjson
import pytest

from dynastore.engine.capacity.buckets import Meter
from dynastore.errors import ConditionalCheckFailedException
from dynastore.protocol.protocol import Operation
from dynastore.protocol.request_log import LoggedProtocol, RequestLog, tables_of
from dynastore.security.caller import Caller

AUTH = {
    "authorization": "AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=s",
    "x-amz-date": "20260101T000000Z",
    "content-type": "application/x-amz-json-1.0",
}


@pytest.mark.parametrize(
    ("request_body", "tables"),
    [
        ({"TableName": "t1", "Key": {}}, "t1"),
        ({"RequestItems": {"a": {}, "b": {}}}, "a,b"),
        (
            {
                "TransactItems": [
                    {"Put": {"TableName": "a"}},
                    {"Update": {"TableName": "b"}},
                    {"Get": {"TableName": "a"}},
                ]
            },
            "a,b",
        ),
        ({"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/t9"}, "t9"),
        ({"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/t9/index/i"}, "t9"),
        ({"Limit": 3}, None),
        ({"TransactItems": ["junk", {"Put": 3}], "RequestItems": []}, None),
        ([1, 2], None),
        (None, None),
    ],
)
def test_tables_of(request_body: Any, tables: str | None) -> None:
    assert tables_of(request_body) == tables


def test_text_line() -> None:
    out: list[bytes] = []
    log = RequestLog("text", out.append)
    log.line(1_700_000_000.0425, "ID1", "PutItem", "t", 200, None, 0.0012345, (0.0, 1.0))
    log.line(1_700_000_001.5, "ID2", "GET /dynastore/x", None, 404, 'Bad "name"', 0.5, (0.5, 0.0))
    assert out == [
        b"time=2023-11-14T22:13:20.042Z request_id=ID1 operation=PutItem table=t status=200 error=- "
        b"latency_ms=1.234 rcu=0 wcu=1\n",
        b'time=2023-11-14T22:13:21.500Z request_id=ID2 operation="GET /dynastore/x" table=- status=404 '
        b'error="Bad \\"name\\"" latency_ms=500.0 rcu=0.5 wcu=0\n',
    ]


def test_json_line() -> None:
    out: list[bytes] = []
    RequestLog("json", out.append).line(1_700_000_000.0, "ID", "GetItem", None, 400, "X", 0.001, (0.5, 0.0))
    assert orjson.loads(out[0]) == {
        "time": "2023-11-14T22:13:20.000Z",
        "request_id": "ID",
        "operation": "GetItem",
        "table": None,
        "status": 400,
        "error": "X",
        "latency_ms": 1.0,
        "rcu": 0.5,
        "wcu": 0.0,
    }
    assert out[0].endswith(b"\n") and out[0].count(b"\n") == 1


@pytest.mark.parametrize(
    ("request_id", "operation", "table", "error", "latency", "units"),
    [
        ("ABC123", "GetItem", "t", None, 0.0, (0.5, 0.0)),
        ("", "POST /x", None, 'Bad "name"', 1.5, (0.0, 2.5)),
        ('id "1"\\', 'op"', "tÉ\n", "É", 12.0004567, (123456.75, -0.5)),
    ],
)
def test_json_line_is_the_fields_as_orjson_writes_them(
    request_id: str, operation: str, table: str | None, error: str | None, latency: float, units: tuple[float, float]
) -> None:
    out: list[bytes] = []
    RequestLog("json", out.append).line(1_700_000_000.0425, request_id, operation, table, 400, error, latency, units)
    fields = {
        "time": "2023-11-14T22:13:20.042Z",
        "request_id": request_id,
        "operation": operation,
        "table": table,
        "status": 400,
        "error": error,
        "latency_ms": int(latency * 1_000_000) / 1000,
        "rcu": units[0],
        "wcu": units[1],
    }
    assert out == [orjson.dumps(fields) + b"\n"]


def reference_line(form: str, fields: tuple[Any, ...]) -> bytes:
    """A line formatted field by field, without anything kept: what the log must write."""
    arrived, request_id, operation, table, status, error, latency, units = fields
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(arrived))) + f".{int((arrived % 1) * 1000):03d}Z"
    latency_ms = int(latency * 1_000_000) / 1000
    if form == "json":
        return (
            orjson.dumps(
                {
                    "time": stamp,
                    "request_id": request_id,
                    "operation": operation,
                    "table": table,
                    "status": status,
                    "error": error,
                    "latency_ms": latency_ms,
                    "rcu": units[0],
                    "wcu": units[1],
                }
            )
            + b"\n"
        )

    def word(value: str | None) -> str:
        return "-" if value is None else value if re.fullmatch(r"[\w.\-/:,]+", value) else orjson.dumps(value).decode()

    return (
        f"time={stamp} request_id={request_id} operation={word(operation)} table={word(table)} status={status} "
        f"error={word(error)} latency_ms={latency_ms} rcu={units[0]:g} wcu={units[1]:g}\n"
    ).encode()


@pytest.mark.parametrize("form", ["text", "json"])
def test_lines_with_kept_texts_are_the_lines_formatted_afresh(form: str) -> None:
    """The kept texts (the last outcome and units, those of earlier lines, the minute) give the line formatted
    field by field, whether a line repeats the one before it, part of it, or none of it."""
    chosen = random.Random(32)
    operations = ["GetItem", "PutItem", "POST /x", 'op"', ""]
    tables = ["t", "bench_table", None, "a,b", "tÉ\n"]
    errors = [None, None, "ValidationException", 'Bad "name"']
    request_ids = ["A1B2" * 13, "", 'id "1"\\', "²", "a b"]
    units = [(0.5, 0.0), (0.0, 1.0), (0.0, 0.0), (123456.75, 0.5), (2.5, 3.0)]
    out: list[bytes] = []
    log = RequestLog(form, out.append)
    expected: list[bytes] = []
    fields: tuple[Any, ...] = (1_700_000_000.0, "ID", "GetItem", "t", 200, None, 0.001, (0.5, 0.0))
    for _ in range(3000):
        changed = list(fields)
        changed[0] = fields[0] + chosen.random() * chosen.choice([0.002, 2.0, 90.0])
        changed[1] = f"{chosen.getrandbits(200):052X}" if chosen.random() < 0.8 else chosen.choice(request_ids)
        changed[6] = chosen.random() * chosen.choice([0.001, 1.0, 1e4])
        for index, choices in ((2, operations), (3, tables), (4, [200, 400, 500]), (5, errors), (7, units)):
            if chosen.random() < 0.2:
                changed[index] = chosen.choice(choices)
        fields = tuple(changed)
        log.line(*fields)
        expected.append(reference_line(form, fields))
    assert out == expected


def test_lines_of_one_turn_of_the_event_loop_are_written_together_at_its_end() -> None:
    out: list[bytes] = []
    log = RequestLog("text", out.append)

    async def serve() -> list[bytes]:
        for i in range(3):
            log.line(1_700_000_000.0, f"ID{i}", "GetItem", "t", 200, None, 0.001, (0.5, 0.0))
        written_during_the_turn = list(out)
        await asyncio.sleep(0)  # the turn ends
        return written_during_the_turn

    assert asyncio.run(serve()) == []
    [written] = out
    assert [line.split(b" ")[1] for line in written.splitlines()] == [
        b"request_id=ID0",
        b"request_id=ID1",
        b"request_id=ID2",
    ]


def test_a_long_turn_writes_its_lines_in_bounded_batches() -> None:
    out: list[bytes] = []
    log = RequestLog("json", out.append)

    async def serve() -> None:
        for i in range(600):
            log.line(1_700_000_000.0, f"ID{i}", "GetItem", "t", 200, None, 0.001, (0.5, 0.0))
        await asyncio.sleep(0)

    asyncio.run(serve())
    assert [chunk.count(b"\n") for chunk in out] == [256, 256, 88]


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError):
        RequestLog("xml")


def test_logged_protocol_reports_what_the_operation_consumed_and_its_error() -> None:
    out: list[bytes] = []
    reads, writes = Meter(), Meter()

    def put(request: Any, caller: Caller) -> Any:
        writes.units += 2.0
        return {}

    def fail(request: Any, caller: Caller) -> Any:
        reads.units += 0.5
        raise ConditionalCheckFailedException()

    protocol = LoggedProtocol(
        {"PutItem": Operation("PutItem", put), "GetItem": Operation("GetItem", fail)},
        region="us-east-1",
        commit_seq=lambda: 0,
        request_log=RequestLog("json", out.append),
        meters=(reads, writes),
    )
    first = protocol.handle("POST", {**AUTH, "x-amz-target": "DynamoDB_20120810.PutItem"}, b'{"TableName":"t"}')
    protocol.handle("POST", {**AUTH, "x-amz-target": "DynamoDB_20120810.GetItem"}, b'{"TableName":"u"}')
    protocol.handle("POST", {"content-type": "text/plain"}, b"{}")
    lines = [orjson.loads(line) for line in out]
    assert [(x["operation"], x["table"], x["status"], x["error"], x["rcu"], x["wcu"]) for x in lines] == [
        ("PutItem", "t", 200, None, 0.0, 2.0),
        ("GetItem", "u", 400, "ConditionalCheckFailedException", 0.5, 0.0),
        ("POST /", None, 404, "UnknownOperationException", 0.0, 0.0),
    ]
    assert lines[0]["request_id"] == dict(first.headers)["x-amzn-RequestId"]


def test_lines_reach_stderr_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as stderr:
        monkeypatch.setattr(sys, "stderr", stderr)  # the log writes to its file descriptor itself
        log = RequestLog("text")
        log.line(1_700_000_000.0, "ID1", "GetItem", "t", 200, None, 0.001, (0.5, 0.0))
        log.line(1_700_000_000.0, "ID2", "GetItem", "t", 200, None, 0.001, (0.5, 0.0))
    with os.fdopen(read_end, "rb") as pipe:
        written = pipe.read()
    assert [line.split(b" ")[1] for line in written.splitlines()] == [b"request_id=ID1", b"request_id=ID2"]
