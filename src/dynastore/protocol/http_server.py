"""HTTP/1.1 over asyncio with httptools: bytes in, Protocol.handle, bytes out.

A response that reports a write is held back until that write is durable (group commit). Responses on one
connection always leave in request order, so a held write also holds whatever the client pipelined behind it:
answers, an interim ``100 Continue``, and a refusal that closes the connection (400, 413, a stopping server's
503). Nothing after a request that closes the connection is read.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import time as _time
import zlib
from collections import deque
from collections.abc import Callable
from email.utils import formatdate
from typing import Any, Final, Protocol, cast

import httptools
import orjson

from dynastore import messages
from dynastore.errors import DynamoError, InternalServerError, ServiceUnavailable, ValidationException
from dynastore.limits import MAX_HELD_RESPONSES
from dynastore.protocol.connections import NO_DEADLINE, ConnectionLimits, Registry
from dynastore.protocol.protocol import JSON_10, JSON_11, RawResponse, durability_failure
from dynastore.protocol.request_head import learn_name, read_simple

log = logging.getLogger("dynastore")

# Read per request: as Final names compiled code reads them from C statics, not the module's dict.
monotonic: Final = _time.monotonic
time: Final = _time.time

_REASONS: Final = {
    200: b"OK",
    400: b"Bad Request",
    404: b"Not Found",
    405: b"Method Not Allowed",
    408: b"Request Timeout",
    413: b"Request Entity Too Large",
    500: b"Internal Server Error",
    503: b"Service Unavailable",
}
_TOO_LARGE = (
    b"HTTP/1.1 413 Request Entity Too Large\r\nTransfer-Encoding: chunked\r\nx-amz-crc32: 0\r\n"
    b"Connection: close\r\n\r\n"
    b"0\r\n\r\n"
)
# The answers written without Protocol.handle; their bodies are empty, so their x-amz-crc32 is 0.
_BAD_REQUEST: Final = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nx-amz-crc32: 0\r\nConnection: close\r\n\r\n"
_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nx-amz-crc32: 0\r\nConnection: close\r\n\r\n"


class _DateHeader:
    """The Date header, formatted once a second rather than once a request."""

    def __init__(self) -> None:
        self._second = 0
        self._value = b""

    def get(self) -> bytes:
        now = int(time())
        if now != self._second:
            self._second = now
            self._value = formatdate(now, usegmt=True).encode()
        return self._value


_DATE: Final = _DateHeader()


def encode_response(response: RawResponse, keep_alive: bool) -> bytes:
    status = _STATUS_LINES.get(response.status)
    if status is None:
        status = _status_line(response.status)
    content_type = _CONTENT_TYPE_LINES.get(response.content_type)
    if content_type is None:
        content_type = _content_type_line(response.content_type)
    headers = "".join([f"{name}: {value}\r\n" for name, value in response.headers])
    body = response.body
    return b"".join(
        (
            status,
            _DATE.get(),
            content_type,
            str(len(body)).encode(),
            b"\r\n",
            headers.encode("latin-1"),
            b"\r\n" if keep_alive else b"Connection: close\r\n\r\n",
            body,
        )
    )


def _status_line(status: int) -> bytes:
    """A response's head up to its Date header's value."""
    return b"HTTP/1.1 %d %s\r\nServer: dynastore\r\nDate: " % (status, _REASONS.get(status, b"Unknown"))


def _content_type_line(content_type: str) -> bytes:
    """From the end of the Date header to the Content-Length header's value."""
    return b"\r\nContent-Type: " + content_type.encode() + b"\r\nContent-Length: "


# The fixed parts of a response's head, made once rather than formatted for each response.
_STATUS_LINES: Final = {status: _status_line(status) for status in _REASONS}
_CONTENT_TYPE_LINES: Final = {content_type: _content_type_line(content_type) for content_type in (JSON_10, JSON_11)}


# A header's name as the parser gives it, to the lower-case text a request's headers are keyed by: clients send
# the same dozen names on every request, so each is decoded and lowered once, and its hash computed once for all
# the look-ups of it. Bounded: the names of a client's own beyond it are decoded on every request.
_HEADER_NAMES: Final[dict[bytes, str]] = {}
_HEADER_NAMES_MAX: Final = 256


def _header_name(name: bytes) -> str:
    key = sys.intern(name.decode("latin-1").lower())
    if len(_HEADER_NAMES) < _HEADER_NAMES_MAX:
        _HEADER_NAMES[name] = key
        learn_name(name, key)  # the parser accepted it: requests with it may be read in one pass
    return key


