"""The HTTP connection: parsing, keep-alive, 413, and responses held until their write is durable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dynastore.protocol.http_server import HttpConnection
from dynastore.protocol.protocol import RawResponse

REQUEST = (
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
    b"X-Amz-Target: DynamoDB_20120810.%s\r\nContent-Length: 2\r\n\r\n{}"
)


class FakeTransport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

        self.aborted = False
        self.eof = False
        self.reading = True
        self.high = 0

    def close(self) -> None:
        self.closed = True

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def set_write_buffer_limits(self, high: int) -> None:
        self.high = high

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


class FakeProtocol:
    """Operations named Write<N> report commit N; everything else reports none."""

    def handle(self, method: str, headers: dict[str, str], body: bytes, path: str = "/") -> RawResponse:
        target = headers["x-amz-target"].split(".")[1]
        seq = int(target[5:]) if target.startswith("Write") else 0
        return RawResponse(200, target.encode(), commit_seq=seq)


class FakeCommitter:
    def __init__(self) -> None:
        self.durable_seq = 0
        self.polls = 0
        self.waiting: list[tuple[int, Callable[[BaseException | None], None]]] = []

    def when_durable(self, seq: int, callback: Callable[[BaseException | None], None]) -> None:
        self.waiting.append((seq, callback))

    def poll(self) -> None:
        self.polls += 1

    def flush(self, seq: int) -> None:
        self.durable_seq = seq
        ready = [cb for s, cb in self.waiting if s <= seq]
        self.waiting = [(s, cb) for s, cb in self.waiting if s > seq]
        for callback in ready:
            callback(None)


def connect() -> tuple[HttpConnection, FakeTransport, FakeCommitter]:
    committer = FakeCommitter()
    connection = HttpConnection(FakeProtocol(), committer)
    transport = FakeTransport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    return connection, transport, committer


def bodies(transport: FakeTransport) -> list[bytes]:
    return [chunk.rsplit(b"\r\n\r\n", 1)[1] for chunk in transport.written]


def test_reads_answer_at_once() -> None:
    connection, transport, _ = connect()
    connection.data_received(REQUEST % b"Get")
    assert bodies(transport) == [b"Get"]


def test_write_waits_for_durability_and_holds_what_follows() -> None:
    connection, transport, committer = connect()
    connection.data_received(REQUEST % b"Write1" + REQUEST % b"Get")
    assert transport.written == []
    committer.flush(1)
    assert bodies(transport) == [b"Write1", b"Get"]


def test_responses_keep_request_order_across_flushes() -> None:
    connection, transport, committer = connect()
    connection.data_received(REQUEST % b"Write1" + REQUEST % b"Write2" + REQUEST % b"Get")
    committer.flush(1)
    assert bodies(transport) == [b"Write1"]
    committer.flush(2)
    assert bodies(transport) == [b"Write1", b"Write2", b"Get"]


def test_failed_flush_answers_500_and_closes() -> None:
    connection, transport, committer = connect()
    connection.data_received(REQUEST % b"Write1")
    seq, callback = committer.waiting[0]
    callback(OSError("disk gone"))
    assert transport.written[0].startswith(b"HTTP/1.1 500")
    assert transport.closed


def test_body_split_across_packets() -> None:
    connection, transport, _ = connect()
    data = REQUEST % b"Get"
    for i in range(0, len(data), 7):
        connection.data_received(data[i : i + 7])
    assert bodies(transport) == [b"Get"]


def test_garbage_is_a_400_and_closes() -> None:
    connection, transport, _ = connect()
    connection.data_received(b"\x00\x01 not http\r\n\r\n")
    assert transport.written[0].startswith(b"HTTP/1.1 400")
    assert transport.closed


def test_a_refusal_after_a_held_write_comes_after_its_answer() -> None:
    """The write pipelined before the garbage was done: its answer is not lost to the 400 that closes."""
    connection, transport, committer = connect()
    connection.data_received(REQUEST % b"Write1" + b"\x00\x01 not http\r\n\r\n")
    assert transport.written == []
    committer.flush(1)
    assert [chunk[:12] for chunk in transport.written] == [b"HTTP/1.1 200", b"HTTP/1.1 400"]
    assert b"Connection: close" not in transport.written[0] and transport.closed


def test_a_413_after_a_held_write_comes_after_its_answer() -> None:
    connection, transport, committer = connect()
    too_large: Any = REQUEST.replace(b"Content-Length: 2", b"Content-Length: 99999999")
    connection.data_received(REQUEST % b"Write1" + too_large)
    assert transport.written == []
    committer.flush(1)
    assert [chunk[:12] for chunk in transport.written] == [b"HTTP/1.1 200", b"HTTP/1.1 413"]
    assert transport.closed


def test_nothing_after_a_request_that_closes_is_read_or_refused() -> None:
    connection, transport, committer = connect()
    closing: Any = REQUEST.replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n") % b"Write1"
    connection.data_received(closing + b"\x00 garbage\r\n\r\n")
    connection.data_received(REQUEST % b"Get")
    committer.flush(1)
    assert bodies(transport) == [b"Write1"] and transport.closed


def test_connection_close_is_honoured() -> None:
    connection, transport, _ = connect()
    request: Any = REQUEST.replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n") % b"Get"
    connection.data_received(request)
    assert b"Connection: close" in transport.written[0]
    assert transport.closed


class HeadersSeen(FakeProtocol):
    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    def handle(self, method: str, headers: dict[str, str], body: bytes, path: str = "/") -> RawResponse:
        self.seen.append(dict(headers))
        return super().handle(method, headers, body, path)


def test_header_names_are_lower_case_however_many_names_clients_use() -> None:
    """Names are kept decoded for the next request (up to a bound): past it, and in any case, a request's headers
    are its own, by their lower-case names."""
    handler = HeadersSeen()
    connection = HttpConnection(handler, FakeCommitter())
    connection.connection_made(FakeTransport())  # type: ignore[arg-type]
    own = b"".join(b"X-Own-%d: v%d\r\n" % (n, n) for n in range(300))
    request = REQUEST.replace(b"Host: x\r\n", b"Host: x\r\n" + own) % b"Get"
    connection.data_received(request + REQUEST.replace(b"Host: x", b"HOST: y") % b"Get")
    first, second = handler.seen
    assert first["x-own-0"] == "v0" and first["x-own-299"] == "v299" and first["host"] == "x"
    assert second == {
        "host": "y",
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "DynamoDB_20120810.Get",
        "content-length": "2",
    }
