"""What in-process mode adds to a boto3 call: GetItem and PutItem through boto3 against

* nothing at all (a before-send handler returning a canned response): boto3's own cost without any sending,
* a do-nothing HTTP endpoint (a process on 127.0.0.1 that answers every request with a canned response at once):
  boto3's own cost with its HTTP sending,
* an in-process dynastore (dynastore.testing.in_process),
* a real server process (``dynastore serve --in-memory`` on 127.0.0.1),

in interleaved rounds of sequential calls (medians, microseconds a call), and ``Protocol.handle`` alone for the
same requests (the dynastore's own work, which a server does too). Run:
``python benchmarks/in_process.py [calls] [rounds]``.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import re
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from typing import Any

import boto3
from botocore.awsrequest import AWSResponse
from botocore.config import Config as BotoConfig
from callgrind_phases import instruction_modes, phase_counts, run_phases

from dynastore.testing import InProcess, in_process

TABLE = "bench_table"
KEY = {"pk": {"S": "key-1"}}
ITEM = {"pk": {"S": "key-1"}, "value": {"S": "x" * 100}}
CONFIG = BotoConfig(retries={"max_attempts": 0})
CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "a", "aws_secret_access_key": "b"}


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body


GET_BODY = b'{"Item":{"pk":{"S":"key-1"},"value":{"S":"' + b"x" * 100 + b'"}}}'


def canned(request: Any, **_: Any) -> AWSResponse:
    target = request.headers["X-Amz-Target"]
    body = GET_BODY if b"GetItem" in target else b"{}"
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amz-crc32": str(zlib.crc32(body))}
    return AWSResponse(request.url, 200, headers, _Raw(body))


class NothingEndpoint(asyncio.Protocol):
    """The do-nothing HTTP endpoint: each request (headers, then Content-Length bytes of body) is answered with
    the canned response of its operation, over a kept-alive connection."""

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].lower()
            declared = re.search(rb"content-length: *(\d+)", head)
            length = int(declared.group(1)) if declared else 0
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            body = GET_BODY if b"getitem" in head else b"{}"
            self.transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nx-amz-crc32: %d\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (zlib.crc32(body), len(body), body)
            )


def serve_nothing() -> None:
    async def run() -> None:
        server = await asyncio.get_running_loop().create_server(NothingEndpoint, "127.0.0.1", 0)
        print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
        await server.serve_forever()

    asyncio.run(run())


def started(command: list[str]) -> tuple[subprocess.Popen[str], str]:
    """A process that prints its URL on its first line, and that URL."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    match = re.search(r"http://[\d.]+:\d+", process.stdout.readline())
    assert match is not None
    return process, match.group(0)


def per_call(call: Callable[[], Any], calls: int) -> float:
    """Microseconds a call: this thread's CPU time, which other processes on a busy machine barely disturb (all
    of a canned or in-process call's work is in this thread; a server's work is not, so its row is wall time)."""
    clock = time.perf_counter if TIMING[0] == "wall" else time.thread_time
    start = clock()
    for _ in range(calls):
        call()
    return (clock() - start) / calls * 1e6


TIMING = ["cpu"]  # "wall" while timing calls to the server process


def create(client: Any) -> None:
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName=TABLE, Item=ITEM)


