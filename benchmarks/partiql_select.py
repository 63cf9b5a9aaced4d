"""A key-equality PartiQL SELECT against GetItem on a real server process: ``SELECT * FROM t WHERE pk = ?``
with a random existing key, and the GetItem of the same key, in interleaved rounds (A B A B ...).

Each workload runs for a fixed time from client processes holding keep-alive connections that send pre-built
raw requests (no signing, no boto3: the client stays cheap), and reports requests a second and the server's CPU
time per request (from /proc, steadier than throughput on a shared machine). Then the same requests go to an
in-process dynastore (``dynastore.testing.InProcess``, the protocol layer and everything below it, no sockets),
sequentially in interleaved rounds: CPU microseconds a request (the process's CPU time, all its threads), the
steadiest figure on a busy machine. Medians of the rounds. Run:
``python benchmarks/partiql_select.py [seconds] [rounds] [processes]`` (defaults 3, 5, 2).

Instruction counts, which a busy machine does not disturb: ``valgrind --tool=callgrind --dump-before=getppid
--callgrind-out-file=cg.out python benchmarks/partiql_select.py --instructions 400``, then ``python
benchmarks/partiql_select.py --count 400 cg.out.*``: ``Protocol.handle`` of an in-memory dynastore (as ``dynastore
serve --in-memory`` runs) serving GetItem and the key-equality SELECT of the same keys (``WHERE pk = ?`` on a
table with a partition key only, ``WHERE pk = ? AND sk = ?`` on one with a sort key; one statement text with new
parameters each time, as a client repeats a prepared statement), each phase between callgrind_phases' marks.
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

from callgrind_phases import instruction_modes, mark_phase, phase_counts
from raw_requests import call, request_headers

TABLE = "bench_partiql"
ITEMS = 1000


def _requests(workload: str) -> list[tuple[bytes, dict[str, str]]]:
    out = []
    for i in range(ITEMS):
        key = {"S": f"key-{i}"}
        body: dict[str, Any]
        if workload == "get":
            body = {"TableName": TABLE, "Key": {"pk": key}}
            out.append((json.dumps(body).encode(), request_headers("GetItem")))
        else:
            body = {"Statement": f'SELECT * FROM "{TABLE}" WHERE pk = ?', "Parameters": [key]}
            out.append((json.dumps(body).encode(), request_headers("ExecuteStatement")))
    return out


def _client(port: int, workload: str, seconds: float, seed: int, results: Any) -> None:
    requests = _requests(workload)
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port)
    count = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        body, headers = requests[rng.randrange(ITEMS)]
        conn.request("POST", "/", body, headers)
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{workload}: HTTP {response.status}")
        count += 1
    results.put(count)


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _round(port: int, pid: int, workload: str, seconds: float, procs: int) -> tuple[float, float]:
    results: Any = multiprocessing.Queue()
    workers = [
        multiprocessing.Process(target=_client, args=(port, workload, seconds, seed, results)) for seed in range(procs)
    ]
    cpu = _cpu_seconds(pid)
    for worker in workers:
        worker.start()
    total = sum(results.get() for _ in workers)
    for worker in workers:
        worker.join()
    cpu = _cpu_seconds(pid) - cpu
    return total / seconds, cpu / total * 1e6


def _in_process(rounds: int, calls: int = 5000) -> None:
    from dynastore.testing import InProcess

    dynastore = InProcess(hook_clients=False)
    dynastore.start()
    try:
        create = {
            "TableName": TABLE,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        }
        dynastore.request("POST", "/", json.dumps(create).encode(), request_headers("CreateTable"))
        for i in range(ITEMS):
            item = {"TableName": TABLE, "Item": {"pk": {"S": f"key-{i}"}, "v": {"S": "x" * 100}}}
            dynastore.request("POST", "/", json.dumps(item).encode(), request_headers("PutItem"))
        figures: dict[str, list[float]] = {"get": [], "select": []}
        for _ in range(rounds):
            for workload, runs in figures.items():
                requests = _requests(workload)
                rng = random.Random(1)
                start = time.process_time()  # CPU time of this process: steadier than wall time here
                for _ in range(calls):
                    body, headers = requests[rng.randrange(ITEMS)]
                    if dynastore.request("POST", "/", body, headers).status != 200:
                        raise RuntimeError(workload)
                runs.append((time.process_time() - start) / calls * 1e6)
        for workload, runs in figures.items():
            print(
                f"in process {workload:7s} {statistics.median(runs):6.1f} us/request  (rounds: "
                + ", ".join(f"{r:.0f}" for r in runs)
                + ")"
            )
        ratio = statistics.median(figures["get"]) / statistics.median(figures["select"])
        print(f"in process SELECT / GetItem throughput: {ratio:.2f}")
    finally:
        dynastore.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    procs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "dynastore", "serve", "--port", str(port), "--in-memory", "--no-metrics"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port)
                call(conn, "ListTables", {})
                break
            except OSError:
                time.sleep(0.1)
        call(
            conn,
            "CreateTable",
            {
                "TableName": TABLE,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        for i in range(ITEMS):
            call(conn, "PutItem", {"TableName": TABLE, "Item": {"pk": {"S": f"key-{i}"}, "v": {"S": "x" * 100}}})
        figures: dict[str, list[tuple[float, float]]] = {"get": [], "select": []}
        for _ in range(rounds):
            for workload in ("get", "select"):
                figures[workload].append(_round(port, server.pid, workload, seconds, procs))
        for workload, runs in figures.items():
            rate = statistics.median(r for r, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(
                f"{workload:7s} {rate:9.0f} requests/s  {cpu:6.1f} us server CPU/request  (rounds: "
                + ", ".join(f"{r:.0f}" for r, _ in runs)
                + ")"
            )
        get_rate = statistics.median(r for r, _ in figures["get"])
        select_rate = statistics.median(r for r, _ in figures["select"])
        print(f"SELECT / GetItem throughput: {select_rate / get_rate:.2f}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    _in_process(rounds)


INSTRUCTION_PHASES = ("GetItem pk", "SELECT pk", "GetItem pk+sk", "SELECT pk+sk")
KEYS = 100  # items of each table the phases cycle through


def _handle_requests(phase: str) -> list[tuple[dict[str, str], bytes]]:
    """Each request of a phase: headers as the HTTP server hands them on (lower-case names) and the body."""
    operation, key = phase.split()
    table = TABLE if key == "pk" else f"{TABLE}_sk"
    out = []
    for i in range(KEYS):
        pk, sk = {"S": f"key-{i}"}, {"N": str(i)}
        body: dict[str, Any]
        if operation == "GetItem":
            body = {"TableName": table, "Key": {"pk": pk} if key == "pk" else {"pk": pk, "sk": sk}}
        elif key == "pk":
            body = {"Statement": f'SELECT * FROM "{table}" WHERE pk = ?', "Parameters": [pk]}
        else:
            body = {"Statement": f'SELECT * FROM "{table}" WHERE pk = ? AND sk = ?', "Parameters": [pk, sk]}
        target = "GetItem" if operation == "GetItem" else "ExecuteStatement"
        headers = {name.lower(): value for name, value in request_headers(target).items()}
        out.append((headers, json.dumps(body).encode()))
    return out


def _handle() -> Any:
    """``Protocol.handle`` of an in-memory dynastore holding both tables' items."""
    from dynastore.app import Dynastore
    from dynastore.config import Config

    handle = Dynastore(Config(in_memory=True)).protocol.handle
    for table, schema, defined in (
        (TABLE, [("pk", "HASH")], [("pk", "S")]),
        (f"{TABLE}_sk", [("pk", "HASH"), ("sk", "RANGE")], [("pk", "S"), ("sk", "N")]),
    ):
        create = {
            "TableName": table,
            "KeySchema": [{"AttributeName": name, "KeyType": kind} for name, kind in schema],
            "AttributeDefinitions": [{"AttributeName": name, "AttributeType": kind} for name, kind in defined],
            "BillingMode": "PAY_PER_REQUEST",
        }
        headers = {name.lower(): value for name, value in request_headers("CreateTable").items()}
        assert handle("POST", headers, json.dumps(create).encode(), "/").status == 200
        headers = {name.lower(): value for name, value in request_headers("PutItem").items()}
        for i in range(KEYS):
            item = {"pk": {"S": f"key-{i}"}, "sk": {"N": str(i)}, "v": {"S": "x" * 100}}
            body = json.dumps({"TableName": table, "Item": item}).encode()
            assert handle("POST", headers, body, "/").status == 200
    return handle


