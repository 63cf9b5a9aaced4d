"""What ``--log-requests`` costs a request: GetItem and PutItem through ``Protocol.handle`` of in-memory dynastores
with the request log off, on as text and on as JSON (``--capacity report``, metrics on, as ``dynastore serve``
runs by default), the lines written to /dev/null (or to a file: ``LOG_TO=path``).

The requests are served as a server's event loop serves them: eight a turn of a running loop, so that a turn's
lines are written together at its end, as the server writes them (protocol/request_log.py); the loop is uvloop's,
as the server's is (``LOOP=asyncio``: the standard library's, whose pure-Python ``call_soon``, once a turn, costs
about 6k instructions against uvloop's 1k).

Instruction counts, which a busy machine does not disturb: ``valgrind --tool=callgrind --dump-before=getppid
--callgrind-out-file=cg.out python benchmarks/request_log.py --instructions 400``, then ``python
benchmarks/request_log.py --count 400 cg.out.*``: thousands of instructions a request in each phase, and on / off
(the share of the throughput kept when the server's CPU is the limit is its inverse). Callgrind counts what the
process runs, not the kernel's side of a ``write(2)``: the lines per write are what batching saves there.

``python benchmarks/request_log.py --check [lines]``: the log's lines (its kept texts, in both formats) against the
same lines formatted field by field, for ``lines`` random requests (200,000 unless told), each repeating some of
the fields of the one before it; prints how many differ (none, or the log writes something it did not before).

Without arguments (or ``[requests] [rounds]``): the same phases timed by this thread's CPU time, in interleaved
rounds, medians, microseconds a request.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from callgrind_phases import instruction_modes, mark_phase, phase_counts

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.protocol.protocol import Protocol
from dynastore.protocol.request_log import LoggedProtocol, RequestLog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.unit.protocol.test_request_log import reference_line  # noqa: E402  (the lines the log must write)

TABLE = "bench_table"
AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)
BODIES = {
    "GetItem": b'{"TableName":"bench_table","Key":{"pk":{"S":"user#000123"}}}',
    "PutItem": b'{"TableName":"bench_table","Item":{"pk":{"S":"user#000123"},"payload":{"S":"' + b"x" * 180 + b'"}}}',
}
CREATE = (
    b'{"TableName":"bench_table","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],'
    b'"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}'
)
MODES = ("off", "text", "json")
PHASES = tuple(f"{operation} {mode}" for operation in BODIES for mode in MODES)
PER_TURN = 8  # requests served in one turn of the event loop


def headers(operation: str) -> dict[str, str]:
    """A request's headers as the HTTP server hands them on (lower-case names, fresh strings)."""
    return {
        "host": "127.0.0.1:8000",
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": f"DynamoDB_20120810.{operation}",
        "x-amz-date": "20260101T000000Z",
        "authorization": AUTH,
        "content-length": str(len(BODIES.get(operation, CREATE))),
    }


class Lines:
    """Where the log's lines go: a file descriptor, written as the server writes stderr; counts the writes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.writes = 0
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.bytes += len(data)
        os.write(self.fd, data)


def protocols(lines: Lines) -> dict[str, Protocol]:
    """A protocol of an in-memory dynastore for each mode, with the benchmark's table and item."""
    out: dict[str, Protocol] = {}
    for mode in MODES:
        form = "json" if mode == "json" else "text"
        config = Config(in_memory=True, capacity="report", log_requests=mode != "off", log_format=form)
        app = Dynastore(config)
        # Not started: its background work stays out of the counts (an in-memory store's writes are durable at
        # once, so nothing waits for a group commit).
        protocol = app.protocol
        if isinstance(protocol, LoggedProtocol):
            protocol.request_log = RequestLog(config.log_format, lines.write)
        assert protocol.handle("POST", headers("CreateTable"), CREATE, "/").status == 200
        assert protocol.handle("POST", headers("PutItem"), BODIES["PutItem"], "/").status == 200
        out[mode] = protocol
    return out


def phase(protocol: Protocol, operation: str) -> Callable[[int], Coroutine[Any, Any, None]]:
    """``requests`` calls of ``operation``, PER_TURN a turn of the running loop."""
    body = BODIES[operation]
    sent = headers(operation)

    async def run(requests: int) -> None:
        for turn in range(0, requests, PER_TURN):
            for _ in range(min(PER_TURN, requests - turn)):
                response = protocol.handle("POST", dict(sent), body, "/")
                assert response.status == 200, response.body
            await asyncio.sleep(0)  # the turn ends: its lines are written

    return run