class RequestHandler(Protocol):
    """What a connection hands each request to (protocol.Protocol)."""

    def handle(self, method: str, headers: dict[str, str], body: bytes, path: str = "/") -> RawResponse: ...


class Durability(Protocol):
    """What a connection asks whether a write is durable yet (group_commit.GroupCommitter)."""

    @property
    def durable_seq(self) -> int: ...

    def poll(self) -> None: ...

    def when_durable(self, seq: int, callback: Callable[[BaseException | None], None]) -> None: ...


class _Slot:
    """One response's place in a connection's outgoing order."""

    __slots__ = ("data", "close")

    def __init__(self, data: bytes | None, close: bool) -> None:
        self.data = data
        self.close = close


class _Pending:
    """A request read but not served yet: its connection's client is not reading what it was sent."""

    __slots__ = ("method", "url", "headers", "body", "keep_alive")

    def __init__(self, method: str, url: bytes, headers: dict[str, str], body: bytes, keep_alive: bool) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive


class HttpConnection(asyncio.Protocol):
    """One client connection, held to its registry's limits (protocol/connections.py)."""

    def __init__(self, protocol: RequestHandler, committer: Durability, registry: Registry | None = None) -> None:
        self._protocol = protocol
        self._committer = committer
        self._registry = registry if registry is not None else Registry(ConnectionLimits(), descriptors=1 << 20)
        self._limits = self._registry.limits
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._body_size = 0  # bytes of the body being read, counted in the registry's budget
        self._url: list[bytes] = []
        self._url_size = 0
        self._head_size = 0  # request line and headers as the parser reported them
        self._head_fed = 0  # bytes fed to the parser since the last request ended (bounds a head still growing)
        self._in_head = True  # between requests or inside one's head
        self._receiving = False  # a request has begun and not ended
        self._refused = False
        self._read_last = False  # a request that closes the connection was read: nothing after it is
        self._late = False  # the request being read began after the server began stopping
        self._released = False  # has left the registry
        self._write_paused = False
        self._reading_paused = False
        self._outgoing: deque[_Slot] = deque()
        self._pending: deque[_Pending] = deque()
        self.deadline = NO_DEADLINE  # when the registry's sweep closes this connection
        self.idle_since = NO_DEADLINE  # when the connection last became idle (NO_DEADLINE: busy)
        self._now = 0.0  # monotonic() when the packet being read arrived

    # --- asyncio.Protocol ------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio subclasses
        self._transport.set_write_buffer_limits(high=self._limits.write_buffer_bytes)
        if not self._registry.admit(self):
            self._refuse(_busy())
            return
        self._settle()

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        self._release()

    def _release(self) -> None:
        """Leave the registry (once) and drop every buffer now, not when the collector finds the connection-parser
        cycle: nothing a closed connection held stays."""
        if not self._released:
            self._released = True
            self._registry.forget(self, self._body_size + sum(len(p.body) for p in self._pending))
        self._body_size = 0
        self._body = []
        self._headers = {}
        self._url = []
        self._pending.clear()
        self._outgoing.clear()
        self.deadline = NO_DEADLINE
        self.idle_since = NO_DEADLINE

    def pause_writing(self) -> None:
        """The client is not reading: stop reading its requests until it takes what it was sent."""
        self._write_paused = True
        self._pause_reading()
        self.deadline = monotonic() + self._limits.idle_timeout
        self.idle_since = NO_DEADLINE

    def resume_writing(self) -> None:
        self._write_paused = False
        self._drain_pending()

    def data_received(self, data: bytes) -> None:
        if self._refused or self._read_last:
            return
        self._now = monotonic()  # one clock read per packet serves every deadline its requests set
        self._committer.poll()  # a busy loop answers finished writes before taking on new ones
        try:
            if not self._in_head:
                self._parser.feed_data(data)
            elif self._receiving:  # the parser is inside a request's head
                self._feed_head(data)
            else:
                self._read_simple(data)
        except httptools.HttpParserError:
            # A callback that refused the request has answered it already; bytes after a request that closes the
            # connection are not read (the parser calls them an error).
            if not self._refused and not self._read_last:
                self._refuse(_BAD_REQUEST)
        except httptools.HttpParserUpgrade:
            self._refuse(_BAD_REQUEST)

    def _read_simple(self, data: bytes) -> None:
        """Serve the requests of the common form that begin where ``data`` does, each read in one pass
        (request_head.py); from the first of any other form (or one not complete yet) on, the parser reads."""
        limits = self._limits
        pos = 0
        size = len(data)
        while pos < size:
            request = read_simple(data, pos, limits.max_header_bytes, limits.max_body_bytes)
            if request is None:
                self._feed_head(data if pos == 0 else data[pos:])
                return
            headers, body, keep_alive, end = request
            self.on_message_begin()
            # What on_headers_complete checks, read_simple has: the head's and the body's limits, no Expect.
            self._url = [b"/"]
            self._headers = headers
            if body:
                self.on_body(body)
            self._message_read("POST", keep_alive)
            if self._refused or self._read_last:
                return  # nothing after a request that closes the connection is read
            pos = end

    def _feed_head(self, data: bytes) -> None:
        """Feed a head at most up to the header limit: the parser concatenates a growing header on every packet,
        so an unbounded one would cost quadratic time before any callback could count it."""
        size = len(data)
        pos = 0
        while pos < size:
            if not self._in_head:
                self._parser.feed_data(data[pos:])
                return
            room = self._limits.max_header_bytes - self._head_fed
            if room <= 0:
                self._refuse_head(messages.HEADERS_TOO_LARGE.format(limit=self._limits.max_header_bytes))
                return
            end = min(size, pos + room)
            self._head_fed += end - pos
            self._parser.feed_data(data if pos == 0 and end == size else data[pos:end])
            if self._refused:
                return
            pos = end

    # --- what the registry asks ------------------------------------------------------------------------
    def expire(self) -> None:
        """Past a deadline (or evicted to make room): a request under way gets 408, an idle connection just ends."""
        transport = self._transport
        if transport is None:
            return
        self.deadline = NO_DEADLINE
        self._refused = True
        self._transport = None
        if self._write_paused:
            transport.abort()  # its client reads nothing: a graceful close would wait for it forever
        else:
            if self._receiving:
                transport.write(_TIMED_OUT)
            transport.close()
        self._release()  # its place is free at once, for the connection it may have been closed to make room for

    def shut_down(self) -> None:
        """The server is stopping: an idle connection closes now; one with requests under way (read, served or
        waiting for their writes to become durable) answers them, the last with ``Connection: close``, and closes
        (``_settle``). A request begun after this is answered 503 (``_answer_stopping``)."""
        if self._transport is None or self._receiving:
            return  # a request being read is under way: it is served, then the connection closes
        if self._pending:
            return  # its last response will say so (_serve)
        if self._outgoing:
            self._outgoing[-1].close = True
            return
        self._close_idle()

    def _close_idle(self) -> None:
        transport = self._transport
        if transport is None:
            return
        self._refused = True
        self._transport = None
        transport.close()
        self._release()

    # --- httptools callbacks ---------------------------------------------------------------------------
    def on_message_begin(self) -> None:
        self._late = self._registry.stopping
        self._headers = {}
        self._body = []
        self._url = []
        self._url_size = 0
        self._head_size = 0
        self._receiving = True
        self.deadline = self._now + self._limits.header_timeout
        self.idle_since = NO_DEADLINE

    def on_url(self, url: bytes) -> None:
        self._url.append(url)
        self._url_size += len(url)
        if self._url_size > self._limits.max_url_bytes:
            self._refuse_head(messages.URL_TOO_LONG.format(limit=self._limits.max_url_bytes))
            raise httptools.HttpParserError("URL too long")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_size += len(name) + len(value) + 4
        key = _HEADER_NAMES.get(name)
        if key is None:
            key = _header_name(name)
        self._headers[key] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self._in_head = False
        if self._head_size + self._url_size > self._limits.max_header_bytes:
            self._refuse_head(messages.HEADERS_TOO_LARGE.format(limit=self._limits.max_header_bytes))
            raise httptools.HttpParserError("headers too large")
        declared = self._headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._limits.max_body_bytes:
            self._refuse_too_large()
            raise httptools.HttpParserError("request too large")
        self.deadline = self._now + self._limits.body_timeout
        if self._headers.get("expect", "").lower() == "100-continue" and self._transport is not None:
            self._continue()

    def _continue(self) -> None:
        """Answer ``Expect: 100-continue`` in its place: after the responses to requests pipelined before it, which
        may be held until their writes are durable. With requests still waiting to be served (their client reads
        nothing) there is no such place yet; the body is then being read from what the client has sent already,
        and a server may leave the interim answer out (RFC 9110, 10.1.1)."""
        if self._pending:
            return
        if self._outgoing:
            self._outgoing.append(_Slot(_CONTINUE, False))
        elif self._transport is not None:
            self._transport.write(_CONTINUE)

    def on_body(self, body: bytes) -> None:
        size = len(body)
        if self._body_size + size > self._limits.max_body_bytes:
            self._refuse_too_large()
            raise httptools.HttpParserError("request too large")
        if not self._registry.reserve(size):
            self._refuse(_busy())
            raise httptools.HttpParserError("request budget spent")
        self._body_size += size
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._message_read(self._parser.get_method().decode("ascii", "replace"), self._parser.should_keep_alive())

    def _message_read(self, method: str, keep_alive: bool) -> None:
        """A whole request read, by the parser or in one pass: serve it (or queue it, or refuse it)."""
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        self._body = []
        self._read_last = not keep_alive
        url = self._url[0] if len(self._url) == 1 else b"".join(self._url)
        self._in_head = True
        self._head_fed = 0
        self._receiving = False
        held = self._body_size
        self._body_size = 0
        if self._late:
            self._registry.buffered -= held
            self._answer_stopping()
            return
        if self._write_paused or self._pending or len(self._outgoing) >= MAX_HELD_RESPONSES:
            self._registry.buffered -= held - len(body)  # the queued body stays counted
            self._pending.append(_Pending(method, url, self._headers, body, keep_alive))
            self._pause_reading()
            return
        self._registry.buffered -= held
        self._serve(method, url, self._headers, body, keep_alive)
        self._settle(self._now)

    # --- serving -----------------------------------------------------------------------------------------
    def _serve(self, method: str, url: bytes, headers: dict[str, str], body: bytes, keep_alive: bool) -> None:
        path = "/" if url == b"/" else url.decode("latin-1")
        response = self._protocol.handle(method, headers, body, path)
        if response.later is not None:
            self._defer(response.later, keep_alive)
            return
        data = encode_response(response, keep_alive)
        # The last request of a stopping server's connection closes it (docs/operations.md "Stopping").
        close = not keep_alive or (self._registry.stopping and not self._pending)
        seq = response.commit_seq
        if seq and seq > self._committer.durable_seq:
            self._hold(seq, data, close)
        elif self._outgoing:
            self._outgoing.append(_Slot(data, close))
        else:
            self._send(data, close)

    def _drain_pending(self) -> None:
        """Serve the requests that waited, as long as the client keeps reading; then read again."""
        while self._pending and not self._write_paused and len(self._outgoing) < MAX_HELD_RESPONSES:
            if self._transport is None:
                return
            request = self._pending.popleft()
            self._registry.buffered -= len(request.body)
            self._serve(request.method, request.url, request.headers, request.body, request.keep_alive)
        if not self._pending and not self._write_paused and self._reading_paused and self._transport is not None:
            self._reading_paused = False
            self._transport.resume_reading()
        self._settle()

    def _pause_reading(self) -> None:
        if not self._reading_paused and self._transport is not None:
            self._reading_paused = True
            self._transport.pause_reading()

    def _settle(self, now: float = 0.0) -> None:
        """After a request or a response: an idle connection's deadline starts; a busy one has none of its own."""
        if self._write_paused or self._receiving:
            return
        if self._outgoing or self._pending:
            self.deadline = NO_DEADLINE
            self.idle_since = NO_DEADLINE
        elif self._registry.stopping:
            self._close_idle()  # everything it had is answered
        else:
            if now == 0.0:
                now = monotonic()
            self.deadline = now + self._limits.idle_timeout
            self.idle_since = now

    # --- output ----------------------------------------------------------------------------------------
    def _hold(self, seq: int, data: bytes, close: bool) -> None:
        """Keep a write's response (and whatever follows it) until the write is durable. (A method of its own: a
        compiled on_message_complete would otherwise build this lambda's environment for reads too.)"""
        slot = _Slot(None, close)
        self._outgoing.append(slot)
        self._committer.when_durable(seq, lambda error: self._durable(slot, data, error))

    def _defer(self, later: asyncio.Future[RawResponse], keep_alive: bool) -> None:
        """Keep the place of a response still being made (forwarded to a cluster's leader) until it is made."""
        close = not keep_alive or (self._registry.stopping and not self._pending)
        slot = _Slot(None, close)
        self._outgoing.append(slot)
        later.add_done_callback(lambda done: self._made(slot, done, keep_alive))

    def _made(self, slot: _Slot, done: asyncio.Future[RawResponse], keep_alive: bool) -> None:
        error = None if done.cancelled() else done.exception()
        if done.cancelled() or error is not None:
            log.error("a forwarded request failed: %s", error)
            data = _error(InternalServerError())
            slot.close = True
        else:
            data = encode_response(done.result(), keep_alive)
        self._durable(slot, data, None)

    def _durable(self, slot: _Slot, data: bytes, error: BaseException | None) -> None:
        if error is not None:
            # The store logged the failure once; each write it took back is answered 503 (outcome: not done).
            log.debug("write could not be made durable: %s", error)
            slot.data, slot.close = _error(durability_failure(error)), True
        else:
            slot.data = data
        while self._outgoing and self._outgoing[0].data is not None:
            ready = self._outgoing.popleft()
            assert ready.data is not None
            self._send(ready.data, ready.close)
        if self._pending:
            self._drain_pending()
        else:
            self._settle()

    def _send(self, data: bytes, close: bool) -> None:
        transport = self._transport
        if transport is None:
            return
        transport.write(_closing(data) if close else data)
        if close:
            transport.close()
            self._transport = None

    def _answer_stopping(self) -> None:
        """A request begun after the server began stopping: 503, in its place after the responses still held, and
        nothing more is read."""
        self._refuse(_error(ServiceUnavailable(messages.SERVER_STOPPING)))

    def _refuse(self, data: bytes) -> None:
        """Answer ``data`` and close, reading nothing more: after the responses held for requests pipelined before
        (their writes are done; their answers must not be lost to the refusal of what followed them)."""
        self._refused = True
        self._drop_body()
        if self._outgoing:
            self._pause_reading()
            self._outgoing[-1].close = False  # this answer comes after it, and closes the connection instead
            self._outgoing.append(_Slot(data, True))
        else:
            self._send(data, True)

    def _refuse_too_large(self) -> None:
        """413, then read and drop the rest of what the client sends until it stops or the body deadline passes:
        closing at once would reset the connection under a client still sending, and it would never see the 413."""
        transport = self._transport
        if transport is None or not transport.can_write_eof() or self._outgoing:
            self._refuse(_TOO_LARGE)  # (behind held responses: in its place, and the connection then closes)
            return
        self._refused = True
        self._drop_body()
        self._receiving = False
        transport.write(_TOO_LARGE)
        transport.write_eof()
        self.deadline = monotonic() + self._limits.body_timeout

    def _drop_body(self) -> None:
        self._registry.buffered -= self._body_size
        self._body_size = 0
        self._body = []

    def _refuse_head(self, message: str) -> None:
        self._refuse(_error(ValidationException(message, bare=True)))


