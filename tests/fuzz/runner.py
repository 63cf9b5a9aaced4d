"""Send fuzz requests to a server and check its answers: every one 200 or 400, the server still serving, and
nothing invalid stored (every item of every fuzz table re-validated at the end)."""

from __future__ import annotations

import http.client
import json
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO
from urllib.parse import urlparse

from dynastore import limits
from dynastore.model.values import NumberError, normalize_number
from tests.fuzz import operations, shapes, streams, throughput
from tests.fuzz.tables import Table, create_table_request, fuzz_tables

_AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=" + "0" * 64
)
_OPERATIONS = (*operations.BUILDERS, *streams.BUILDERS, *throughput.BUILDERS)


@dataclass(slots=True)
class Report:
    sent: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)  # error __type of the 400s
    failures: list[str] = field(default_factory=list)  # 5xx answers, missing answers, invalid stored items
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures and set(self.statuses) <= {200, 400}

    def summary(self) -> str:
        rate = self.sent / self.seconds if self.seconds else 0.0
        statuses = ", ".join(f"{status}: {count}" for status, count in sorted(self.statuses.items()))
        failures = len(self.failures)
        return f"{self.sent} requests in {self.seconds:.0f} s ({rate:.0f}/s); statuses {statuses}; failures {failures}"


# (method, path, headers, body) -> the headers signed (tests/e2e/conftest.py signer).
Sign = Callable[[str, str, dict[str, str], bytes], dict[str, str]]


