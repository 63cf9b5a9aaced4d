"""Every client is bounded, through raw sockets against real server processes (docs/design.md "Limits and abuse").

Deadlines are made short through the server's flags, and the tests wait for what the server does (the connection
closes, a 408 arrives), never for a length of time.
"""

from __future__ import annotations

import json
import socket
import zlib
from pathlib import Path

from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess, server_fixture

LIST_TABLES = (
    b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
    b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nX-Amz-Date: 20260101T000000Z\r\n"
    b"Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    b"SignedHeaders=host, Signature=abc\r\nContent-Length: 2\r\n\r\n{}"
)
TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nx-amz-crc32: 0\r\nConnection: close\r\n\r\n"


def connect(server: ServerProcess) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=30)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (the socket's timeout bounds the wait)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    sock.close()
    return b"".join(chunks)


def split_response(data: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), {k.lower(): v for k, v in headers.items()}, body


def serves(server: ServerProcess) -> bool:
    sock = connect(server)
    sock.sendall(LIST_TABLES.replace(b"Host: localhost\r\n", b"Host: localhost\r\nConnection: close\r\n"))
    return split_response(read_until_closed(sock))[0] == 200


# Deadlines of a fraction of a second.
short = server_fixture("--idle-timeout", "0.3", "--header-timeout", "0.3", "--body-timeout", "0.3")
default = server_fixture()


def test_an_idle_connection_is_closed_without_a_response(short: ServerProcess) -> None:
    assert read_until_closed(connect(short)) == b""


def test_a_connection_goes_idle_after_its_response_and_is_closed(short: ServerProcess) -> None:
    sock = connect(short)
    sock.sendall(LIST_TABLES)
    data = read_until_closed(sock)
    assert split_response(data)[0] == 200
    assert data.count(b"HTTP/1.1") == 1


def test_a_head_that_never_ends_gets_408(short: ServerProcess) -> None:
    sock = connect(short)
    sock.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Slow: a")
    assert read_until_closed(sock) == TIMED_OUT
    assert serves(short)


def test_a_body_that_never_ends_gets_408(short: ServerProcess) -> None:
    sock = connect(short)
    sock.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n{")
    assert read_until_closed(sock) == TIMED_OUT
    assert serves(short)


def test_headers_over_16_kb_are_a_400(default: ServerProcess) -> None:
    sock = connect(default)
    sock.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n")
    status, headers, body = split_response(read_until_closed(sock))
    assert status == 400
    assert headers["content-type"] == "application/x-amz-json-1.0"
    assert headers["connection"] == "close"
    assert int(headers["x-amz-crc32"]) == zlib.crc32(body)
    assert json.loads(body) == {
        "__type": "com.amazon.coral.validate#ValidationException",
        "message": "The request line and headers exceed 16384 bytes",
    }
    assert serves(default)


def test_a_header_of_megabytes_is_cut_off_at_the_limit(default: ServerProcess) -> None:
    sock = connect(default)
    sock.sendall(b"GET / HTTP/1.1\r\nX-Big: ")
    sent = 0
    try:
        while sent < 40 * 1024 * 1024:  # the server answers and closes long before
            sock.sendall(b"a" * 65536)
            sent += 65536
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.close()
    assert sent < 40 * 1024 * 1024
    assert serves(default)


def test_a_url_over_8_kb_is_a_400(default: ServerProcess) -> None:
    sock = connect(default)
    sock.sendall(b"GET /" + b"u" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    status, _, body = split_response(read_until_closed(sock))
    assert (status, json.loads(body)) == (
        400,
        {"__type": "com.amazon.coral.validate#ValidationException", "message": "The request URL exceeds 8192 bytes"},
    )


def test_a_declared_body_over_16_mb_gets_its_413_while_still_sending(default: ServerProcess) -> None:
    sock = connect(default)
    sock.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 16777217\r\n\r\n")
    for _ in range(64):  # part of the body: the server reads and drops it instead of resetting the connection
        sock.sendall(b" " * 65536)
    sock.shutdown(socket.SHUT_WR)
    data = read_until_closed(sock)
    assert data == (
        b"HTTP/1.1 413 Request Entity Too Large\r\nTransfer-Encoding: chunked\r\nx-amz-crc32: 0\r\n"
        b"Connection: close\r\n\r\n"
        b"0\r\n\r\n"
    )


def test_the_connection_cap_closes_the_longest_idle_then_refuses_with_503() -> None:
    server = ServerProcess("--max-connections", "3")
    try:
        idle = connect(server)
        busy = [connect(server), connect(server)]
        for sock in busy:  # requests under way: these are not closed to make room
            sock.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Slow: a")
        newcomer = connect(server)
        assert read_until_closed(idle) == b""  # the longest-idle connection made room
        newcomer.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Slow: a")
        refused = connect(server)
        status, _, body = split_response(read_until_closed(refused))
        assert status == 503
        assert json.loads(body) == {
            "__type": "com.amazonaws.dynamodb.v20120810#ServiceUnavailable",
            "message": "The server holds as many requests or connections as it can; retry the request",
        }
        for sock in [*busy, newcomer]:
            sock.close()
    finally:
        server.stop()


def test_request_bytes_held_by_all_connections_are_bounded() -> None:
    server = ServerProcess("--max-buffered-request-bytes", "1000000")
    try:
        stalled = connect(server)
        stalled.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000000\r\n\r\n" + b" " * 900_000)
        for _ in range(3):  # the server has read what the stalled client sent
            assert serves(server)
        other = connect(server)
        other.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 200000\r\n\r\n" + b" " * 200_000)
        status, _, body = split_response(read_until_closed(other))
        assert status == 503
        assert json.loads(body)["__type"] == "com.amazonaws.dynamodb.v20120810#ServiceUnavailable"
        stalled.close()  # its bytes go back to the budget: a request of the same size is served
        again = connect(server)
        padded = LIST_TABLES.replace(b"Content-Length: 2", b"Connection: close\r\nContent-Length: 200000")
        again.sendall(padded + b" " * 199_998)
        assert split_response(read_until_closed(again))[0] == 200
    finally:
        server.stop()


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_client_that_pipelines_and_never_reads_is_not_buffered_for() -> None:
    """2,000 pipelined requests for a 100 KB answer each: 200 MB of responses if the server kept producing them
    for a client that reads nothing; it stops reading that client once 64 KB wait unsent."""
    server = ServerProcess("--write-buffer-bytes", "65536")
    try:
        table = _table_with_a_large_item(server)
        request = (
            b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
            b"X-Amz-Target: DynamoDB_20120810.GetItem\r\nX-Amz-Date: 20260101T000000Z\r\n"
            b"Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
            b"SignedHeaders=host, Signature=abc\r\nContent-Length: %d\r\n\r\n%s"
        )
        body = json.dumps({"TableName": table, "Key": {"pk": {"S": "big"}}}).encode()
        before = _rss_kib(server.process.pid)
        greedy = connect(server)
        greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        greedy.sendall((request % (len(body), body)) * 2000)
        for _ in range(3):  # the loop has taken in what it was going to take in
            assert serves(server)
        grown = _rss_kib(server.process.pid) - before
        assert grown < 8 * 1024, f"the server grew by {grown} KiB for a client that reads nothing"
        greedy.close()
        assert serves(server)
    finally:
        server.stop()


def _table_with_a_large_item(server: ServerProcess) -> str:
    client = make_client(server.url)
    table = create_table(client)
    client.put_item(TableName=table, Item={"pk": {"S": "big"}, "v": {"S": "x" * 100_000}})
    return table


def test_a_connection_flood_leaves_storage_its_descriptors(tmp_path: Path) -> None:
    """With a descriptor limit of 200, 400 idle connections: the cap (200 less 64 kept for storage) closes the
    longest idle ones to make room, and writes keep succeeding across a rotation of the write-ahead log."""
    server = ServerProcess("--capacity", "report", data_dir=tmp_path, nofile=200)
    flood: list[socket.socket] = []
    try:
        client = make_client(server.url)
        table = create_table(client)
        flood = [connect(server) for _ in range(400)]
        assert serves(server)
        value = "v" * 390_000
        for i in range(180):  # 70 MB: past the 64 MB at which the log opens a new segment
            client.put_item(TableName=table, Item={"pk": {"S": f"k{i}"}, "v": {"S": value}})
        assert client.get_item(TableName=table, Key={"pk": {"S": "k179"}})["Item"]["v"]["S"] == value
        assert "Too many open files" not in server.log_text()
    finally:
        for sock in flood:
            sock.close()
        server.stop()