def _error(error: DynamoError) -> bytes:
    body = orjson.dumps(error.to_body())
    response = RawResponse(error.status, body, headers=[("x-amz-crc32", str(zlib.crc32(body)))])
    return encode_response(response, keep_alive=False)


def _closing(data: bytes) -> bytes:
    """An encoded response that says ``Connection: close`` (the last of a connection), added if it does not yet
    (searched in place: most already say it, and their bodies are not copied)."""
    end = data.find(b"\r\n\r\n")
    if end < 0 or data.find(b"\r\nConnection: close\r\n", 0, end + 2) >= 0:
        return data
    return data[:end] + b"\r\nConnection: close" + data[end:]


def _busy() -> bytes:
    return _error(ServiceUnavailable(messages.SERVER_BUSY))


LISTEN_BACKLOG = 1024


def listen(host: str, port: int) -> list[socket.socket]:
    """Bound, listening sockets for every address ``host`` resolves to (as asyncio's create_server would bind), made
    before the server opens its store, so that a port in use fails the start before anything is created. With
    port 0 the first address picks a free port and the others take the same one. Raises OSError."""
    sockets: list[socket.socket] = []
    try:
        seen = set()
        for family, kind, proto, _, address in socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        ):
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


async def start(
    protocol: RequestHandler, committer: Durability, sockets: list[socket.socket], registry: Registry, **kwargs: Any
) -> list[asyncio.Server]:
    """Serve on sockets made by ``listen``, each connection bounded by ``registry``'s limits."""
    loop = asyncio.get_running_loop()
    registry.start()
    servers = []
    for sock in sockets:  # a loop, not a comprehension: mypyc cannot compile an await inside one
        servers.append(
            await loop.create_server(
                lambda: HttpConnection(protocol, committer, registry), sock=sock, backlog=LISTEN_BACKLOG, **kwargs
            )
        )
    return servers