def instruction_phases(calls: int) -> None:
    """``calls`` requests a phase (INSTRUCTION_PHASES), after a round of each to warm the caches."""
    handle = _handle()
    phases = [_handle_requests(phase) for phase in INSTRUCTION_PHASES]
    for requests in phases:
        for headers, body in requests:
            response = handle("POST", dict(headers), body, "/")
            assert response.status == 200 and b'"pk"' in response.body, response.body
    for requests in phases:
        mark_phase()
        for i in range(calls):
            headers, body = requests[i % KEYS]
            handle("POST", dict(headers), body, "/")
    mark_phase()
    print(f"{calls} calls a phase: " + ", ".join(INSTRUCTION_PHASES))


def count_instructions(calls: int, files: list[str]) -> None:
    """Thousands of instructions a request in each phase, from callgrind's dumps (the first is the start-up)."""
    counts = phase_counts(files, INSTRUCTION_PHASES, calls)
    for phase, count in counts.items():
        print(f"{phase:13} {count:8.1f}k instructions a request")
    for key in ("pk", "pk+sk"):
        get, select = counts[f"GetItem {key}"], counts[f"SELECT {key}"]
        print(f"key {key:5}: SELECT / GetItem throughput {get / select:.3f} (SELECT +{select - get:.1f}k)")


if __name__ == "__main__":
    if not instruction_modes(instruction_phases, count_instructions, 400):
        main()
