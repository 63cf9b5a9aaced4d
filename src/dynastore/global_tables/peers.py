"""Replicas in other dynastore servers: ``RemoteLink`` carries a global table's changes and replica-set changes to
the server that serves another region (``--peer REGION=URL``; docs/global-tables.md "Peers").

Each call is one ``POST {url}/dynastore/global-tables/<changes|replica-set|drop>`` with a JSON body, signed with
SigV4 (service ``dynamodb``, the peer's region, the time of this server's clock) by the key configured for peers
(``DYNASTORE_PEER_ACCESS_KEY_ID`` / ``DYNASTORE_PEER_SECRET_ACCESS_KEY``); without a key the request goes unsigned,
which only a peer with ``--auth none`` accepts. Connections are kept alive and reused (HTTP/1.1); connecting and
answering are bounded in time. Any failure (no connection, a broken or late answer, an answer other than 200)
raises ``LinkDown``: the replicator keeps its cursor and sends again later, so nothing is lost and, as applying a
change is idempotent, nothing is applied twice. But a batch of changes the peer refuses (422: a change it will
not take; 404: no replica table there) raises ``ChangeRefused``: the replicator gives up on that change (or
batch) after a bounded number of attempts.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from dynastore.config import Config
from dynastore.global_tables.changes import ChangeRefused, ReplicatedChange, to_wire
from dynastore.global_tables.links import LinkDown
from dynastore.security.sigv4 import sign_headers
from dynastore.util.clock import Clock, SystemClock
from dynastore.util.kept_connection import KeptConnection

__all__ = [
    "ENDPOINT_PREFIX",
    "PeerCredentials",
    "RemoteLink",
    "changes_body",
    "drop_body",
    "remote_link_maker",
    "replica_set_body",
]

ENDPOINT_PREFIX = "/dynastore/global-tables/"
CONNECT_TIMEOUT = 2.0  # seconds to open a connection to a peer
# Seconds for a peer's answer once the request was sent: a batch applies in milliseconds, and a peer that is
# stopped (its kernel still accepts connections) must not hold up the replicator's other regions for long.
ANSWER_TIMEOUT = 5.0
IDLE_REUSE = 4.0  # a pooled connection idle longer is closed, not reused (the peer may be closing it)
POOL_LIMIT = 4  # idle connections kept per peer
MAX_ANSWER_BYTES = 1 << 20  # a peer's answer is a small JSON object; anything longer is not one


@dataclass(frozen=True)
class PeerCredentials:
    """The access key this server signs its requests to peers with (a user of each peer: an admin there)."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str = field(default="", repr=False)

    @classmethod
    def of(cls, config: Config) -> PeerCredentials | None:
        """The key ``config`` holds for peers (DYNASTORE_PEER_ACCESS_KEY_ID and its secret); None without one."""
        if not config.peer_access_key_id:
            return None
        return cls(config.peer_access_key_id, config.peer_secret_access_key, config.peer_session_token)


def changes_body(region: str, account: str, table: str, changes: list[ReplicatedChange]) -> bytes:
    """The body of ``changes``: the wire form of the changes (changes.to_wire) with the target named beside them."""
    wire = to_wire(changes)
    head = orjson.dumps({"Region": region, "Account": account, "TableName": table})
    # Both are JSON objects: splice the target's members in front of the changes' without decoding them again.
    return head[:-1] + b"," + wire[1:] if wire != b"{}" else head


def replica_set_body(region: str, account: str, definition: dict[str, Any]) -> bytes:
    return orjson.dumps({"Region": region, "Account": account, "Definition": definition})


def drop_body(region: str, account: str, table: str) -> bytes:
    return orjson.dumps({"Region": region, "Account": account, "TableName": table})


def remote_link_maker(config: Config) -> Callable[[str, str], RemoteLink]:
    """What links.LinkFactory makes a peer's link with: (region, URL) -> a RemoteLink signing with the key
    ``config`` holds for peers, at the time of ``config``'s clock, trusting ``config.peer_ca_bundle`` over https."""
    credentials = PeerCredentials.of(config)

    def make(region: str, url: str) -> RemoteLink:
        return RemoteLink(region, url, credentials, config.clock, ca_bundle=config.peer_ca_bundle)

    return make


