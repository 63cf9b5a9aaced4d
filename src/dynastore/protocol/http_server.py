"""HTTP/1.1 over asyncio with httptools: bytes in, Protocol.handle, bytes out.

A response that reports a write is held back until that write is durable (group commit). Responses on one
connection always leave in request order, so a held write also holds whatever the client pipelined behind it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from email.utils import formatdate
from typing import Any, Protocol, cast

import httptools
import orjson

from dynastore.errors import InternalServerError
from dynastore.limits import MAX_REQUEST_BYTES
from dynastore.protocol.protocol import RawResponse

log = logging.getLogger("dynastore")

_REASONS = {
    200: b"OK",
    400: b"Bad Request",
    404: b"Not Found",
    413: b"Request Entity Too Large",
    500: b"Internal Server Error",
    503: b"Service Unavailable",
}
_TOO_LARGE = (
    b"HTTP/1.1 413 Request Entity Too Large\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n"
)
_BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class _DateHeader:
    """The Date header, formatted once a second rather than once a request."""

    def __init__(self) -> None:
        self._second = 0
        self._value = b""

    def get(self) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._value = formatdate(now, usegmt=True).encode()
        return self._value


_DATE = _DateHeader()


def encode_response(response: RawResponse, keep_alive: bool) -> bytes:
    head = [
        b"HTTP/1.1 %d %s\r\n" % (response.status, _REASONS.get(response.status, b"Unknown")),
        b"Server: dynastore\r\nDate: ",
        _DATE.get(),
        b"\r\nContent-Type: ",
        response.content_type.encode(),
        b"\r\nContent-Length: %d\r\n" % len(response.body),
    ]
    for name, value in response.headers:
        head.append(f"{name}: {value}\r\n".encode("latin-1"))
    if not keep_alive:
        head.append(b"Connection: close\r\n")
    head.append(b"\r\n")
    head.append(response.body)
    return b"".join(head)


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


class HttpConnection(asyncio.Protocol):
    def __init__(self, protocol: RequestHandler, committer: Durability) -> None:
        self._protocol = protocol
        self._committer = committer
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._body_size = 0
        self._url: list[bytes] = []
        self._refused = False
        self._outgoing: deque[_Slot] = deque()

    # --- asyncio.Protocol ------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio subclasses

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._committer.poll()  # a busy loop answers finished writes before taking on new ones
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self._refuse(_BAD_REQUEST)
        except httptools.HttpParserUpgrade:
            self._refuse(_BAD_REQUEST)

    # --- httptools callbacks ---------------------------------------------------------------------------
    def on_message_begin(self) -> None:
        self._headers = {}
        self._body = []
        self._body_size = 0
        self._url = []

    def on_url(self, url: bytes) -> None:
        self._url.append(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        if self._headers.get("expect", "").lower() == "100-continue" and self._transport is not None:
            self._transport.write(_CONTINUE)

    def on_body(self, body: bytes) -> None:
        self._body_size += len(body)
        if self._body_size > MAX_REQUEST_BYTES:
            self._refuse(_TOO_LARGE)
            raise httptools.HttpParserError("request too large")
        self._body.append(body)

    def on_message_complete(self) -> None:
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        method = self._parser.get_method().decode("ascii", "replace")
        keep_alive = self._parser.should_keep_alive()
        url = self._url[0] if len(self._url) == 1 else b"".join(self._url)
        if url.startswith(b"/dynastore/"):  # dynastore's own endpoints (protocol/extensions.py)
            response = self._protocol.handle(method, self._headers, body, url.decode("latin-1"))
        else:
            response = self._protocol.handle(method, self._headers, body)
        data = encode_response(response, keep_alive)
        seq = response.commit_seq
        if seq and seq > self._committer.durable_seq:
            self._hold(seq, data, not keep_alive)
        elif self._outgoing:
            self._outgoing.append(_Slot(data, not keep_alive))
        else:
            self._send(data, not keep_alive)

    # --- output ----------------------------------------------------------------------------------------
    def _hold(self, seq: int, data: bytes, close: bool) -> None:
        """Keep a write's response (and whatever follows it) until the write is durable. (A method of its own: a
        compiled on_message_complete would otherwise build this lambda's environment for reads too.)"""
        slot = _Slot(None, close)
        self._outgoing.append(slot)
        self._committer.when_durable(seq, lambda error: self._durable(slot, data, error))

    def _durable(self, slot: _Slot, data: bytes, error: BaseException | None) -> None:
        if error is not None:
            # The store logged the failure once; each write it took back is answered 500 (outcome: not done).
            log.debug("write could not be made durable: %s", error)
            slot.data, slot.close = _unavailable(), True
        else:
            slot.data = data
        while self._outgoing and self._outgoing[0].data is not None:
            ready = self._outgoing.popleft()
            assert ready.data is not None
            self._send(ready.data, ready.close)

    def _send(self, data: bytes, close: bool) -> None:
        transport = self._transport
        if transport is None:
            return
        transport.write(data)
        if close:
            transport.close()
            self._transport = None

    def _refuse(self, data: bytes) -> None:
        self._refused = True
        self._send(data, True)


def _unavailable() -> bytes:
    body = orjson.dumps(InternalServerError().to_body())
    return encode_response(RawResponse(500, body), keep_alive=False)


async def start(protocol: RequestHandler, committer: Durability, host: str, port: int, **kwargs: Any) -> asyncio.Server:
    loop = asyncio.get_running_loop()
    return await loop.create_server(
        lambda: HttpConnection(protocol, committer), host, port, reuse_address=True, backlog=1024, **kwargs
    )
