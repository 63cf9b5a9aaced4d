"""Every client is bounded: head and URL size, declared and buffered body size, deadlines, the connection cap,
backpressure on output the client does not read, and nothing kept once a connection ends."""

from __future__ import annotations

import json
import math

from dynastore.protocol.connections import ConnectionLimits, Registry
from dynastore.protocol.http_server import HttpConnection
from tests.unit.protocol.test_http_server import REQUEST, FakeCommitter, FakeProtocol, FakeTransport, bodies


def open_connection(registry: Registry) -> tuple[HttpConnection, FakeTransport]:
    connection = HttpConnection(FakeProtocol(), FakeCommitter(), registry)
    transport = FakeTransport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    return connection, transport


def registry(**limits: float) -> Registry:
    return Registry(ConnectionLimits(**limits), descriptors=1 << 20)  # type: ignore[arg-type]


def status_and_body(data: bytes) -> tuple[int, bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def test_headers_over_the_limit_are_a_400_even_when_they_arrive_in_pieces() -> None:
    connection, transport = open_connection(registry(max_header_bytes=1024))
    connection.data_received(b"POST / HTTP/1.1\r\nX-Big: ")
    for _ in range(100):  # a header that keeps growing: refused once past the limit, not when it ends
        connection.data_received(b"a" * 100)
    assert len(transport.written) == 1
    status, body = status_and_body(transport.written[0])
    assert status == 400
    assert json.loads(body) == {
        "__type": "com.amazon.coral.validate#ValidationException",
        "message": "The request line and headers exceed 1024 bytes",
    }
    assert b"x-amz-crc32: " in transport.written[0]
    assert transport.closed


def test_many_headers_in_one_packet_count_too() -> None:
    connection, transport = open_connection(registry(max_header_bytes=1024))
    headers = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 50) for i in range(40))
    connection.data_received(b"GET / HTTP/1.1\r\n" + headers + b"\r\n")
    assert status_and_body(transport.written[0])[0] == 400


def test_headers_at_the_limit_pass() -> None:
    connection, transport = open_connection(registry(max_header_bytes=len(REQUEST % b"Get") - 2))
    connection.data_received(REQUEST % b"Get")
    assert bodies(transport) == [b"Get"]


def test_a_url_over_the_limit_is_a_400() -> None:
    connection, transport = open_connection(registry(max_url_bytes=100))
    connection.data_received(b"GET /" + b"u" * 200 + b" HTTP/1.1\r\n\r\n")
    status, body = status_and_body(transport.written[0])
    assert (status, json.loads(body)["message"]) == (400, "The request URL exceeds 100 bytes")
    assert transport.closed


def test_a_declared_body_over_16_mb_is_refused_before_it_is_read() -> None:
    limits = registry()
    connection, transport = open_connection(limits)
    connection.data_received(b"POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n{" % (16 * 1024 * 1024 + 1))
    assert transport.written[0].startswith(b"HTTP/1.1 413 ")
    assert transport.eof and not transport.closed  # what the client still sends is read and dropped...
    connection.data_received(b" " * 100_000)
    assert limits.buffered == 0 and len(transport.written) == 1
    limits.expire_due(connection.deadline)  # ...until the body deadline
    assert transport.closed


def test_the_shared_body_budget_answers_503_and_is_released_when_connections_end() -> None:
    limits = registry(max_buffered_request_bytes=1000)
    first, _ = open_connection(limits)
    first.data_received(b"POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n" + b"x" * 900)
    assert limits.buffered == 900
    second, transport = open_connection(limits)
    second.data_received(b"POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n" + b"x" * 200)
    status, body = status_and_body(transport.written[0])
    assert status == 503
    assert json.loads(body)["__type"] == "com.amazonaws.dynamodb.v20120810#ServiceUnavailable"
    first.connection_lost(None)
    second.connection_lost(None)
    assert (limits.buffered, len(limits.open)) == (0, 0)


def test_a_served_request_gives_its_bytes_back() -> None:
    limits = registry()
    connection, transport = open_connection(limits)
    connection.data_received(REQUEST % b"Get")
    assert bodies(transport) == [b"Get"]
    assert limits.buffered == 0


