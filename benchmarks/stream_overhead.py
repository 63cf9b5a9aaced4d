"""What a NEW_AND_OLD_IMAGES stream costs a table's writes: the same load on a plain table and on a streamed one,
on one real server process, in interleaved rounds (A B A B ...).

Workloads (dynabench's): ``put`` writes new ~200-byte items, ``mixed`` is half GetItem of a random existing key
and half PutItem overwriting a random existing item with new data. Each runs for a fixed time from client
processes, each holding several keep-alive connections that send pre-built raw requests (no signing, no boto3:
the client stays cheap); the figure that counts is the server's CPU time per request (from /proc, its child
processes included, steadier than throughput on a shared machine): the plain table's over the streamed table's
is the share of the plain table's throughput the stream keeps when the server's CPU is the limit. Medians of the
rounds. The server is durable (LMDB in a temporary directory), as a user runs it. Then the same requests go to an
in-process dynastore's ``Protocol.handle`` (the whole request below HTTP, on its own loop, in-memory store),
timed by this thread's CPU time: the steadiest figure on a busy machine, fine enough to see a few microseconds
(``overwrite``: the mixed workload's puts alone). Run:
``python benchmarks/stream_overhead.py [seconds] [rounds] [processes] [connections each]`` (defaults 4, 5, 2, 8;
seconds 0: in process only).

Instructions, which a busy machine does not change (callgrind; the sync helper is another process, not counted):
every workload of dynabench (``batch``: BatchWriteItem of 25 new items; ``get``; ``query``: one partition,
``Limit`` 10) and ``overwrite``, each on the plain and on the streamed table of a durable in-process dynastore on
uvloop's loop, each request answered once durable as the server answers it; ``per-turn`` (default 1) requests are
handled in one turn of the loop, as a busy server handles those of its connections (16: dynabench's)::

    valgrind --tool=callgrind --dump-before=getppid --callgrind-out-file=cg.out \\
        python benchmarks/stream_overhead.py --instructions 200 [per-turn]
    python benchmarks/stream_overhead.py --count 200 cg.out.*
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import random
import re
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from callgrind_phases import instruction_modes, mark_phase, phase_counts
from raw_requests import call, request_headers

SERVE = [sys.executable, "-m", "dynastore", "serve", "--disk-reserve", "0", "--no-metrics", "--capacity", "report"]
TABLES = {"plain": "bench_plain", "stream": "bench_stream"}
WORKLOADS = ("put", "mixed")
SERVER_WORKLOADS = ("put", "batch", "mixed", "overwrite")  # get and query write nothing: a stream costs them nothing
INSTRUCTION_WORKLOADS = ("put", "get", "query", "batch", "mixed", "overwrite")
BATCH = 25
PARTITIONS, PER_PARTITION = 200, 10  # the items the mixed workload reads and overwrites
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _item(pk: str, sk: str, rng: random.Random) -> dict[str, Any]:
    """A ~200-byte item, as dynabench writes them: the key, a number and a random string."""
    data = "".join(rng.choice(_ALPHABET) for _ in range(170))
    return {"pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": str(rng.randrange(1, 10**9))}, "data": {"S": data}}


def _existing_key(rng: random.Random) -> tuple[str, str]:
    return f"p{rng.randrange(PARTITIONS):06d}", f"s{rng.randrange(PER_PARTITION):05d}"


def _requests(table: str, workload: str, seed: int, count: int = 4000) -> list[tuple[bytes, dict[str, str]]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if workload == "put":
            item = _item(f"new-{seed}-{time.time_ns()}-{i}", "s00000", rng)
            out.append((json.dumps({"TableName": table, "Item": item}).encode(), request_headers("PutItem")))
        elif workload == "batch":
            items = [_item(f"new-{seed}-{time.time_ns()}-{i}", f"s{n:05d}", rng) for n in range(BATCH)]
            batch = {"RequestItems": {table: [{"PutRequest": {"Item": item}} for item in items]}}
            out.append((json.dumps(batch).encode(), request_headers("BatchWriteItem")))
        elif workload == "get":
            pk, sk = _existing_key(rng)
            body = {"TableName": table, "Key": {"pk": {"S": pk}, "sk": {"S": sk}}}
            out.append((json.dumps(body).encode(), request_headers("GetItem")))
        elif workload == "query":
            pk, _ = _existing_key(rng)
            query: dict[str, Any] = {
                "TableName": table,
                "KeyConditionExpression": "pk = :p",
                "ExpressionAttributeValues": {":p": {"S": pk}},
                "Limit": 10,
            }
            out.append((json.dumps(query).encode(), request_headers("Query")))
        elif workload == "mixed" and rng.random() < 0.5:
            pk, sk = _existing_key(rng)
            body = {"TableName": table, "Key": {"pk": {"S": pk}, "sk": {"S": sk}}}
            out.append((json.dumps(body).encode(), request_headers("GetItem")))
        else:
            item = _item(*_existing_key(rng), rng)
            out.append((json.dumps({"TableName": table, "Item": item}).encode(), request_headers("PutItem")))
    return out


def _raw_request(body: bytes, headers: dict[str, str]) -> bytes:
    lines = [b"POST / HTTP/1.1", b"Host: localhost", f"Content-Length: {len(body)}".encode()]
    lines.extend(f"{name}: {value}".encode() for name, value in headers.items())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class _Connection:
    """One keep-alive connection sending a request, waiting for its whole answer, and sending the next."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def answered(self) -> bool:
        """Read what arrived; True once the answer to the request sent is complete (and 200)."""
        self.buffer += self.sock.recv(65536)
        head, sep, body = self.buffer.partition(b"\r\n\r\n")
        if not sep:
            return False
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        if len(body) < length:
            return False
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head[:100].decode())
        self.buffer = body[length:]
        return True