class RemoteLink:
    """The Link (global_tables/links.py) to the region another dynastore serves at ``url``."""

    def __init__(
        self,
        region: str,
        url: str,
        credentials: PeerCredentials | None,
        clock: Clock | None = None,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        answer_timeout: float = ANSWER_TIMEOUT,
        ca_bundle: Path | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"a peer's URL is http://host:port or https://host:port, not {url!r}")
        self.region = region
        self.url = url.rstrip("/")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._authority = parts.netloc
        # https: the peer's certificate checked against ``ca_bundle`` (default: the system's trusted ones).
        self._tls = ssl.create_default_context(cafile=ca_bundle) if parts.scheme == "https" else None
        self._credentials = credentials
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._connect_timeout = connect_timeout
        self._answer_timeout = answer_timeout
        self._idle: list[KeptConnection] = []
        self.sent = 0  # requests the peer answered with 200

    def __repr__(self) -> str:
        return f"RemoteLink({self.region!r}, {self.url!r})"

    async def send(self, account: str, table: str, changes: list[ReplicatedChange]) -> None:
        await self._post("changes", changes_body(self.region, account, table, changes))

    async def put_replica_set(self, account: str, definition: dict[str, Any]) -> None:
        await self._post("replica-set", replica_set_body(self.region, account, definition))

    async def drop_replica(self, account: str, table: str) -> None:
        await self._post("drop", drop_body(self.region, account, table))

    def close(self) -> None:
        """Closes the idle connections (a request in flight closes its own when it ends)."""
        for connection in self._idle:
            connection.writer.close()
        self._idle.clear()

    async def _post(self, endpoint: str, body: bytes) -> None:
        path = ENDPOINT_PREFIX + endpoint
        head = self._request_head(path, body)
        connection = await self._connect()
        try:
            async with asyncio.timeout(self._answer_timeout):
                status, answer, keep_alive = await self._exchange(connection, head, body)
        except (TimeoutError, OSError, EOFError, ValueError, asyncio.LimitOverrunError) as e:
            connection.writer.close()
            raise LinkDown(f"region {self.region} at {self.url}: {path} got no answer: {_reason(e)}") from e
        except BaseException:  # cancelled (the server stops): the connection is in an unknown state
            connection.writer.close()
            raise
        if keep_alive:
            self._release(connection)
        else:
            connection.writer.close()
        if endpoint == "changes":
            _raise_refusal(status, answer)
        if status != 200:
            raise LinkDown(f"region {self.region} at {self.url} refused {path}: {status} {_error_text(answer)}")
        self.sent += 1

    def _request_head(self, path: str, body: bytes) -> bytes:
        headers = {"Host": self._authority, "Content-Type": "application/json"}
        credentials = self._credentials
        if credentials is not None:
            headers = sign_headers(
                "POST",
                path,
                headers,
                body,
                access_key_id=credentials.access_key_id,
                secret=credentials.secret_access_key,
                region=self.region,
                amz_date=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self._clock.now())),
                session_token=credentials.session_token,
            )
        lines = [f"POST {path} HTTP/1.1"] + [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _connect(self) -> KeptConnection:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if now - connection.idle_since < IDLE_REUSE and not connection.reader.at_eof():
                return connection
            connection.writer.close()
        try:
            async with asyncio.timeout(self._connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self._host, self._port, ssl=self._tls, limit=MAX_ANSWER_BYTES
                )
        except (OSError, TimeoutError) as e:
            raise LinkDown(f"region {self.region} at {self.url} cannot be reached: {_reason(e)}") from e
        return KeptConnection(reader, writer)

    def _release(self, connection: KeptConnection) -> None:
        if len(self._idle) >= POOL_LIMIT:
            connection.writer.close()
            return
        connection.idle_since = time.monotonic()
        self._idle.append(connection)

    @staticmethod
    async def _exchange(connection: KeptConnection, head: bytes, body: bytes) -> tuple[int, bytes, bool]:
        writer = connection.writer
        writer.write(head)
        writer.write(body)
        await writer.drain()
        return await read_answer(connection.reader)


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """An HTTP/1.1 answer with a Content-Length (dynastore's): its status, body, and whether the connection stays
    open. ValueError for anything else; EOFError (IncompleteReadError) when the peer closed mid-answer."""
    status_line = await reader.readuntil(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP answer: {status_line[:60]!r}")
    length = -1
    keep_alive = True
    while True:
        line = await reader.readuntil(b"\r\n")
        if line == b"\r\n":
            break
        name, _, value = line.decode("latin-1").partition(":")
        lowered = name.strip().lower()
        if lowered == "content-length":
            length = int(value.strip())
        elif lowered == "connection":
            keep_alive = value.strip().lower() != "close"
    if not 0 <= length <= MAX_ANSWER_BYTES:
        raise ValueError(f"an answer without a usable Content-Length ({length})")
    body = await reader.readexactly(length) if length else b""
    return int(parts[1]), body, keep_alive


def _raise_refusal(status: int, answer: bytes) -> None:
    """Raise ChangeRefused for a peer's refusal of a batch of changes: 422 names the change (admin/peer_endpoints.py),
    404 is a replica table that is not there (the whole batch)."""
    if status == 404:
        raise ChangeRefused(_error_text(answer), None)
    if status != 422:
        return
    with contextlib.suppress(orjson.JSONDecodeError):
        data = orjson.loads(answer)
        if isinstance(data, dict):
            index = data.get("Refused")
            final = data.get("Final") is True
            raise ChangeRefused(_error_text(answer), index if isinstance(index, int) else None, final)
    raise ChangeRefused(_error_text(answer), None)


def _error_text(answer: bytes) -> str:
    """The ``error`` of a dynastore endpoint's answer (or DynamoDB's ``message``), else the answer's start."""
    with contextlib.suppress(orjson.JSONDecodeError):
        data = orjson.loads(answer)
        if isinstance(data, dict):
            text = data.get("error") or data.get("message") or data.get("Message")
            if isinstance(text, str):
                return text
    return answer[:200].decode("utf-8", "replace")


def _reason(error: BaseException) -> str:
    return str(error) or type(error).__name__