class Client:
    """One keep-alive connection; reconnects once when the server closed it."""

    def __init__(self, url: str, sign: Sign | None = None) -> None:
        self.sign = sign
        parsed = urlparse(url)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 80
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)

    def call(self, operation: str, body: bytes) -> tuple[int, bytes]:
        headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": operation if "." in operation else f"DynamoDB_20120810.{operation}",
            "X-Amz-Date": "20260101T000000Z",
            "Authorization": _AUTH,
        }
        if self.sign is not None:
            headers = self.sign("POST", "/", headers, body)
        for attempt in (0, 1):
            try:
                self.conn.request("POST", "/", body=body, headers=headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def json(self, operation: str, body: dict[str, Any]) -> tuple[int, Any]:
        status, data = self.call(operation, json.dumps(body).encode())
        return status, json.loads(data) if data else None

    def close(self) -> None:
        self.conn.close()


def create_tables(client: Client, prefix: str | None = None) -> tuple[Table, ...]:
    tables = fuzz_tables(prefix or f"fz{uuid.uuid4().hex[:8]}")
    for table in tables:
        status, answer = client.json("CreateTable", create_table_request(table))
        assert status == 200, answer
    for table in tables:
        for _ in range(600):
            _, answer = client.json("DescribeTable", {"TableName": table.name})
            described = answer["Table"]
            statuses = [described["TableStatus"]] + [
                g["IndexStatus"] for g in described.get("GlobalSecondaryIndexes", [])
            ]
            if all(s == "ACTIVE" for s in statuses):
                break
            time.sleep(0.05)
    return tables


def learn_stream(client: Client, tables: tuple[Table, ...]) -> streams.Known:
    """The stream of the fuzz table that has one: its ARN (shards, sequence numbers and iterators are learned from
    the answers to the run's own requests)."""
    known = streams.Known()
    table = next(t for t in tables if t.stream)
    _, answer = client.json("DescribeTable", {"TableName": table.name})
    known.arn = answer["Table"]["LatestStreamArn"]
    return known


def request(
    rng: random.Random, tables: tuple[Table, ...], known: streams.Known | None = None
) -> tuple[str, dict[str, Any]]:
    """The next request: mostly table-aware and limit-mutated, sometimes from botocore's model, and sometimes
    mutated further at random places of its JSON tree."""
    operation = rng.choice(_OPERATIONS)
    body: dict[str, Any]
    if operation in streams.BUILDERS:
        body = streams.BUILDERS[operation](rng, tables, known if known is not None else streams.Known())
    elif rng.random() < 0.15:
        # The table operations name only the pool's tables: the data-plane tables stay as they are.
        body = shapes.from_model(
            rng, operation, throughput.pool(tables) if operation in throughput.BUILDERS else tables
        )
    elif operation in throughput.BUILDERS:
        body = throughput.BUILDERS[operation](rng, tables)
    else:
        body = operations.BUILDERS[operation](rng, tables)
    if rng.random() < 0.15:
        shapes.mutate(rng, body, rng.randrange(1, 4))
    return operation, body


def run(
    url: str,
    count: int,
    *,
    seed: int = 0,
    time_limit: float = float("inf"),
    tables: tuple[Table, ...] | None = None,
    log: TextIO | None = None,
    sign: Sign | None = None,
) -> Report:
    """Send up to ``count`` requests (stopping after ``time_limit`` seconds) and check every answer; ``sign``
    signs each request's headers (a server with --auth sigv4)."""
    rng = random.Random(seed)
    client = Client(url, sign)
    report = Report()
    started = time.monotonic()
    try:
        tables = tables or create_tables(client)
        known = learn_stream(client, tables)
        while report.sent < count and time.monotonic() - started < time_limit:
            operation, body = request(rng, tables, known)
            payload = json.dumps(body, ensure_ascii=False).encode()
            try:
                status, data = client.call(operation, payload)
            except (http.client.HTTPException, OSError) as e:
                report.failures.append(f"no answer ({e!r}) to {operation} {payload[:2000]!r}")
                _check_alive(client, report)
                report.sent += 1
                continue
            report.sent += 1
            report.statuses[status] += 1
            if status == 200 and operation in streams.BUILDERS:
                known.learn(operation, json.loads(data))
            if status == 400:
                report.errors[_error_type(data)] += 1
            elif status != 200:
                report.failures.append(f"{status} to {operation} {payload[:2000]!r}: {data[:500]!r}")
            if log is not None and report.sent % 10000 == 0:
                report.seconds = time.monotonic() - started
                log.write(f"{report.summary()}\n")
                log.flush()
        _check_alive(client, report)
        report.failures += stored_problems(client, tables)
    finally:
        report.seconds = time.monotonic() - started
        client.close()
    return report


def _error_type(data: bytes) -> str:
    try:
        return str(json.loads(data).get("__type", "?")).rsplit("#", 1)[-1]
    except ValueError:
        return "?"


def _check_alive(client: Client, report: Report) -> None:
    try:
        status, _ = client.json("ListTables", {})
    except (http.client.HTTPException, OSError) as e:
        report.failures.append(f"server stopped serving: {e!r}")
        raise SystemExit(f"server stopped serving after {report.sent} requests") from None
    if status != 200:
        report.failures.append(f"ListTables answered {status}")


# ---------------------------------------------------------------------------------------------- stored items


def stored_problems(client: Client, tables: tuple[Table, ...]) -> list[str]:
    """Every item of every fuzz table re-validated: what a write let through that DynamoDB would refuse."""
    problems: list[str] = []
    for table in tables:
        start: Any = None
        while True:
            body: dict[str, Any] = {"TableName": table.name, "ConsistentRead": True}
            if start is not None:
                body["ExclusiveStartKey"] = start
            status, answer = client.json("Scan", body)
            if status != 200:
                problems.append(f"Scan of {table.name} answered {status}: {answer}")
                break
            for item in answer["Items"]:
                problems += [f"{table.name}: {p}" for p in item_problems(table, item)]
            start = answer.get("LastEvaluatedKey")
            if start is None:
                break
    return problems[:100]


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def item_problems(table: Table, item: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for name, value in item.items():
        _value_problems(name, value, out, 1)
    limits_of = [(p, limits.MAX_RANGE_KEY_BYTES if p.is_range else limits.MAX_HASH_KEY_BYTES) for p in table.key_parts]
    for index in table.indexes:
        limits_of += [(p, limits.MAX_RANGE_KEY_BYTES if p.is_range else limits.MAX_HASH_KEY_BYTES) for p in index.parts]
    for part, limit in limits_of:
        value = item.get(part.name)
        if value is None or part.type not in value:
            continue
        payload = value[part.type]
        size = _utf8(payload) if part.type == "S" else len(payload) * 3 // 4
        if payload == "" or size > limit + 2:
            out.append(f"key attribute {part.name} of {size} bytes stored")
    return out


def _value_problems(name: str, value: Any, out: list[str], depth: int) -> None:
    if not name or _utf8(name) > limits.MAX_ATTRIBUTE_NAME_BYTES:
        out.append(f"attribute name of {_utf8(name)} bytes stored")
    if not isinstance(value, dict) or len(value) != 1:
        out.append(f"malformed value stored under {name[:40]!r}: {str(value)[:200]}")
        return
    ((kind, payload),) = value.items()
    if depth > limits.MAX_NESTING_DEPTH + 1:
        out.append(f"value nested {depth} deep stored")
    if kind == "N":
        _number_problem(payload, out)
    elif kind == "NS":
        for member in payload:
            _number_problem(member, out)
    if kind in ("SS", "NS", "BS") and (not payload or len(set(payload)) != len(payload)):
        out.append(f"invalid set stored under {name[:40]!r}")
    if kind == "M":
        for child_name, child in payload.items():
            _value_problems(child_name, child, out, depth + 1)
    elif kind == "L":
        for child in payload:
            _value_problems("[]", child, out, depth + 1)
    elif kind == "NULL" and payload is not True:
        out.append("NULL false stored")


def _number_problem(text: Any, out: list[str]) -> None:
    try:
        if normalize_number(text) != text:
            out.append(f"number stored in a non-canonical form: {text[:80]}")
    except (NumberError, TypeError) as e:
        out.append(f"invalid number stored: {str(text)[:80]} ({e})")
