"""The node's connection to etcd: one thread running its own asyncio loop with an ``aetcd`` client, which every
other thread and loop calls through (docs/cluster.md "etcd").

Its own thread because the durable log's ``sync`` blocks a worker thread of the store (storage/durability.py) and
because the server's loop may be uvloop, which grpc's asyncio support does not promise to run on. A failed call
rotates to the next endpoint and rebuilds the client (a grpc channel that failed once may stay failed), then
raises ``EtcdUnavailable``: the caller decides whether to retry.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aetcd
import grpc
from aetcd import rpc

from dynastore.replication.etcd_config import (
    HEAD_KEY,
    LEADER_KEY,
    LOG_PREFIX,
    MAX_REQUEST_BYTES,
    log_key,
)

__all__ = ["EtcdClient", "EtcdUnavailable", "Fenced", "LeaderRecord"]

log = logging.getLogger(__name__)

T = TypeVar("T")

CALL_TIMEOUT = 2.0  # seconds an etcd request may take before the node treats etcd as unreachable
# grpc's default 4 MB message limit is below the largest log entry (docs/cluster.md "Limits").
_GRPC_OPTIONS = {
    "grpc.max_receive_message_length": MAX_REQUEST_BYTES + (1 << 20),
    "grpc.max_send_message_length": MAX_REQUEST_BYTES + (1 << 20),
}


class EtcdUnavailable(Exception):
    """etcd did not answer (every member unreachable, no quorum, or a timeout): the outcome of a write is unknown."""


class Fenced(Exception):
    """An append was refused: this node no longer holds the write lease it appended under (or the log's head
    moved), so nothing of it was written."""


class LeaderRecord:
    """Who holds the write lease: the node's name and URL, and the lease key's create revision (its fence)."""

    __slots__ = ("node", "url", "revision")

    def __init__(self, node: str, url: str, revision: int) -> None:
        self.node = node
        self.url = url
        self.revision = revision


class EtcdClient:
    """Calls into etcd from any thread (``call``, blocking) or any loop (``run``, awaitable)."""

    def __init__(self, endpoints: list[tuple[str, int]]) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoint")
        self._endpoints = endpoints
        self._next = 0
        self._client: aetcd.Client | None = None
        self._appends: Any = None  # the KV stub over a synchronous channel, for ``append`` (the write path)
        self._appends_channel: Any = None
        self._appends_next = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="etcd", daemon=True)
        self._thread.start()

    # ---- running calls on the etcd thread

    def submit(self, make: Callable[[aetcd.Client], Awaitable[T]]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(self._guarded(make), self._loop)

    def call(self, make: Callable[[aetcd.Client], Awaitable[T]], timeout: float = CALL_TIMEOUT * 2) -> T:
        """BLOCKING: run ``make(client)`` on the etcd thread. Raises ``EtcdUnavailable``."""
        try:
            return self.submit(make).result(timeout)
        except concurrent.futures.TimeoutError as e:
            raise EtcdUnavailable("etcd did not answer in time") from e
        except concurrent.futures.CancelledError as e:
            raise EtcdUnavailable("the etcd call was cancelled (its connection was closed)") from e

    async def run(self, make: Callable[[aetcd.Client], Awaitable[T]]) -> T:
        """Await ``make(client)`` run on the etcd thread from another loop. Raises ``EtcdUnavailable``, at the
        latest after twice ``CALL_TIMEOUT`` (whatever the etcd thread is doing)."""
        future = self.submit(make)
        try:
            # Not asyncio.wait_for: on Python 3.11 it returns the call's result when the caller is cancelled as the
            # call ends, and the cancel is lost (a loop told to stop would go on for ever).
            async with asyncio.timeout(CALL_TIMEOUT * 2):
                return await asyncio.wrap_future(future)
        except TimeoutError as e:
            future.cancel()
            raise EtcdUnavailable("etcd did not answer in time") from e
        except asyncio.CancelledError as e:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this caller is being cancelled
            raise EtcdUnavailable("etcd's call was cut off") from e  # (its channel was closed under it)

    async def _guarded(self, make: Callable[[aetcd.Client], Awaitable[T]]) -> T:
        client = await self._connected()
        # Not asyncio.wait_for: it waits for the cancelled call to finish, and a grpc call cut off mid-way may
        # never do so; the call is left to end by itself.
        call = asyncio.ensure_future(make(client))
        done, _ = await asyncio.wait({call}, timeout=CALL_TIMEOUT)
        if not done:
            call.cancel()
            await self._rotate(client)
            raise EtcdUnavailable("etcd did not answer in time")
        if call.cancelled():
            # grpc cancels the calls of a channel closed under them (another call failed and rotated it)
            raise EtcdUnavailable("etcd's call was cut off")
        try:
            return call.result()
        except Fenced:
            raise  # etcd's answer, not a failure
        except (aetcd.ClientError, grpc.RpcError, OSError) as e:  # (etcd's own stubs raise grpc's errors)
            await self._rotate(client)
            raise EtcdUnavailable(f"etcd: {type(e).__name__}: {e}") from e
        except Exception as e:
            # aetcd itself may fail on a broken connection (its watch_once raises AttributeError when the
            # watch could not be created): the node's loops only expect EtcdUnavailable, and a client that
            # failed this way is rebuilt like any other.
            log.warning("etcd call failed unexpectedly: %r", e)
            await self._rotate(client)
            raise EtcdUnavailable(f"etcd: {type(e).__name__}: {e}") from e

    async def _connected(self) -> aetcd.Client:
        if self._client is None:
            host, port = self._endpoints[self._next % len(self._endpoints)]
            client = aetcd.Client(host, port, timeout=int(CALL_TIMEOUT) + 1, options=_GRPC_OPTIONS)
            try:
                await asyncio.wait_for(client.connect(), CALL_TIMEOUT)
            except (aetcd.ClientError, TimeoutError, OSError) as e:
                self._next += 1
                raise EtcdUnavailable(f"etcd at {host}:{port} does not answer: {e}") from e
            self._client = client
        return self._client

    async def _rotate(self, failed: aetcd.Client) -> None:
        if self._client is failed:
            self._client = None
            self._next += 1
            broken: Any = failed  # a broken channel may fail to close, or hang: it is dropped either way
            closing = asyncio.ensure_future(broken.close())
            closing.add_done_callback(lambda done: done.cancelled() or done.exception())

    def keep_alive(
        self, lease_id: int, interval: float, refreshed: Callable[[float, int | None], bool]
    ) -> concurrent.futures.Future[None]:
        """Refresh ``lease_id`` every ``interval`` seconds on this client's thread, so that a busy or stalled
        loop of the caller cannot starve the lease. After each attempt ``refreshed(sent, ttl)`` is called on this
        thread (``sent``: time.monotonic() when the refresh was sent; ``ttl``: the lease's TTL, 0 or less once
        it expired, None when etcd did not answer); the refreshing ends when it returns False."""

        async def refresh() -> None:
            while True:
                sent = time.monotonic()
                try:
                    ttl: int | None = await self._guarded(lambda client: keep_alive(client, lease_id))
                except EtcdUnavailable:
                    ttl = None
                if not refreshed(sent, ttl):
                    return
                await asyncio.sleep(interval)

        return asyncio.run_coroutine_threadsafe(refresh(), self._loop)

    # ---- the write path: appends on a synchronous channel, from the store's syncing thread

    def append(self, fence: int, head: int, entries: list[tuple[int, bytes]]) -> None:
        """BLOCKING: append ``entries`` (consecutive indexes following ``head``) in one transaction, only while
        the leader key was created at ``fence`` and the log's head is still ``head``. Raises ``Fenced`` if not,
        ``EtcdUnavailable`` if etcd did not answer (the outcome is unknown). On a synchronous channel of its
        own: the worker thread that syncs the store waits on it directly, without a hop through this client's
        thread, which halves the CPU a commit costs the leader."""
        stub = self._append_stub()
        try:
            response = stub.Txn(append_request(fence, head, entries), timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            self._drop_append_channel()
            raise EtcdUnavailable(f"etcd: {e.code() if hasattr(e, 'code') else e}") from e
        if not response.succeeded:
            raise Fenced("the write lease or the log's head changed")

    def _append_stub(self) -> Any:
        if self._appends is None:
            host, port = self._endpoints[self._appends_next % len(self._endpoints)]
            self._appends_channel = grpc.insecure_channel(f"{host}:{port}", options=list(_GRPC_OPTIONS.items()))
            self._appends = rpc.KVStub(self._appends_channel)
        return self._appends

    def _drop_append_channel(self) -> None:
        channel, self._appends_channel, self._appends = self._appends_channel, None, None
        self._appends_next += 1
        if channel is not None:
            channel.close()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._drop_append_channel()

        async def shut() -> None:
            client, self._client = self._client, None
            if client is not None:
                closing = asyncio.ensure_future(client.close())
                await asyncio.wait({closing}, timeout=CALL_TIMEOUT)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(CALL_TIMEOUT)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(CALL_TIMEOUT)
        if not self._thread.is_alive():
            self._loop.close()


# ---- the operations dynastore runs (each takes the client, for ``call`` / ``run``)


def append_request(fence: int, head: int, entries: list[tuple[int, bytes]]) -> Any:
    """The transaction appending ``entries`` after ``head`` under the write lease created at ``fence``."""
    compare = [
        rpc.Compare(key=LEADER_KEY, result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE, create_revision=fence),
        # (before the first entry the head key does not exist: its version is 0)
        rpc.Compare(key=HEAD_KEY, result=rpc.Compare.EQUAL, target=rpc.Compare.VALUE, value=str(head).encode())
        if head
        else rpc.Compare(key=HEAD_KEY, result=rpc.Compare.EQUAL, target=rpc.Compare.VERSION, version=0),
    ]
    puts = [(log_key(index), payload) for index, payload in entries]
    puts.append((HEAD_KEY, str(entries[-1][0]).encode()))
    success = [rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value)) for key, value in puts]
    return rpc.TxnRequest(compare=compare, success=success)


async def read_head(client: aetcd.Client) -> tuple[int, int]:
    """The log's head index (0 before the first entry) and the store revision it was read at (a linearizable
    read)."""
    response = await client.kvstub.Range(rpc.RangeRequest(key=HEAD_KEY), timeout=CALL_TIMEOUT)
    head = int(response.kvs[0].value) if response.kvs else 0
    return head, response.header.revision


async def read_log(client: aetcd.Client, start: int, limit: int) -> tuple[list[tuple[int, bytes]], int]:
    """Up to ``limit`` log entries from index ``start`` on, and the revision read at."""
    request = rpc.RangeRequest(key=log_key(start), range_end=_prefix_end(LOG_PREFIX), limit=limit)
    response = await client.kvstub.Range(request, timeout=CALL_TIMEOUT)
    entries = [(int(kv.key[len(LOG_PREFIX) :]), bytes(kv.value)) for kv in response.kvs]
    return entries, response.header.revision


async def oldest_entry(client: aetcd.Client) -> int | None:
    """The index of the oldest entry etcd still holds (None: the log holds none)."""
    request = rpc.RangeRequest(key=LOG_PREFIX, range_end=_prefix_end(LOG_PREFIX), limit=1, keys_only=True)
    response = await client.kvstub.Range(request, timeout=CALL_TIMEOUT)
    return int(response.kvs[0].key[len(LOG_PREFIX) :]) if response.kvs else None


async def wait_for_change(client: aetcd.Client, key: bytes, after_revision: int, timeout: float) -> None:
    """Return once ``key`` changes after ``after_revision``, or after ``timeout`` seconds."""
    with contextlib.suppress(aetcd.WatchTimeoutError):
        await client.watch_once(key, timeout=max(1, int(timeout)), start_revision=after_revision + 1)


async def read_leader(client: aetcd.Client) -> tuple[LeaderRecord | None, int]:
    """The holder of the write lease (None: nobody) and the revision read at."""
    response = await client.kvstub.Range(rpc.RangeRequest(key=LEADER_KEY), timeout=CALL_TIMEOUT)
    if not response.kvs:
        return None, response.header.revision
    kv = response.kvs[0]
    node, _, url = bytes(kv.value).decode().partition(" ")
    return LeaderRecord(node, url, kv.create_revision), response.header.revision


async def campaign(client: aetcd.Client, lease_id: int, node: str, url: str) -> int | None:
    """Take the write lease if nobody holds it: the leader key's create revision (the fence), else None."""
    compare = [client.transactions.version(LEADER_KEY) == 0]
    success = [client.transactions.put(LEADER_KEY, f"{node} {url}".encode(), lease=lease_id)]
    succeeded, _ = await client.transaction(compare=compare, success=success, failure=[])
    if not succeeded:
        return None
    response = await client.kvstub.Range(rpc.RangeRequest(key=LEADER_KEY), timeout=CALL_TIMEOUT)
    if not response.kvs or response.kvs[0].lease != lease_id:
        return None
    revision: int = response.kvs[0].create_revision
    return revision


