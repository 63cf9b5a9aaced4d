"""An HTTP/1.1 connection kept open between requests to another server (a follower's to its leader, a server's
to its global tables' peers), with when it went idle: one idle too long is not reused (the other side may be
closing it)."""

from __future__ import annotations

import asyncio
import time

__all__ = ["KeptConnection"]


class KeptConnection:
    __slots__ = ("reader", "writer", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = time.monotonic()
