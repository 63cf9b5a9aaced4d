"""Abuse a local dynastore server and report its memory: ``python -m tests.abuse [--src DIR] [--case NAME]``.

Each case starts a fresh in-memory server on 127.0.0.1, measures its resident memory (VmRSS) at rest, at the
worst point of the abuse and after the abusing clients have gone, and checks that a well-behaved client is still
served meanwhile. Every case is bounded in connections, bytes and time and stops by itself. ``--src`` runs the
server from another source tree (to compare with an earlier version); extra server flags follow ``--``.
The figures in docs/design.md "Limits and abuse" come from this script.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import socket
import time
from collections.abc import Callable

from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess

MIB = 1024 * 1024
AUTH = (
    b"X-Amz-Date: 20260101T000000Z\r\nAuthorization: AWS4-HMAC-SHA256 "
    b"Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=abc\r\n"
)


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def request(target: str, body: bytes, close: bool = False) -> bytes:
    head = b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
    head += b"X-Amz-Target: DynamoDB_20120810."
    head += target.encode() + b"\r\n" + AUTH + (b"Connection: close\r\n" if close else b"")
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def served(server: ServerProcess) -> str:
    """Whether a fresh client gets an answer to ListTables, and how long it took."""
    started = time.monotonic()
    try:
        sock = socket.create_connection((server.host, server.port), timeout=10)
        sock.sendall(request("ListTables", b"{}", close=True))
        answer = sock.recv(4096)
        sock.close()
    except OSError as e:
        return f"no ({type(e).__name__})"
    took = time.monotonic() - started
    return f"yes, {took * 1000:.0f} ms" if answer.startswith(b"HTTP/1.1 200") else f"no ({answer[:12]!r})"


def connections(server: ServerProcess, count: int) -> list[socket.socket]:
    out = []
    for _ in range(count):
        try:
            out.append(socket.create_connection((server.host, server.port), timeout=10))
        except OSError:
            break
    return out


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def send_quietly(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
        return True
    except OSError:
        return False


# ---- the cases: each returns the connections to close once the peak is measured ---------------------------------
def idle(server: ServerProcess) -> list[socket.socket]:
    """1,000 connections that send nothing."""
    return connections(server, 1000)


def slow_loris(server: ServerProcess) -> list[socket.socket]:
    """300 connections that send a request head a few bytes at a time over 3 seconds and never finish it."""
    socks = connections(server, 300)
    for sock in socks:
        send_quietly(sock, b"POST / HTTP/1.1\r\nHost: localhost\r\n")
    for _ in range(30):
        for sock in socks:
            send_quietly(sock, b"X-A: b\r\n")
        time.sleep(0.1)
    return socks


def stalled_bodies(server: ServerProcess) -> list[socket.socket]:
    """20 connections that announce a 16 MB body, send 15 MB of it and stop."""
    socks = connections(server, 20)
    for sock in socks:
        sock.settimeout(5)
        if send_quietly(sock, b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n" % (16 * MIB)):
            for _ in range(15):
                if not send_quietly(sock, b" " * MIB):
                    break
    return socks


def huge_header(server: ServerProcess) -> list[socket.socket]:
    """One header of 40 MB."""
    sock = socket.create_connection((server.host, server.port), timeout=10)
    if send_quietly(sock, b"GET / HTTP/1.1\r\nX-Big: "):
        for _ in range(40):
            if not send_quietly(sock, b"a" * MIB):
                break
        send_quietly(sock, b"\r\n\r\n")
    return [sock]


def huge_url(server: ServerProcess) -> list[socket.socket]:
    """One URL of 40 MB."""
    sock = socket.create_connection((server.host, server.port), timeout=10)
    if send_quietly(sock, b"GET /"):
        for _ in range(40):
            if not send_quietly(sock, b"u" * MIB):
                break
        send_quietly(sock, b" HTTP/1.1\r\n\r\n")
    return [sock]


def pipelining(server: ServerProcess) -> list[socket.socket]:
    """One connection that pipelines 300 GetItem requests of a 390 KB item (about 120 KB of requests, 117 MB of
    answers) and reads nothing."""
    client = make_client(server.url)
    table = create_table(client)
    client.put_item(TableName=table, Item={"pk": {"S": "big"}, "v": {"S": "x" * 390_000}})
    body = json.dumps({"TableName": table, "Key": {"pk": {"S": "big"}}}).encode()
    sock = socket.create_connection((server.host, server.port), timeout=10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    send_quietly(sock, request("GetItem", body) * 300)
    return [sock]


CASES: dict[str, Callable[[ServerProcess], list[socket.socket]]] = {
    "idle": idle,
    "slow-loris": slow_loris,
    "stalled-bodies": stalled_bodies,
    "huge-header": huge_header,
    "huge-url": huge_url,
    "pipelining": pipelining,
}


def closed_by_server(socks: list[socket.socket], within: float) -> int:
    """How many of the abusing connections the server closes within ``within`` seconds."""
    deadline = time.monotonic() + within
    open_socks = list(socks)
    closed = 0
    while open_socks and time.monotonic() < deadline:
        ready, _, _ = select.select(open_socks[:500], [], [], 0.2)
        for sock in ready:
            try:
                while sock.recv(65536, socket.MSG_DONTWAIT):
                    pass
            except BlockingIOError:
                continue
            except OSError:
                pass
            closed += 1
            open_socks.remove(sock)
    return closed


def run_case(name: str, flags: list[str], wait_close: float) -> str:
    server = ServerProcess(*flags)
    try:
        pid = server.process.pid
        served(server)
        at_rest = rss_mib(pid)
        started = time.monotonic()
        socks = CASES[name](server)
        took = time.monotonic() - started
        time.sleep(1)  # let the server take in what was sent
        peak = rss_mib(pid)
        meanwhile = served(server)
        closed = closed_by_server(socks, wait_close) if wait_close else 0
        close_all(socks)
        time.sleep(2)
        after = rss_mib(pid)
        return (
            f"{name:15} rest {at_rest:6.1f} MiB  abused {peak:7.1f} MiB  after {after:7.1f} MiB  "
            f"abuse took {took:5.1f} s  new client served: {meanwhile}  "
            f"closed by the server within {wait_close:g} s: {closed}/{len(socks)}"
        )
    finally:
        server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--src", help="run the server from this source directory (its src/)")
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="only these cases")
    parser.add_argument("--nofile", type=int, help="the descriptor limit the server starts with")
    parser.add_argument("--wait-close", type=float, default=0, help="seconds to wait for the server to close them")
    parser.add_argument("flags", nargs="*", help="server flags (after --)")
    args = parser.parse_args()
    if args.nofile:
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, args.nofile))  # soft and hard
    if args.src:
        os.environ["PYTHONPATH"] = os.path.join(args.src, "src")
    for name in args.case or list(CASES):
        print(run_case(name, args.flags, args.wait_close), flush=True)


if __name__ == "__main__":
    main()