async def resign(client: aetcd.Client, fence: int) -> None:
    """Give up the write lease if this node still holds it (created at ``fence``)."""
    compare = [client.transactions.create(LEADER_KEY) == fence]
    await client.transaction(compare=compare, success=[client.transactions.delete(LEADER_KEY)], failure=[])


async def grant_lease(client: aetcd.Client, ttl: int) -> int:
    lease = await client.lease(ttl)
    lease_id: int = lease.id
    return lease_id


async def keep_alive(client: aetcd.Client, lease_id: int) -> int:
    """Refresh the lease; its remaining TTL in seconds (0 or less: it has expired)."""
    reply: Any = await client.refresh_lease(lease_id)
    ttl: int = reply.TTL
    return ttl


async def put(client: aetcd.Client, key: bytes, value: bytes, lease_id: int | None = None) -> None:
    await client.put(key, value, lease=lease_id)


async def read_prefix(client: aetcd.Client, prefix: bytes) -> list[tuple[bytes, bytes]]:
    request = rpc.RangeRequest(key=prefix, range_end=_prefix_end(prefix))
    response = await client.kvstub.Range(request, timeout=CALL_TIMEOUT)
    return [(bytes(kv.key[len(prefix) :]), bytes(kv.value)) for kv in response.kvs]


async def forget_log_before(client: aetcd.Client, index: int) -> int:
    """Delete the log entries before ``index`` and compact etcd's history up to now: the revision compacted."""
    response = await client.kvstub.DeleteRange(
        rpc.DeleteRangeRequest(key=LOG_PREFIX, range_end=log_key(index)), timeout=CALL_TIMEOUT
    )
    revision: int = response.header.revision
    await client.kvstub.Compact(rpc.CompactionRequest(revision=revision), timeout=CALL_TIMEOUT)
    return revision


def _prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])
