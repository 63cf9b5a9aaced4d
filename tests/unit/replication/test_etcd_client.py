"""What --cluster accepts (replication/etcd_config.py parse_endpoints)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

import grpc
import pytest

from dynastore.replication import etcd_client as etcd_client_module
from dynastore.replication.etcd_client import EtcdClient, EtcdUnavailable, Fenced
from dynastore.replication.etcd_config import parse_endpoints


@pytest.mark.parametrize(
    ("spec", "endpoints"),
    [
        ("etcd://127.0.0.1:2379", [("127.0.0.1", 2379)]),
        ("127.0.0.1:2379", [("127.0.0.1", 2379)]),
        ("etcd://a:1,b:2, c:3", [("a", 1), ("b", 2), ("c", 3)]),
        ("etcd://etcd.example:2379/", [("etcd.example", 2379)]),
        (" etcd://h:5 ", [("h", 5)]),
    ],
)
def test_good_specs(spec: str, endpoints: list[tuple[str, int]]) -> None:
    assert parse_endpoints(spec) == endpoints


@pytest.mark.parametrize(
    "spec", ["", "etcd://", "etcd://host", "etcd://:2379", "etcd://host:", "etcd://host:port", "a:1,,b:2", "a:1,b"]
)
def test_bad_specs(spec: str) -> None:
    with pytest.raises(ValueError, match=r"expected etcd://HOST:PORT\[,HOST:PORT\.\.\.\], got "):
        parse_endpoints(spec)


def test_a_client_needs_an_endpoint() -> None:
    with pytest.raises(ValueError, match="no etcd endpoint"):
        EtcdClient([])


class FakeChannel:
    """An aetcd client whose every call fails as a raw grpc stub call does when etcd has no quorum."""

    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


def unavailable() -> grpc.aio.AioRpcError:
    metadata = grpc.aio.Metadata()
    return grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, metadata, metadata, "no leader")


def test_a_grpc_error_is_etcd_unavailable_and_rotates_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    client = EtcdClient([("127.0.0.1", 1), ("127.0.0.1", 2)])
    channels: list[FakeChannel] = []

    async def connected() -> Any:
        if client._client is None:
            channels.append(FakeChannel())
            client._client = channels[-1]
        return client._client

    async def failing(_: Any) -> None:
        raise unavailable()

    monkeypatch.setattr(client, "_connected", connected)
    try:
        for _ in range(2):
            with pytest.raises(EtcdUnavailable, match="AioRpcError"):
                client.call(failing)
        assert len(channels) == 2 and channels[0].closed  # the failed channel was dropped for a new one
    finally:
        client.close()


def test_any_failure_of_the_etcd_library_is_etcd_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    # aetcd's watch_once raises AttributeError ("'NoneType' object has no attribute 'cancel'") when etcd has no
    # quorum: the node's loops, which expect EtcdUnavailable, died of it.
    client = EtcdClient([("127.0.0.1", 1)])
    channels: list[FakeChannel] = []

    async def connected() -> Any:
        if client._client is None:
            channels.append(FakeChannel())
            client._client = channels[-1]
        return client._client

    async def broken_watch(_: Any) -> None:
        raise AttributeError("'NoneType' object has no attribute 'cancel'")

    async def refused(_: Any) -> None:
        raise Fenced("the write lease or the log's head changed")

    monkeypatch.setattr(client, "_connected", connected)
    try:
        with pytest.raises(EtcdUnavailable, match="AttributeError"):
            client.call(broken_watch)
        assert channels[0].closed
        with pytest.raises(Fenced):
            client.call(refused)  # an answer from etcd, not a failure
    finally:
        client.close()


def test_a_call_wedged_on_the_etcd_thread_is_etcd_unavailable_for_its_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(etcd_client_module, "CALL_TIMEOUT", 0.2)
    client = EtcdClient([("127.0.0.1", 1)])
    release = threading.Event()

    async def connected() -> Any:
        return FakeChannel()

    async def wedged(_: Any) -> None:
        await asyncio.get_running_loop().run_in_executor(None, release.wait)  # ignores cancellation's timeout

    monkeypatch.setattr(client, "_connected", connected)
    monkeypatch.setattr(client, "_guarded", lambda make: make(None))  # what a wedged grpc call looks like

    async def caller() -> None:
        await asyncio.wait_for(client.run(wedged), 10)  # (a TimeoutError here: the call held its caller)

    try:
        with pytest.raises(EtcdUnavailable, match="did not answer in time"):
            asyncio.run(caller())
    finally:
        release.set()
        client.close()


def test_a_call_cancelled_on_the_etcd_thread_is_etcd_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Closing a failed aetcd client cancels the calls still running on it: their callers (a leader checking its
    # lease, the election loop) must hear of a failed call, not be cancelled themselves (the loop ended, and the
    # node stayed leader for good).
    client = EtcdClient([("127.0.0.1", 1)])

    async def connected() -> Any:
        return FakeChannel()

    async def cancelled(_: Any) -> None:
        raise asyncio.CancelledError()

    monkeypatch.setattr(client, "_connected", connected)

    async def caller() -> None:
        await asyncio.wait_for(client.run(cancelled), 10)

    try:
        with pytest.raises(EtcdUnavailable, match="cut off|cancelled"):
            asyncio.run(caller())
        with pytest.raises(EtcdUnavailable, match="cut off|cancelled"):
            client.call(cancelled)
    finally:
        client.close()


def test_a_caller_cancelled_as_its_call_ends_stays_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    # A node's log follower, cancelled as its etcd call answered, went on following for good (asyncio.wait_for on
    # Python 3.11 returns the answer and drops the cancel): the node was elected but never led. Every moment between
    # the answer and the caller's wake-up is tried.
    client = EtcdClient([("127.0.0.1", 1)])
    answers: list[concurrent.futures.Future[int]] = []

    def submit(_: Any) -> concurrent.futures.Future[int]:
        answers.append(concurrent.futures.Future())
        return answers[-1]

    monkeypatch.setattr(client, "submit", submit)

    async def cancelled_after(turns: int) -> str:
        caller = asyncio.ensure_future(client.run(lambda _: asyncio.sleep(0)))
        await asyncio.sleep(0)  # the caller waits for its answer
        answers[-1].set_result(42)
        for _ in range(turns):
            await asyncio.sleep(0)
        if not caller.cancel():
            return "answered before the cancel"
        try:
            await caller
        except asyncio.CancelledError:
            return "cancelled"
        return "cancel lost"

    async def every_moment() -> set[str]:
        return {await cancelled_after(turns) for turns in range(8)}

    try:
        outcomes = asyncio.run(every_moment())
    finally:
        client.close()
    assert outcomes == {"cancelled", "answered before the cancel"}
