"""--log-requests on a real server: one line per request on stderr, every field checked, as text and as JSON."""

from __future__ import annotations

import calendar
import json
import re
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from tests.e2e.conftest import ADMIN, create_table, error_of, make_client, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture

_PAIR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
FIELDS = ["time", "request_id", "operation", "table", "status", "error", "latency_ms", "rcu", "wcu"]


def parse_text(line: str) -> dict[str, Any]:
    """A text line as the JSON form would have it ('-' is None, numbers are numbers)."""
    pairs = _PAIR.findall(line)
    assert " ".join(f"{k}={v}" for k, v in pairs) == line, line
    out: dict[str, Any] = {}
    for key, raw in pairs:
        value: Any = json.loads(raw) if raw.startswith('"') else raw
        if value == "-":
            value = None
        elif key == "status":
            value = int(value)
        elif key in ("latency_ms", "rcu", "wcu"):
            value = float(value)
        out[key] = value
    return out


def request_lines(
    server: ServerProcess,
    parse: Callable[[str], dict[str, Any]],
    until: Callable[[list[dict[str, Any]]], bool],
) -> list[dict[str, Any]]:
    """The server's request lines, once ``until`` holds for them: a line is written at the end of the turn of the
    server's event loop that answered its request, so the last one may follow its answer by a moment (at most 10 s
    are waited; the test's assertions then say what is missing)."""
    marker = "{" if parse is json.loads else "time="
    deadline = time.monotonic() + 10
    while True:
        lines = [parse(line) for line in server.log_text().splitlines() if line.startswith(marker)]
        if until(lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.02)


def ends_with(operation: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda lines: bool(lines) and lines[-1]["operation"] == operation


text_server = server_fixture("--log-requests")
# From the environment, as DYNASTORE_* variables.
json_server = server_fixture(env={"DYNASTORE_LOG_REQUESTS": "1", "DYNASTORE_LOG_FORMAT": "json"})


def _exercise(server: ServerProcess) -> list[dict[str, Any]]:
    """Requests of every kind, each with what its log line must say (time bounds and request id included)."""
    ddb = make_client(server.url)
    expected: list[dict[str, Any]] = []

    def call(operation: str, table: str | None, run: Callable[[], Any], **fields: Any) -> None:
        before = time.time()
        response = run()
        after = time.time()
        expected.append(
            {
                "operation": operation,
                "table": table,
                "request_id": response["ResponseMetadata"]["RequestId"],
                "before": before,
                "after": after,
                **fields,
            }
        )

    name = create_table(ddb)
    other = create_table(ddb)
    ok = {"status": 200, "error": None}
    call("PutItem", name, lambda: ddb.put_item(TableName=name, Item={"pk": {"S": "a"}}), rcu=0, wcu=1, **ok)
    call(
        "GetItem",
        name,
        lambda: ddb.get_item(TableName=name, Key={"pk": {"S": "a"}}, ConsistentRead=True),
        rcu=1,
        wcu=0,
        **ok,
    )
    call("GetItem", name, lambda: ddb.get_item(TableName=name, Key={"pk": {"S": "a"}}), rcu=0.5, wcu=0, **ok)
    big = "x" * 3000  # 3 write units
    call(
        "TransactWriteItems",
        f"{name},{other}",
        lambda: ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": name, "Item": {"pk": {"S": "b"}, "v": {"S": big}}}},
                {"Put": {"TableName": other, "Item": {"pk": {"S": "c"}}}},
            ]
        ),
        rcu=0,
        wcu=8,  # transactional writes cost double: 2 x (3 + 1)
        **ok,
    )
    missing = unique_name()
    before = time.time()
    code, _ = error_of(lambda: ddb.get_item(TableName=missing, Key={"pk": {"S": "a"}}))
    assert code == "ResourceNotFoundException"
    expected.append(
        {
            "operation": "GetItem",
            "table": missing,
            "status": 400,
            "error": "ResourceNotFoundException",
            "rcu": 0,
            "wcu": 0,
            "before": before,
            "after": time.time(),
        }
    )
    before = time.time()
    code, _ = error_of(lambda: ddb.search_vectors(TableName=missing))
    assert code == "UnknownOperationException"
    expected.append(
        {
            "operation": "SearchVectors",
            "table": None,
            "status": 400,
            "error": "UnknownOperationException",
            "rcu": 0,
            "wcu": 0,
            "before": before,
            "after": time.time(),
        }
    )
    return expected