def phases(lines: Lines) -> list[Callable[[int], Coroutine[Any, Any, None]]]:
    served = protocols(lines)
    return [phase(served[name.split()[1]], name.split()[0]) for name in PHASES]


def log_target() -> Lines:
    target = os.environ.get("LOG_TO", os.devnull)
    return Lines(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND))


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """``main`` run to its end in the server's kind of event loop (uvloop's; ``LOOP=asyncio``: the standard one)."""
    if os.environ.get("LOOP") == "asyncio":
        asyncio.run(main)
    else:
        import uvloop

        uvloop.run(main)


def instruction_phases(requests: int) -> None:
    """``requests`` requests a phase (PHASES), between callgrind_phases' marks, after 40 of each to warm up."""
    lines = log_target()
    runs = phases(lines)

    async def run() -> None:
        for one in runs:
            await one(40)
        for one in runs:
            mark_phase()
            await one(requests)
        mark_phase()

    run_loop(run())
    print(f"{requests} requests a phase: {', '.join(PHASES)}; {lines.bytes} bytes of lines in {lines.writes} writes")


def count_instructions(requests: int, files: list[str]) -> None:
    """Thousands of instructions a request in each phase, from callgrind's dumps (the first is the start-up)."""
    counts = phase_counts(files, PHASES, requests)
    for name, count in counts.items():
        print(f"{name:13} {count:8.1f}k instructions a request")
    for operation in BODIES:
        off = counts[f"{operation} off"]
        for mode in MODES[1:]:
            on = counts[f"{operation} {mode}"]
            print(
                f"{operation} log on ({mode}): +{on - off:.1f}k, on / off {on / off:.3f}"
                f" (throughput kept {off / on:.1%})"
            )


def timed_rounds(requests: int, rounds: int) -> None:
    lines = log_target()
    runs = phases(lines)
    times: dict[str, list[float]] = {name: [] for name in PHASES}

    async def run() -> None:
        for one in runs:
            await one(200)
        for _ in range(rounds):
            for name, one in zip(PHASES, runs, strict=True):
                started = time.thread_time()
                await one(requests)
                times[name].append((time.thread_time() - started) / requests * 1e6)

    run_loop(run())
    for name, values in times.items():
        print(f"{name:13} {statistics.median(values):7.2f} us a request (fastest round {min(values):.2f})")
    for operation in BODIES:
        off = statistics.median(times[f"{operation} off"])
        for mode in MODES[1:]:
            on = statistics.median(times[f"{operation} {mode}"])
            print(f"{operation} log on ({mode}): on / off {on / off:.3f}")


def check_lines(lines: int) -> None:
    """``lines`` random requests' lines in each format against reference_line (see the module docstring)."""
    chosen = random.Random(lines)
    choices: dict[int, list[Any]] = {
        2: ["GetItem", "PutItem", "Query", "POST /x", 'op"', ""],
        3: ["t", "bench_table", None, "a,b", "tÉ\n", 'q"'],
        4: [200, 400, 404, 500],
        5: [None, None, "ValidationException", 'Bad "name"', "É"],
        7: [(0.5, 0.0), (0.0, 1.0), (0.0, 0.0), (123456.75, 0.5), (2.5, 3.0)],
    }
    ids = ["", 'id "1"\\', "²", "a b"]
    for form in ("text", "json"):
        out: list[bytes] = []
        log = RequestLog(form, out.append)
        fields: list[Any] = [1_700_000_000.0, "ID", "GetItem", "t", 200, None, 0.001, (0.5, 0.0)]
        differing = 0
        for _ in range(lines):
            fields[0] += chosen.random() * chosen.choice([0.002, 2.0, 90.0, 1e5])
            fields[1] = f"{chosen.getrandbits(200):052X}" if chosen.random() < 0.9 else chosen.choice(ids)
            fields[6] = chosen.random() * chosen.choice([0.001, 1.0, 100.0, 1e7])
            for index, values in choices.items():
                if chosen.random() < 0.2:
                    fields[index] = values[chosen.randrange(len(values))]
            if chosen.random() < 0.1:
                fields[7] = (chosen.randrange(200) / 2, chosen.randrange(200) / 2)
            log.line(*fields)
            differing += out.pop() != reference_line(form, tuple(fields))
        print(f"{form}: {lines} lines, {differing} differing from the lines formatted field by field")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        check_lines(int(sys.argv[2]) if len(sys.argv) > 2 else 200_000)
    elif not instruction_modes(instruction_phases, count_instructions, 400):
        timed_rounds(int(sys.argv[1]) if len(sys.argv) > 1 else 5000, int(sys.argv[2]) if len(sys.argv) > 2 else 5)
