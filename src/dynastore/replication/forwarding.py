"""Forwarding a request to the cluster's leader (docs/cluster.md "Every node routes").

A follower sends the request it received, unchanged (method, path, headers, body), over a kept-alive HTTP/1.1
connection to the leader's advertised URL, and answers its client with the leader's response. The signature of
a signed request covers what is forwarded unchanged, so the leader authenticates and authorizes the client
itself. What the client sees when no leader can be reached:

- no leader known, or its address refuses connections, for ``LEADER_WAIT`` seconds: 503 ServiceUnavailable
  (nothing was sent, so nothing was done; SDKs retry it);
- the connection broke after the request was sent, or no answer came in ``ANSWER_TIMEOUT`` seconds: 500
  InternalServerError (the outcome is unknown: the leader may have carried it out; SDKs retry it too).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from collections.abc import Callable
from urllib.parse import urlsplit

import orjson

from dynastore import messages
from dynastore.errors import DynamoError, InternalServerError, ServiceUnavailable
from dynastore.protocol.protocol import Headers, RawResponse
from dynastore.util.kept_connection import KeptConnection

__all__ = ["FORWARDED_HEADER", "Forwarder", "error_response"]

log = logging.getLogger(__name__)

LEADER_WAIT = 4.0  # seconds a request waits for a leader to be known and reachable
ANSWER_TIMEOUT = 30.0  # seconds for the leader's answer once the request was sent
IDLE_REUSE = 5.0  # a pooled connection idle longer is not reused (the leader may be closing it)
# Marks a request one node forwarded to another: a node that receives one while it does not lead answers 503
# instead of forwarding it again (two nodes that each take the other for the leader would pass it back and forth).
FORWARDED_HEADER = "x-dynastore-forwarded"
_HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "te", "upgrade"})
_DROPPED_RESPONSE_HEADERS = frozenset({"content-length", "content-type", "date", "server"})


def error_response(error: DynamoError) -> RawResponse:
    body = orjson.dumps(error.to_body())
    return RawResponse(error.status, body, headers=[("x-amz-crc32", str(zlib.crc32(body)))])


class _Broken(Exception):
    """The connection failed after the request was (maybe) sent."""


class Forwarder:
    """Forwards requests to whatever ``leader_url()`` names at the time (None: no leader known)."""

    def __init__(self, leader_url: Callable[[], str | None], leader_changed: Callable[[], asyncio.Event]) -> None:
        self._leader_url = leader_url
        self._leader_changed = leader_changed
        self._pools: dict[str, list[KeptConnection]] = {}
        self.forwarded = 0

    async def forward(self, method: str, path: str, headers: Headers, body: bytes) -> RawResponse:
        deadline = time.monotonic() + LEADER_WAIT
        while True:
            url = self._leader_url()
            connection = None if url is None else await self._connect(url)
            if url is not None and connection is not None:
                try:
                    async with asyncio.timeout(ANSWER_TIMEOUT):
                        response, keep_alive = await self._exchange(connection, method, path, headers, body)
                except (_Broken, TimeoutError, OSError) as e:
                    connection.writer.close()
                    log.warning("a request forwarded to the leader at %s is in doubt: %s", url, e)
                    return error_response(InternalServerError())
                self.forwarded += 1
                if keep_alive:
                    self._release(url, connection)
                else:
                    connection.writer.close()
                return response
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return error_response(ServiceUnavailable(messages.CLUSTER_NO_LEADER))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(remaining, 0.2)):
                    await self._leader_changed().wait()

    async def _connect(self, url: str) -> KeptConnection | None:
        pool = self._pools.get(url)
        now = time.monotonic()
        while pool:
            connection = pool.pop()
            if now - connection.idle_since < IDLE_REUSE and not connection.reader.at_eof():
                return connection
            connection.writer.close()
        parts = urlsplit(url)
        try:
            async with asyncio.timeout(1.0):
                reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        except (OSError, TimeoutError):
            return None
        return KeptConnection(reader, writer)

    def _release(self, url: str, connection: KeptConnection) -> None:
        connection.idle_since = time.monotonic()
        if url not in self._pools:
            # The leader moved: connections kept to an earlier one would never be used again, only held open.
            self.close()
        self._pools.setdefault(url, []).append(connection)

    async def _exchange(
        self, connection: KeptConnection, method: str, path: str, headers: Headers, body: bytes
    ) -> tuple[RawResponse, bool]:
        head = [f"{method} {path} HTTP/1.1\r\n".encode("latin-1")]
        for name, value in headers.items():
            if name not in _HOP_HEADERS:
                head.append(f"{name}: {value}\r\n".encode("latin-1"))
        head.append(b"%s: 1\r\ncontent-length: %d\r\n\r\n" % (FORWARDED_HEADER.encode(), len(body)))
        writer = connection.writer
        writer.write(b"".join(head))
        writer.write(body)
        try:
            await writer.drain()
            return await _read_response(connection.reader)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError) as e:
            raise _Broken(str(e) or type(e).__name__) from e

    @property
    def pooled(self) -> dict[str, int]:
        """How many idle connections are kept, per leader URL."""
        return {url: len(pool) for url, pool in self._pools.items()}

    def close(self) -> None:
        for pool in self._pools.values():
            for connection in pool:
                connection.writer.close()
        self._pools.clear()


async def _read_response(reader: asyncio.StreamReader) -> tuple[RawResponse, bool]:
    """The response, and whether the connection stays open after it."""
    status_line = await reader.readuntil(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise ValueError(f"not an HTTP response: {status_line[:60]!r}")
    status = int(parts[1])
    length = 0
    content_type = "application/x-amz-json-1.0"
    headers: list[tuple[str, str]] = []
    keep_alive = True
    while True:
        line = await reader.readuntil(b"\r\n")
        if line == b"\r\n":
            break
        name, _, value = line.decode("latin-1").partition(":")
        name, value = name.strip(), value.strip()
        lowered = name.lower()
        if lowered == "content-length":
            length = int(value)
        elif lowered == "content-type":
            content_type = value
        elif lowered == "connection":
            keep_alive = value.lower() != "close"
            continue
        if lowered not in _DROPPED_RESPONSE_HEADERS:
            headers.append((name, value))
    body = await reader.readexactly(length) if length else b""
    return RawResponse(status, body, content_type, headers), keep_alive