def _check(lines: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert lines, "no request lines on stderr"
    for line in lines:
        assert list(line) == FIELDS
        assert _TIME.fullmatch(line["time"]), line
        assert re.fullmatch(r"[0-9A-F]{52}", line["request_id"]), line
        assert line["latency_ms"] > 0
    tail = lines[-len(expected) :]
    for line, want in zip(tail, expected, strict=True):
        assert line["operation"] == want["operation"]
        assert line["table"] == want["table"]
        assert line["status"] == want["status"]
        assert line["error"] == want["error"]
        assert (line["rcu"], line["wcu"]) == (want["rcu"], want["wcu"]), line
        if "request_id" in want:
            assert line["request_id"] == want["request_id"]
        arrived: float = calendar.timegm(time.strptime(line["time"][:19], "%Y-%m-%dT%H:%M:%S"))
        arrived += int(line["time"][20:23]) / 1000
        assert int(want["before"] * 1000) / 1000 <= arrived <= want["after"], (line, want)
    ids = [line["request_id"] for line in lines]
    assert len(set(ids)) == len(ids)


def test_text_lines(text_server: ServerProcess) -> None:
    expected = _exercise(text_server)
    lines = request_lines(text_server, parse_text, ends_with(expected[-1]["operation"]))
    _check(lines, expected)
    # The table-creation calls before them: CreateTable, then DescribeTable (the waiter), for each table.
    operations = [line["operation"] for line in lines[: -len(expected)]]
    assert operations[0] == "CreateTable" and "DescribeTable" in operations


def test_json_lines(json_server: ServerProcess) -> None:
    expected = _exercise(json_server)
    _check(request_lines(json_server, json.loads, ends_with(expected[-1]["operation"])), expected)


def test_requests_that_are_not_dynamodb_calls(text_server: ServerProcess) -> None:
    import urllib.request

    with urllib.request.urlopen(text_server.url + "/", timeout=30) as answer:
        assert answer.status == 200
    line = request_lines(text_server, parse_text, ends_with("GET /"))[-1]
    assert (line["operation"], line["table"], line["status"], line["error"]) == ("GET /", None, 200, None)


def test_off_by_default() -> None:
    server = ServerProcess()
    try:
        ddb = make_client(server.url)
        ddb.list_tables()
        create_table(ddb)
        log = server.log_text()
    finally:
        server.stop()
    assert "request_id" not in log and "ListTables" not in log


def test_a_throttled_request_consumed_nothing() -> None:
    server = ServerProcess("--log-requests", "--manual-clock")  # time stands still: no refill between requests
    try:
        ddb = make_client(server.url)
        name = unique_name()
        ddb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        )
        spend = urllib.request.Request(
            f"{server.url}/dynastore/partitions/{name}", data=json.dumps({"spend_burst": True}).encode(), headers=ADMIN
        )
        urllib.request.urlopen(spend).close()  # a new partition's burst credit would take 300 puts first
        ddb.put_item(TableName=name, Item={"pk": {"S": "a"}})  # the one unit of the first second
        code, _ = error_of(lambda: ddb.put_item(TableName=name, Item={"pk": {"S": "b"}}))
        assert code == "ProvisionedThroughputExceededException"
        # (both lines waited for: the second may follow its answer by a loop turn, longer on a busy machine)
        lines = request_lines(server, parse_text, lambda lines: [x["operation"] for x in lines].count("PutItem") >= 2)
    finally:
        server.stop()
    puts = [(x["status"], x["error"], x["wcu"]) for x in lines if x["operation"] == "PutItem"]
    assert puts == [(200, None, 1.0), (400, "ProvisionedThroughputExceededException", 0.0)]