def test_deadlines_idle_header_and_body() -> None:
    limits = registry(idle_timeout=60, header_timeout=10, body_timeout=30)
    idle, idle_transport = open_connection(limits)
    slow_head, head_transport = open_connection(limits)
    slow_head.data_received(b"POST / HTTP/1.1\r\nX-Slow: ")
    slow_body, body_transport = open_connection(limits)
    slow_body.data_received(b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n{")
    now = min(c.deadline for c in (idle, slow_head, slow_body))
    limits.expire_due(now + 0.5)  # past the header deadline only
    assert (head_transport.closed, body_transport.closed, idle_transport.closed) == (True, False, False)
    assert head_transport.written == [
        b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nx-amz-crc32: 0\r\nConnection: close\r\n\r\n"
    ]
    limits.expire_due(slow_body.deadline)
    assert body_transport.closed and body_transport.written[0].startswith(b"HTTP/1.1 408 ")
    assert not idle_transport.closed
    limits.expire_due(idle.deadline)
    assert idle_transport.closed and idle_transport.written == []  # an idle connection just ends
    assert len(limits.open) == 0  # their places are free at once


def test_a_connection_with_a_response_held_for_durability_has_no_deadline() -> None:
    limits = registry()
    connection, _ = open_connection(limits)
    connection.data_received(REQUEST % b"Write1")
    assert connection.deadline == math.inf


def test_the_cap_closes_the_longest_idle_connection_or_refuses_with_503() -> None:
    limits = Registry(ConnectionLimits(max_connections=100, reserved_descriptors=8), descriptors=10)
    assert limits.cap == 2
    older, older_transport = open_connection(limits)
    busy, busy_transport = open_connection(limits)
    busy.data_received(b"POST / HTTP/1.1\r\nX-Slow: ")
    newer, newer_transport = open_connection(limits)
    assert older_transport.closed and not busy_transport.closed and not newer_transport.closed
    assert limits.open == {busy, newer}
    older.connection_lost(None)
    newer.data_received(b"POST / HTTP/1.1\r\nX-Slow: ")
    _, refused = open_connection(limits)
    assert refused.closed
    assert status_and_body(refused.written[0])[0] == 503


def test_a_client_that_does_not_read_stops_being_read() -> None:
    limits = registry()
    connection, transport = open_connection(limits)
    assert transport.high == 1024 * 1024
    connection.data_received(REQUEST % b"Get1")
    connection.pause_writing()  # the transport's unsent output passed the threshold
    assert not transport.reading
    connection.data_received(REQUEST % b"Get2" + REQUEST % b"Get3")  # already read when reading paused
    assert bodies(transport) == [b"Get1"]
    assert limits.buffered == 4  # the two queued bodies
    limits.expire_due(connection.deadline - 1)
    assert not transport.closed
    connection.resume_writing()
    assert bodies(transport) == [b"Get1", b"Get2", b"Get3"]
    assert transport.reading
    assert limits.buffered == 0


def test_a_client_that_never_reads_is_dropped_after_the_idle_timeout() -> None:
    limits = registry(idle_timeout=5)
    connection, transport = open_connection(limits)
    connection.data_received(REQUEST % b"Get1")
    connection.pause_writing()
    limits.expire_due(connection.deadline)
    assert transport.aborted


def test_pipelined_writes_waiting_for_durability_pause_reading() -> None:
    limits = registry()
    committer = FakeCommitter()
    connection = HttpConnection(FakeProtocol(), committer, limits)
    transport = FakeTransport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    connection.data_received(b"".join(REQUEST % b"Write%d" % (i + 1) for i in range(130)))
    assert len(committer.waiting) == 128
    assert not transport.reading
    committer.flush(130)
    committer.flush(130)
    assert len(bodies(transport)) == 130
    assert transport.reading


def test_a_lost_connection_keeps_no_buffers() -> None:
    limits = registry()
    connection, _ = open_connection(limits)
    connection.data_received(b"POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + b"x" * 50000)
    connection.connection_lost(None)
    assert limits.buffered == 0
    assert connection._body == []  # noqa: SLF001 - the point of the test


def test_bodies_let_go_trim_the_heap_once() -> None:
    """Request bodies live in the C heap: once 16 MB or more of them were let go, the sweep gives the free pages
    back to the operating system (malloc_trim), once, and not again until as much more was let go."""
    limits = registry()
    stalled = [open_connection(limits)[0] for _ in range(2)]
    for connection in stalled:
        connection.data_received(b"POST / HTTP/1.1\r\nContent-Length: 16000000\r\n\r\n" + b"x" * 9_000_000)
    assert limits.buffered == 18_000_000
    assert not limits.give_back_memory()  # nothing let go yet
    for connection in stalled:
        connection.connection_lost(None)
    assert limits.buffered == 0
    assert limits.give_back_memory()  # glibc's malloc_trim, as on every Linux the server runs on
    assert not limits.give_back_memory()


def test_bodies_let_go_below_the_threshold_leave_the_heap_alone() -> None:
    limits = registry()
    connection, _ = open_connection(limits)
    connection.data_received(b"POST / HTTP/1.1\r\nContent-Length: 16000000\r\n\r\n" + b"x" * 1_000_000)
    connection.connection_lost(None)
    assert not limits.give_back_memory()


def test_a_stop_closes_idle_connections_and_lets_busy_ones_finish() -> None:
    limits = registry()
    idle, idle_transport = open_connection(limits)
    idle.data_received(REQUEST % b"Get")  # answered: idle again
    receiving, receiving_transport = open_connection(limits)
    receiving.data_received((REQUEST % b"Get")[:-1])  # its body's last byte is still to come
    limits.stopping = True
    for connection in (idle, receiving):
        connection.shut_down()
    assert idle_transport.closed and idle not in limits.open
    assert not receiving_transport.closed
    receiving.data_received(b"}")
    (answer,) = receiving_transport.written
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nConnection: close\r\n" in answer
    assert receiving_transport.closed
    receiving.connection_lost(None)  # as the loop reports the close
    assert not limits.open


def test_a_stop_answers_held_writes_then_refuses_a_later_request() -> None:
    limits = registry()
    committer = FakeCommitter()
    connection = HttpConnection(FakeProtocol(), committer, limits)
    transport = FakeTransport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    connection.data_received(REQUEST % b"Write1")  # held until commit 1 is durable
    limits.stopping = True
    connection.shut_down()
    connection.data_received(REQUEST % b"Get")  # begun after the stop
    assert transport.written == [] and not transport.closed
    committer.flush(1)
    held, refused = transport.written  # the 503 is the connection's last answer: it says Connection: close
    assert held.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nConnection: close\r\n" not in held
    assert b"\r\nConnection: close\r\n" in refused
    status, body = status_and_body(refused)
    assert status == 503
    assert json.loads(body) == {
        "__type": "com.amazonaws.dynamodb.v20120810#ServiceUnavailable",
        "message": "The server is stopping and takes no new requests; retry the request",
    }
    assert transport.closed
