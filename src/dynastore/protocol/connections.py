"""What bounds every client: the limits a connection is held to, and the registry of open connections.

The registry counts connections against a cap below the descriptor limit (descriptors are kept back for storage:
log segments, LMDB's files, the lock file, the sync helper), shares one budget of request bytes buffered by all
connections, and closes connections past their deadline. Deadlines are checked by one periodic sweep rather than
a timer per request: a request only stores a number (docs/design.md "Limits and abuse").
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import math
import resource
import time
from collections.abc import Callable
from typing import Final, Protocol

from dynastore.limits import (
    BODY_TIMEOUT_SECONDS,
    HEADER_TIMEOUT_SECONDS,
    IDLE_TIMEOUT_SECONDS,
    MAX_BUFFERED_REQUEST_BYTES,
    MAX_CONNECTIONS,
    MAX_HEADER_BYTES,
    MAX_REQUEST_BYTES,
    MAX_URL_BYTES,
    RESERVED_DESCRIPTORS,
    WRITE_BUFFER_BYTES,
)

NO_DEADLINE: Final = math.inf
# Request bodies given back since the heap was last trimmed past which the sweep trims it (see trim_heap).
TRIM_AFTER_BYTES = 16 * 1024 * 1024


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where the C library has none (musl, macOS)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


_TRIM = _malloc_trim()


def trim_heap() -> bool:
    """Give the C heap's free pages back to the operating system; False where that cannot be asked for.

    Request bodies arrive as chunks of up to a few hundred KB, each below glibc's mmap threshold, so they live in
    the heap; once freed, the small objects that later requests leave above them keep glibc from shrinking the
    heap by itself, and the server's resident memory would stay at its peak (docs/design.md "Limits and abuse").
    ``malloc_trim`` returns every free page, wherever it is in the heap."""
    if _TRIM is None:
        return False
    _TRIM()
    return True


class ConnectionLimits:
    """The limits of one server's connections (Config's values; the defaults are limits.py's)."""

    __slots__ = (
        "max_header_bytes",
        "max_url_bytes",
        "max_body_bytes",
        "idle_timeout",
        "header_timeout",
        "body_timeout",
        "max_connections",
        "reserved_descriptors",
        "max_buffered_request_bytes",
        "write_buffer_bytes",
    )

    def __init__(
        self,
        *,
        max_header_bytes: int = MAX_HEADER_BYTES,
        max_url_bytes: int = MAX_URL_BYTES,
        max_body_bytes: int = MAX_REQUEST_BYTES,
        idle_timeout: float = IDLE_TIMEOUT_SECONDS,
        header_timeout: float = HEADER_TIMEOUT_SECONDS,
        body_timeout: float = BODY_TIMEOUT_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
        reserved_descriptors: int = RESERVED_DESCRIPTORS,
        max_buffered_request_bytes: int = MAX_BUFFERED_REQUEST_BYTES,
        write_buffer_bytes: int = WRITE_BUFFER_BYTES,
    ) -> None:
        self.max_header_bytes = max_header_bytes
        self.max_url_bytes = max_url_bytes
        self.max_body_bytes = max_body_bytes
        self.idle_timeout = idle_timeout
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.max_connections = max_connections
        self.reserved_descriptors = reserved_descriptors
        self.max_buffered_request_bytes = max_buffered_request_bytes
        self.write_buffer_bytes = write_buffer_bytes

    def sweep_interval(self) -> float:
        """How often deadlines are checked: a quarter of the shortest timeout, at most a second."""
        shortest = min(self.idle_timeout, self.header_timeout, self.body_timeout)
        return max(0.005, min(1.0, shortest / 4))


class Tracked(Protocol):
    """What the registry needs of a connection (http_server.HttpConnection)."""

    @property
    def deadline(self) -> float: ...

    @property
    def idle_since(self) -> float: ...

    def expire(self) -> None: ...

    def shut_down(self) -> None: ...


def descriptor_limit() -> int:
    """Raise the soft limit on open descriptors to the hard one (as far as 1,048,576) and return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
    wanted = min(wanted, 1 << 20)
    if soft == resource.RLIM_INFINITY:
        return wanted
    if soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


class Registry:
    """The open connections of one listener, the request-byte budget they share, and the deadline sweep."""

    def __init__(self, limits: ConnectionLimits, descriptors: int | None = None) -> None:
        self.limits = limits
        available = (descriptor_limit() if descriptors is None else descriptors) - limits.reserved_descriptors
        self.cap = max(1, min(limits.max_connections, available))
        self.open: set[Tracked] = set()
        self.buffered = 0  # request bytes held by all connections
        self.buffered_peak = 0  # the most ``buffered`` has been since the heap was last trimmed
        self.stopping = False  # the server is stopping: connections finish what they have, then close
        self._sweeper: asyncio.Task[None] | None = None
        self._all_closed: asyncio.Event | None = None

    def admit(self, connection: Tracked) -> bool:
        """Take a new connection if there is room, making room by closing the longest-idle one; False: refuse."""
        if len(self.open) >= self.cap:
            idle = [c for c in self.open if c.idle_since < NO_DEADLINE]
            if not idle:
                return False
            min(idle, key=lambda c: c.idle_since).expire()
        self.open.add(connection)
        return True

    def forget(self, connection: Tracked, held: int) -> None:
        self.open.discard(connection)
        self.buffered -= held
        if not self.open and self._all_closed is not None:
            self._all_closed.set()

    def reserve(self, size: int) -> bool:
        """Count ``size`` more buffered request bytes; False (nothing counted) when the budget is spent."""
        buffered = self.buffered + size
        if buffered > self.limits.max_buffered_request_bytes:
            return False
        self.buffered = buffered
        if buffered > self.buffered_peak:
            self.buffered_peak = buffered
        return True

    def give_back_memory(self) -> bool:
        """Trim the heap once request bodies of ``TRIM_AFTER_BYTES`` or more were let go since the last time (their
        requests served, or their connections closed); True if it was trimmed."""
        if self.buffered_peak - self.buffered < TRIM_AFTER_BYTES:
            return False
        self.buffered_peak = self.buffered
        return trim_heap()

    def start(self) -> None:
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None

    async def _sweep(self) -> None:
        interval = self.limits.sweep_interval()
        while True:
            await asyncio.sleep(interval)
            self.expire_due(time.monotonic())
            self.give_back_memory()

    async def shut_down(self, grace: float) -> None:
        """Stop the connections (docs/operations.md "Stopping"): each finishes the requests it has, answers them
        once their writes are durable, and closes; an idle one closes at once. Connections still open after
        ``grace`` seconds are closed as they are."""
        self.stopping = True
        self._all_closed = asyncio.Event()
        for connection in list(self.open):
            connection.shut_down()
        if self.open:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_closed.wait(), grace)
        for connection in list(self.open):
            connection.expire()

    def expire_due(self, now: float) -> None:
        due = [c for c in self.open if c.deadline <= now]
        for connection in due:
            connection.expire()