def _client(port: int, table: str, workload: str, seconds: float, seed: int, conns: int, results: Any) -> None:
    requests = [_raw_request(body, headers) for body, headers in _requests(table, workload, seed)]
    selector = selectors.DefaultSelector()
    connections = [_Connection(port) for _ in range(conns)]
    sent = 0
    for conn in connections:
        conn.sock.sendall(requests[sent % len(requests)])  # a put pool replayed turns inserts into overwrites
        sent += 1
        selector.register(conn.sock, selectors.EVENT_READ, conn)
    count = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for key, _ in selector.select(timeout=1.0):
            conn = key.data
            if conn.answered():
                count += 1
                conn.sock.sendall(requests[sent % len(requests)])
                sent += 1
    for conn in connections:
        conn.sock.close()
    results.put(count)


def _cpu_seconds(pid: int) -> float:
    """CPU time of the server and of its child processes (the process that syncs the write-ahead log)."""
    total = 0
    for process in _process_tree(pid):
        try:
            with open(f"/proc/{process}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _process_tree(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        process = pending.pop()
        found.append(process)
        for task in os.listdir(f"/proc/{process}/task"):
            try:
                with open(f"/proc/{process}/task/{task}/children") as children:
                    pending.extend(int(child) for child in children.read().split())
            except OSError:
                continue
    return found


def _round(
    port: int, pid: int, table: str, workload: str, seconds: float, procs: int, conns: int
) -> tuple[float, float]:
    results: Any = multiprocessing.Queue()
    seeds = [random.randrange(1 << 30) for _ in range(procs)]
    workers = [
        multiprocessing.Process(target=_client, args=(port, table, workload, seconds, seed, conns, results))
        for seed in seeds
    ]
    cpu = _cpu_seconds(pid)
    for worker in workers:
        worker.start()
    total = sum(results.get() for _ in workers)
    for worker in workers:
        worker.join()
    cpu = _cpu_seconds(pid) - cpu
    return total / seconds, cpu / total * 1e6


def _create_tables(conn: http.client.HTTPConnection) -> None:
    for kind, table in TABLES.items():
        create: dict[str, Any] = {
            "TableName": table,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if kind == "stream":
            create["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        call(conn, "CreateTable", create)
        rng = random.Random(1)
        for p in range(PARTITIONS):
            requests = [{"PutRequest": {"Item": _item(f"p{p:06d}", f"s{s:05d}", rng)}} for s in range(PER_PARTITION)]
            call(conn, "BatchWriteItem", {"RequestItems": {table: requests}})


def _in_process(rounds: int, calls: int = 2000) -> None:
    """Protocol.handle alone, per request: the lowest and the median of ``rounds`` interleaved rounds."""
    from dynastore.testing import InProcess

    dynastore = InProcess(hook_clients=False, capacity="report")  # thousands of writes a second to one key range
    dynastore.start()
    try:
        assert dynastore.app is not None and dynastore._loop is not None
        handle = dynastore.app.protocol.handle
        _create_tables(_InProcessConnection(handle))  # type: ignore[arg-type]
        figures: dict[tuple[str, str], list[float]] = {}
        for round_number in range(rounds):
            for workload in (*WORKLOADS, "overwrite"):
                for kind, table in TABLES.items():
                    requests = _requests(table, workload, round_number, calls)
                    run = _handled(handle, requests)
                    figures.setdefault((kind, workload), []).append(dynastore._loop.run_until_complete(run))
        for workload in (*WORKLOADS, "overwrite"):
            plain, stream = figures[("plain", workload)], figures[("stream", workload)]
            print(
                f"in process {workload:9s} plain {min(plain):6.1f} / {statistics.median(plain):6.1f} us, "
                f"stream {min(stream):6.1f} / {statistics.median(stream):6.1f} us (lowest / median): "
                f"+{statistics.median(stream) - statistics.median(plain):.1f} us, "
                f"plain/stream {statistics.median(plain) / statistics.median(stream):.2f}"
            )
    finally:
        dynastore.stop()


async def _handled(handle: Any, requests: list[tuple[bytes, dict[str, str]]]) -> float:
    """CPU microseconds a request, on the loop's thread (the caller drives the loop: no other thread runs it)."""
    lowered = [(body, {name.lower(): value for name, value in headers.items()}) for body, headers in requests]
    start = time.thread_time()
    for body, headers in lowered:
        if handle("POST", headers, body, "/").status != 200:
            raise RuntimeError("request refused")
    return (time.thread_time() - start) / len(lowered) * 1e6


class _InProcessConnection:
    """What ``_call`` sends through, for the in-process dynastore's setup."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self._answer: Any = None

    def request(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> None:
        self._answer = self._handle(method, {k.lower(): v for k, v in headers.items()}, body, path)

    def getresponse(self) -> Any:
        return self

    @property
    def status(self) -> int:
        return int(self._answer.status)

    def read(self) -> bytes:
        return bytes(self._answer.body)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _connect(port: int) -> http.client.HTTPConnection:
    for _ in range(200):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port)
            call(conn, "ListTables", {})
            return conn
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def _report(figures: dict[tuple[str, str], list[tuple[float, float]]]) -> None:
    for workload in SERVER_WORKLOADS:
        medians = {}
        for kind in TABLES:
            runs = figures[(kind, workload)]
            rate, cpu = statistics.median(r for r, _ in runs), statistics.median(c for _, c in runs)
            medians[kind] = (rate, cpu)
            print(
                f"{workload:6s} {kind:7s} {rate:8.0f} requests/s  {cpu:6.1f} us server CPU/request  (CPU rounds: "
                + ", ".join(f"{c:.0f}" for _, c in runs)
                + ")"
            )
        (plain_rate, plain_cpu), (stream_rate, stream_cpu) = medians["plain"], medians["stream"]
        print(
            f"{workload:6s} stream/plain: CPU per request {plain_cpu / stream_cpu:.2f} of the plain table's "
            f"throughput (+{stream_cpu - plain_cpu:.1f} us), measured throughput {stream_rate / plain_rate:.2f}"
        )


def _instruction_phases(calls: int, per_turn: int) -> None:
    """Each workload on each table between callgrind_phases' marks, at which callgrind writes its counts;
    ``per_turn`` requests a turn of the loop (one storage commit, one log record and one sync serve them)."""
    import asyncio
    from pathlib import Path

    import uvloop
    from durable_put import small_map

    from dynastore.app import Dynastore
    from dynastore.config import Config

    small_map()
    loop = uvloop.new_event_loop()
    with tempfile.TemporaryDirectory() as directory:
        app = Dynastore(Config(in_memory=False, data_dir=Path(directory), capacity="report"))
        app.start(loop)
        try:
            assert app.committer is not None
            handle, committer = app.protocol.handle, app.committer
            _create_tables(_InProcessConnection(handle))  # type: ignore[arg-type]

            async def run(requests: list[tuple[bytes, dict[str, str]]]) -> None:
                for number, (body, headers) in enumerate(requests, 1):
                    response = handle("POST", headers, body, "/")
                    if response.status != 200:
                        raise RuntimeError(bytes(response.body).decode())
                    seq = response.commit_seq
                    turn_ends = number % per_turn == 0 or number == len(requests)
                    if turn_ends and seq and seq > committer.durable_seq:
                        done: asyncio.Future[BaseException | None] = loop.create_future()
                        committer.when_durable(seq, done.set_result)  # answered once durable, as the server does
                        await done

            phases = [(kind, workload) for workload in INSTRUCTION_WORKLOADS for kind in TABLES]
            built = {phase: _lowered(_requests(TABLES[phase[0]], phase[1], 7, calls)) for phase in phases}
            for kind, workload in phases:  # warm: caches filled, the stream's shards opened
                loop.run_until_complete(run(_lowered(_requests(TABLES[kind], workload, 3, 20))))
            for phase in phases:
                mark_phase()
                loop.run_until_complete(run(built[phase]))
            mark_phase()
        finally:
            loop.run_until_complete(app.stop())
            loop.close()
    print(
        f"{calls} requests a phase, {per_turn} a turn: " + ", ".join(f"{kind} {workload}" for kind, workload in phases)
    )


def _lowered(requests: list[tuple[bytes, dict[str, str]]]) -> list[tuple[bytes, dict[str, str]]]:
    return [(body, {name.lower(): value for name, value in headers.items()}) for body, headers in requests]


def _count_instructions(calls: int, files: list[str]) -> None:
    """Thousands of instructions a request on each table, and plain / streamed, from callgrind's dumps."""
    names = [f"{kind} {workload}" for workload in INSTRUCTION_WORKLOADS for kind in TABLES]
    counts = phase_counts(files, names, calls)
    for workload in INSTRUCTION_WORKLOADS:
        plain, stream = counts[f"plain {workload}"], counts[f"stream {workload}"]
        print(
            f"{workload:9s} plain {plain:8.1f}k  stream {stream:8.1f}k instructions a request: "
            f"+{stream - plain:.1f}k, plain/stream {plain / stream:.3f}"
        )


def main() -> None:
    if instruction_modes(_instruction_phases, _count_instructions, 200):
        return
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    procs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    conns = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    if seconds > 0:
        _on_a_server(seconds, rounds, procs, conns)
    _in_process(rounds * 3)


def _on_a_server(seconds: float, rounds: int, procs: int, conns: int) -> None:
    port = _free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        server = subprocess.Popen(
            [*SERVE, "--port", str(port), "--data-dir", data_dir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _create_tables(_connect(port))
            figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for _ in range(rounds):
                for workload in SERVER_WORKLOADS:
                    for kind, table in TABLES.items():
                        run = _round(port, server.pid, table, workload, seconds, procs, conns)
                        figures.setdefault((kind, workload), []).append(run)
            _report(figures)
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