def handle_alone(ds: InProcess, client: Any, calls: int) -> tuple[float, float]:
    """Protocol.handle on the dynastore's loop for the same signed requests: the dynastore's own work, the same as a
    server's (what in-process mode adds is the rest)."""
    captured = captured_requests(client)
    assert ds.app is not None and ds._loop is not None
    handle = ds.app.protocol.handle

    async def run(name: str) -> float:
        method, headers, body, path = captured[name]
        return per_call(lambda: handle(method, headers, body, path), calls)

    get = ds._loop.run_until_complete(run("GetItem"))  # the caller drives the loop (no other thread runs it)
    put = ds._loop.run_until_complete(run("PutItem"))
    return get, put


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    nothing = boto3.client("dynamodb", config=CONFIG, **CREDENTIALS)
    nothing.meta.events.register("before-send.dynamodb", canned)
    command = [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", "0", "--capacity", "report"]
    server, url = started(command)
    endpoint, nothing_url = started([sys.executable, __file__, "--serve-nothing"])
    try:
        served = boto3.client("dynamodb", endpoint_url=url, config=CONFIG, **CREDENTIALS)
        do_nothing = boto3.client("dynamodb", endpoint_url=nothing_url, config=CONFIG, **CREDENTIALS)
        create(served)
        with in_process(capacity="report", hook_clients=False) as ds:
            local = ds.client(config=CONFIG)
            create(local)
            clients = {"boto3 alone (canned response)": nothing, "in-process dynastore": local,
                       "do-nothing HTTP endpoint": do_nothing, "server process (127.0.0.1)": served}  # fmt: skip
            remote = (do_nothing, served)
            inside = wrap_serve(ds)
            samples: dict[str, list[tuple[float, float]]] = {name: [] for name in clients}
            handle: list[tuple[float, float]] = []
            handoff: list[tuple[float, float]] = []
            for _ in range(rounds):  # interleaved: each round runs every client in turn
                for name, client in clients.items():
                    TIMING[0] = "wall" if client in remote else "cpu"
                    inside[0] = 0.0
                    get = per_call(functools.partial(client.get_item, TableName=TABLE, Key=KEY), calls)
                    inside_get, inside[0] = inside[0] / calls * 1e6, 0.0
                    put = per_call(functools.partial(client.put_item, TableName=TABLE, Item=ITEM), calls)
                    samples[name].append((get, put))
                    if client is local:
                        handoff.append((inside_get, inside[0] / calls * 1e6))
                TIMING[0] = "cpu"
                handle.append(handle_alone(ds, local, calls))
    finally:
        for process in (server, endpoint):
            process.terminate()
            process.wait()

    results = {name: median_pair(values) for name, values in samples.items()}
    canned_rounds = samples["boto3 alone (canned response)"]
    print(f"median of {rounds} interleaved rounds of {calls} calls, microseconds a call (thread CPU time; the")
    print("rows of other processes: wall time); +Get and +Put: the median of each round's difference to boto3 alone")
    print(f"{'':36} {'GetItem':>8} {'PutItem':>8} {'+Get':>7} {'+Put':>7}")
    for name, (get, put) in results.items():
        added_get, added_put = median_pair(paired_differences(samples[name], canned_rounds))
        print(f"{name:36} {get:8.1f} {put:8.1f} {added_get:7.1f} {added_put:7.1f}")
    spread = paired_differences(samples["in-process dynastore"], canned_rounds)
    low = (min(s[0] for s in spread), min(s[1] for s in spread))
    high = (max(s[0] for s in spread), max(s[1] for s in spread))
    print(f"{'in-process rounds +Get lo,hi +Put lo,hi':36} {low[0]:8.1f} {high[0]:8.1f} {low[1]:7.1f} {high[1]:7.1f}")
    handle_get, handle_put = median_pair(handle)
    print(f"{'Protocol.handle alone (on its loop)':36} {handle_get:8.1f} {handle_put:8.1f}")
    serve_get, serve_put = median_pair(handoff)
    print(f"{'in-process _serve incl. handle':36} {serve_get:8.1f} {serve_put:8.1f}")
    print(f"{'in-process _serve minus handle':36} {serve_get - handle_get:8.1f} {serve_put - handle_put:8.1f}")


def wrap_serve(ds: InProcess) -> list[float]:
    """Time spent in ``_serve`` (driving the loop around Protocol.handle), inside the calls."""
    spent = [0.0]
    serve = ds._serve

    def timed(method: str, headers: dict[str, str], body: bytes, path: str) -> Any:
        start = time.thread_time()
        try:
            return serve(method, headers, body, path)
        finally:
            spent[0] += time.thread_time() - start

    ds._serve = timed  # type: ignore[method-assign]
    return spent


def paired_differences(
    values: list[tuple[float, float]], baseline: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """Each round's (GetItem, PutItem) minus the same round's baseline: a round's calls run close together, so
    their difference varies less than the calls do on a busy machine."""
    return [(get - base_get, put - base_put) for (get, put), (base_get, base_put) in zip(values, baseline, strict=True)]


def median_pair(values: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)


def instruction_phases(calls: int) -> None:
    """For a count of instructions, which a busy machine does not disturb: GetItem and PutItem through boto3 alone
    (canned response) and through an in-process dynastore, then Protocol.handle alone, ``calls`` each, every phase
    preceded by a call of getppid(), at which callgrind (``--dump-before=getppid``) writes its counts:
    ``valgrind --tool=callgrind --dump-before=getppid --callgrind-out-file=cg.out python
    benchmarks/in_process.py --instructions 100``, then ``python benchmarks/in_process.py --count 100 cg.out.*``."""
    nothing = boto3.client("dynamodb", config=CONFIG, **CREDENTIALS)
    nothing.meta.events.register("before-send.dynamodb", canned)
    with in_process(capacity="report", hook_clients=False) as ds:
        local = ds.client(config=CONFIG)
        create(local)
        hold_loop_clock(ds)
        handle = ds.app.protocol.handle if ds.app is not None else None
        assert handle is not None
        requests = captured_requests(local)
        phases: list[Callable[[], Any]] = []
        for client in (nothing, local):
            phases.append(functools.partial(client.get_item, TableName=TABLE, Key=KEY))
            phases.append(functools.partial(client.put_item, TableName=TABLE, Item=ITEM))
        phases.extend(functools.partial(handle, *requests[name]) for name in ("GetItem", "PutItem"))
        # The cyclic collector off while counting: a full collection falls in whichever phase reaches its
        # threshold (one added about 26k instructions a call to a phase of 100) and would be charged to it.
        gc.collect()
        gc.disable()
        try:
            run_phases(phases, calls)
        finally:
            gc.enable()
    print(f"{calls} calls a phase: " + ", ".join(INSTRUCTION_PHASES))


def hold_loop_clock(ds: InProcess) -> None:
    """Stop the dynastore's loop clock for a count of instructions: its timers (housekeeping, twice a second) fall
    due by wall time, which under callgrind's fifty-fold slowdown comes every few calls instead of every few
    thousand, and would add work a call does not do. Callbacks made ready by a call still run."""
    loop = ds._loop
    assert loop is not None
    held = loop.time()
    loop.time = lambda: held  # type: ignore[method-assign]


INSTRUCTION_PHASES = ("boto3 alone GetItem", "boto3 alone PutItem", "in-process GetItem", "in-process PutItem",
                      "Protocol.handle GetItem", "Protocol.handle PutItem")  # fmt: skip


def count_instructions(calls: int, files: list[str]) -> None:
    """Thousands of instructions a call in each phase, from callgrind's dumps (the first one is the start-up)."""
    counts = phase_counts(files, INSTRUCTION_PHASES, calls)
    for phase, count in counts.items():
        print(f"{phase:36} {count:9.1f}k")
    for operation in ("GetItem", "PutItem"):
        added = counts[f"in-process {operation}"] - counts[f"boto3 alone {operation}"]
        print(f"in-process adds to a {operation}: {added:.1f}k ({added / counts[f'boto3 alone {operation}']:.1%})")


def captured_requests(client: Any) -> dict[str, tuple[str, dict[str, str], bytes, str]]:
    """The signed GetItem and PutItem requests of ``client`` as Protocol.handle takes them."""
    captured: dict[str, tuple[str, dict[str, str], bytes, str]] = {}

    def capture(request: Any, **_: Any) -> None:
        headers = {k.lower(): v if isinstance(v, str) else v.decode() for k, v in request.headers.items()}
        captured[request.headers["X-Amz-Target"].decode().split(".")[1]] = ("POST", headers, request.body, "/")

    client.meta.events.register_first("before-send.dynamodb", capture)
    client.get_item(TableName=TABLE, Key=KEY)
    client.put_item(TableName=TABLE, Item=ITEM)
    client.meta.events.unregister("before-send.dynamodb", capture)
    return captured


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve-nothing"]:
        serve_nothing()
    elif not instruction_modes(instruction_phases, count_instructions, 100):
        main()
