"""An in-memory stand-in for the node's ``EtcdClient``: it runs the real operations of replication/etcd_client.py
against a dict that keeps etcd's semantics for what they use (create revisions, versions, transactions with
compares, etcd's limit on operations per transaction)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from dynastore.replication.etcd_client import EtcdUnavailable, Fenced
from dynastore.replication.etcd_config import HEAD_KEY, LEADER_KEY, LOG_PREFIX, log_key

T = TypeVar("T")

ETCD_MAX_TXN_OPS = 128  # etcd's default --max-txn-ops: a transaction with more operations is refused


class TooManyOperations(Exception):
    """What etcd answers a transaction with more than ``--max-txn-ops`` operations (a grpc error)."""


class _Key:
    __slots__ = ("value", "create_revision", "version")

    def __init__(self, value: bytes, create_revision: int) -> None:
        self.value = value
        self.create_revision = create_revision
        self.version = 1


class _Compare:
    def __init__(self, read: Callable[[], Any]) -> None:
        self._read = read

    def __eq__(self, expected: object) -> Callable[[], bool]:  # type: ignore[override]
        return lambda: bool(self._read() == expected)

    __hash__ = None  # type: ignore[assignment]


class _Transactions:
    def __init__(self, store: FakeEtcdStore) -> None:
        self._store = store

    def create(self, key: bytes) -> _Compare:
        return _Compare(lambda: self._store.keys[key].create_revision if key in self._store.keys else 0)

    def value(self, key: bytes) -> _Compare:
        return _Compare(lambda: self._store.keys[key].value if key in self._store.keys else None)

    def version(self, key: bytes) -> _Compare:
        return _Compare(lambda: self._store.keys[key].version if key in self._store.keys else 0)

    def put(self, key: bytes, value: bytes, lease: int | None = None) -> tuple[bytes, bytes]:
        return key, value


class FakeEtcdStore:
    """The keys, the store's revision, and every transaction that succeeded (its puts)."""

    def __init__(self) -> None:
        self.keys: dict[bytes, _Key] = {}
        self.revision = 1
        self.transactions = _Transactions(self)
        self.committed: list[list[tuple[bytes, bytes]]] = []

    def put_now(self, key: bytes, value: bytes) -> int:
        """Put ``key`` outside any transaction; its create revision."""
        self.revision += 1
        known = self.keys.get(key)
        if known is None:
            self.keys[key] = _Key(value, self.revision)
        else:
            known.value, known.version = value, known.version + 1
        return self.keys[key].create_revision

    def take_lease(self, node: str) -> int:
        """Make ``node`` the holder of the write lease: the leader key's create revision (its fence)."""
        self.keys.pop(LEADER_KEY, None)
        return self.put_now(LEADER_KEY, f"{node} http://{node}".encode())

    async def transaction(
        self, compare: list[Callable[[], bool]], success: list[tuple[bytes, bytes]], failure: list[Any]
    ) -> tuple[bool, list[Any]]:
        if len(success) > ETCD_MAX_TXN_OPS:
            raise TooManyOperations("etcdserver: too many operations in txn request")
        if not all(check() for check in compare):
            return False, []
        self.revision += 1
        for key, value in success:
            known = self.keys.get(key)
            if known is None:
                self.keys[key] = _Key(value, self.revision)
            else:
                known.value, known.version = value, known.version + 1
        self.committed.append(success)
        return True, []

    def log(self) -> dict[int, bytes]:
        """The log entries etcd holds, by index."""
        return {int(k[len(LOG_PREFIX) :]): v.value for k, v in self.keys.items() if k.startswith(LOG_PREFIX)}

    def head(self) -> int:
        return int(self.keys[HEAD_KEY].value) if HEAD_KEY in self.keys else 0


class FakeEtcd:
    """``EtcdClient.call`` over a ``FakeEtcdStore``; ``unavailable`` makes every call fail as etcd down does."""

    def __init__(self) -> None:
        self.store = FakeEtcdStore()
        self.unavailable = False
        self.calls = 0

    def call(self, make: Callable[[Any], Awaitable[T]], timeout: float = 4.0) -> T:
        self.calls += 1
        if self.unavailable:
            raise EtcdUnavailable("etcd did not answer in time")
        try:
            return asyncio.run(_awaited(make(self.store)))
        except TooManyOperations as e:
            raise EtcdUnavailable(f"etcd: {e}") from e  # as EtcdClient._guarded reports a grpc error

    def append(self, fence: int, head: int, entries: list[tuple[int, bytes]]) -> None:
        """``EtcdClient.append``: the transaction etcd_client.append_request builds, run against the store."""
        self.calls += 1
        if self.unavailable:
            raise EtcdUnavailable("etcd did not answer in time")
        store = self.store
        puts = [(log_key(index), payload) for index, payload in entries] + [(HEAD_KEY, b"%d" % entries[-1][0])]
        if len(puts) > ETCD_MAX_TXN_OPS:
            raise EtcdUnavailable("etcd: INVALID_ARGUMENT: etcdserver: too many operations in txn request")
        head_now = store.keys[HEAD_KEY].value if HEAD_KEY in store.keys else None
        leader = store.keys.get(LEADER_KEY)
        if leader is None or leader.create_revision != fence or head_now != (b"%d" % head if head else None):
            raise Fenced("the write lease or the log's head changed")
        asyncio.run(store.transaction([], puts, []))


async def _awaited(work: Awaitable[T]) -> T:
    return await work
