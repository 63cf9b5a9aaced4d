"""A node of a replicated cluster (docs/cluster.md): a replica of the store that applies etcd's log, a candidate
for the write lease, and a request router.

Roles. Every node starts as a follower: it opens its store over a following ``ReplicatedLog`` and applies the log
from the index its store holds durably. It campaigns for the write lease (the leader key, attached to its etcd
lease) whenever nobody holds it. The node that wins catches up to the log's head, closes its replica and opens a
whole dynastore (app.py) on the same files, now committing through a leading ``ReplicatedLog`` fenced by the
leader key: from then on it executes every write and runs the background work. It leads until its append is
refused or fails, its lease lapses or the leader key is no longer the one it created; it then stops its
dynastore (writes not yet in etcd are taken back and answered as refused or in doubt), gives up the key, and
follows again from what its store holds durably.

Leases. The node refreshes its etcd lease every ``KEEPALIVE_INTERVAL``; a refresh sent at ``t`` guarantees the
lease lives until ``t + LEASE_TTL`` at least, so the node takes itself as leader only until
``t + LEASE_TTL - LEASE_MARGIN``. A leader stopped (SIGSTOP) or cut off past that refuses every request with a
retryable 503 from its first moment back, before any other node can have taken the lease, and its appends are
refused by etcd once another leader exists (the fence), so it can neither serve a stale strong read nor write.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.replication import etcd_client
from dynastore.replication.etcd_client import EtcdClient, EtcdUnavailable, LeaderRecord, parse_endpoints
from dynastore.replication.etcd_config import APPLIED_PREFIX, HEAD_KEY, LEADER_KEY, MEMBERS_PREFIX
from dynastore.replication.replicated_log import ReplicatedLog, read_applied
from dynastore.storage.durability import decode_batch
from dynastore.storage.kv import StorageError
from dynastore.storage.lmdb_kv import LmdbKV

__all__ = ["ClusterNode", "FOLLOWER", "LEADER", "STARTING"]

log = logging.getLogger("dynastore")

T = TypeVar("T")

STARTING, FOLLOWER, LEADER = "starting", "follower", "leader"
LEASE_TTL = 2  # seconds: how long after its last refresh a silent node keeps the write lease
LEASE_MARGIN = 0.5  # seconds before its lease could lapse that a leader stops serving
KEEPALIVE_INTERVAL = 0.4
APPLY_CHUNK = 64  # log entries read per request while applying
REPORT_INTERVAL = 1.0  # seconds between a node's reports of itself (members/, applied/)
COMPACT_INTERVAL = 10.0  # seconds between the leader's trims of the log etcd keeps
_DIGEST_END = b"\xff" * 512


class _CurrentCommitter:
    """What the HTTP layer asks about durability (http_server.Durability): the leading dynastore's group
    committer while this node leads, else nothing to wait for (a follower's responses report no commit)."""

    def __init__(self) -> None:
        self.current: Any = None

    @property
    def durable_seq(self) -> int:
        current = self.current
        return 1 << 62 if current is None else int(current.durable_seq)

    def poll(self) -> None:
        if self.current is not None:
            self.current.poll()

    def when_durable(self, seq: int, callback: Callable[[BaseException | None], None]) -> None:
        if self.current is None:
            callback(None)
        else:
            self.current.when_durable(seq, callback)


class ClusterNode:
    """One node: follows, campaigns, leads; ``protocol`` answers every request (replication/router.py)."""

    def __init__(self, config: Config) -> None:
        from dynastore.replication.router import Router  # the router reads this node's state

        assert config.cluster is not None
        self.config = config
        self.name = config.node_name or socket.gethostname()
        self.url = config.advertise_url or f"http://{config.host}:{config.port}"
        self.etcd = EtcdClient(parse_endpoints(config.cluster))
        self.role = STARTING
        self.leader: LeaderRecord | None = None
        self.app: Dynastore | None = None  # while leading
        self.leader_log: ReplicatedLog | None = None
        self.replica: LmdbKV | None = None  # while following
        self.replica_log: ReplicatedLog | None = None
        self.applied_index = 0  # the newest entry in this node's store (applied or, leading, synced)
        self.log_head = 0  # the newest entry this node knows of
        self.leader_changes = 0
        self.lease_valid_until = 0.0
        self.members: list[dict[str, Any]] = []
        self.metrics = None
        self.durability = _CurrentCommitter()
        self._lease_id: int | None = None
        self._lost: asyncio.Event | None = None
        self._leader_seen: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._following: asyncio.Task[None] | None = None
        self._open_replica()
        self.protocol = Router(self)

    # ---- hosting (server.py drives a node as it drives a Dynastore)

    def start(self, loop: asyncio.AbstractEventLoop) -> _CurrentCommitter:
        self._lost = asyncio.Event()
        self._leader_seen = asyncio.Event()
        self._tasks = [
            loop.create_task(self._keep_lease()),
            loop.create_task(self._report()),
            loop.create_task(self._elect()),
        ]
        self._following = loop.create_task(self._follow())
        self.role = FOLLOWER
        return self.durability

    def serving_on(self, port: int) -> None:
        if self.config.advertise_url is None:
            self.url = f"http://{self.config.host}:{port}"
        if self.app is not None:
            self.app.serving_on(port)

    async def stop(self) -> None:
        for task in [*self._tasks, *([self._following] if self._following else [])]:
            task.cancel()
        self._tasks, self._following = [], None
        app, self.app = self.app, None
        if app is not None:
            self.role = FOLLOWER
            await app.stop()
            self._quietly(self._resign())
        self.close()

    def close(self) -> None:
        if self.app is not None:
            self.app.close()
            self.app = None
        self._close_replica()
        self.protocol.close()
        self.etcd.close()

    def _quietly(self, work: Awaitable[None]) -> None:
        """Start best-effort etcd work that nobody waits for."""
        task = asyncio.ensure_future(work)
        task.add_done_callback(lambda done: done.cancelled() or done.exception())

    # ---- the replica

    def _open_replica(self) -> None:
        data_dir = str(self.config.data_dir)
        self.replica_log = ReplicatedLog(data_dir, self.etcd, on_applied=self._durable)
        self.replica = LmdbKV(self.config.data_dir, durable_log=self.replica_log)
        self.applied_index = read_applied(data_dir)

    def _close_replica(self) -> None:
        replica, self.replica = self.replica, None
        if replica is not None:
            replica.close()
        self.replica_log = None

    def _apply(self, index: int, payload: bytes) -> None:
        """Write log entry ``index`` into the replica (one storage transaction)."""
        replica, replica_log = self.replica, self.replica_log
        assert replica is not None and replica_log is not None
        operations = decode_batch(memoryview(payload))
        if operations:
            replica_log.expect(index)
            with replica.write() as txn:
                for key, value in operations:
                    if value is None:
                        txn.delete(key)
                    else:
                        txn.put(key, value)
        self.applied_index = index
        self.log_head = max(self.log_head, index)

    async def _follow(self) -> None:
        """Apply the log as it grows, for as long as this node follows."""
        gap_reported = False
        while True:
            start = self.applied_index + 1
            try:
                entries, revision = await self._etcd(etcd_client.read_log, start, APPLY_CHUNK)
                if entries and entries[0][0] != start:
                    if not gap_reported:
                        log.error(
                            "the cluster's log no longer holds entry %d (compacted): this node needs its store "
                            "seeded from a replica (docs/cluster.md \"A replica that fell behind\")",
                            start,
                        )
                        gap_reported = True
                    await asyncio.sleep(5)
                    continue
                for index, payload in entries:
                    self._apply(index, payload)
                if not entries:
                    await self._etcd(etcd_client.wait_for_change, HEAD_KEY, revision, 1.0)
            except EtcdUnavailable as e:
                log.debug("applying the log waits for etcd: %s", e)
                await asyncio.sleep(0.3)
            except StorageError as e:
                log.error("this node's replica cannot apply the log: %s", e)
                await asyncio.sleep(1)

    async def _catch_up(self) -> int:
        """Apply every entry up to the log's head (a linearizable read); returns the head."""
        head, _ = await self._etcd(etcd_client.read_head)
        while self.applied_index < head:
            start = self.applied_index + 1
            entries, _ = await self._etcd(etcd_client.read_log, start, APPLY_CHUNK)
            if not entries or entries[0][0] != start:
                raise StorageError(f"the cluster's log does not hold entry {start}: this store cannot lead")
            for index, payload in entries:
                self._apply(index, payload)
        self.log_head = head
        return head

    # ---- the lease and the election

    async def _keep_lease(self) -> None:
        while True:
            lease_id = self._lease_id
            if lease_id is None:
                try:
                    sent = time.monotonic()
                    lease_id = self._lease_id = await self._etcd(etcd_client.grant_lease, LEASE_TTL)
                    self.lease_valid_until = sent + LEASE_TTL - LEASE_MARGIN
                except EtcdUnavailable:
                    await asyncio.sleep(0.3)
                    continue
            sent = time.monotonic()
            try:
                ttl = await self._etcd(etcd_client.keep_alive, lease_id)
            except EtcdUnavailable:
                ttl = None
            if ttl is not None:
                if ttl <= 0:
                    self._lease_id = None
                    self._lose("its etcd lease expired")
                else:
                    self.lease_valid_until = sent + min(ttl, LEASE_TTL) - LEASE_MARGIN
            await asyncio.sleep(KEEPALIVE_INTERVAL)

    async def _elect(self) -> None:
        while True:
            try:
                leader, revision = await self._etcd(etcd_client.read_leader)
                self._see_leader(leader)
                lease_id = self._lease_id
                if leader is None and lease_id is not None and time.monotonic() < self.lease_valid_until:
                    fence = await self._etcd(etcd_client.campaign, lease_id, self.name, self.url)
                    if fence is not None:
                        self._see_leader(LeaderRecord(self.name, self.url, fence))
                        await self._lead(fence)
                        continue
                await self._etcd(etcd_client.wait_for_change, LEADER_KEY, revision, 1.0)
            except EtcdUnavailable:
                await asyncio.sleep(0.3)

    def _see_leader(self, leader: LeaderRecord | None) -> None:
        known = self.leader
        if (leader is None) != (known is None) or (
            leader is not None and known is not None and leader.revision != known.revision
        ):
            self.leader = leader
            if leader is not None:
                self.leader_changes += 1
                log.info("node %s leads the cluster (%s)", leader.node, leader.url)
            seen = self._leader_seen
            if seen is not None:
                seen.set()
                self._leader_seen = asyncio.Event()

    def leader_changed(self) -> asyncio.Event:
        """An event set at the next change of the known leader (forwarding waits on it)."""
        if self._leader_seen is None:
            self._leader_seen = asyncio.Event()
        return self._leader_seen

    def leader_url(self) -> str | None:
        """Where to forward requests: the leader's URL, unless it is this node (then it is not serving yet)."""
        leader = self.leader
        if leader is None or leader.node == self.name:
            return None
        return leader.url

    async def _lead(self, fence: int) -> None:
        loop = asyncio.get_running_loop()
        following, self._following = self._following, None
        if following is not None:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
        lost = self._lost = asyncio.Event()
        try:
            head = await self._catch_up()
            self._close_replica()
            leader_log = ReplicatedLog(
                str(self.config.data_dir),
                self.etcd,
                fence=fence,
                on_applied=self._durable,
                on_lost=lambda error: self._lose_from_thread(loop, error),
            )
            leader_log.start_at(head)
            app = Dynastore(self.config, leader_log)
        except (EtcdUnavailable, StorageError) as e:
            log.error("node %s could not take the lead: %s", self.name, e)
            await self._step_down(None)
            return
        self.leader_log = leader_log
        self.durability.current = app.start(loop)
        self.app = app
        self.role = LEADER
        log.info("this node (%s) leads from log index %d", self.name, head)
        await self._hold_lead(fence, lost)
        await self._step_down(app)

    async def _hold_lead(self, fence: int, lost: asyncio.Event) -> None:
        """Return once this node may no longer lead."""
        checks = 0
        while not lost.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lost.wait(), 0.25)
            leader_log = self.leader_log
            if leader_log is not None:
                self.applied_index = self.log_head = leader_log.synced_index
            if time.monotonic() > self.lease_valid_until:
                self._lose("its lease may have lapsed")
            checks += 1
            if checks % 4 == 0:
                try:
                    leader, _ = await self._etcd(etcd_client.read_leader)
                except EtcdUnavailable:
                    continue
                if leader is None or leader.revision != fence:
                    self._lose("the leader key is no longer its own")
                elif checks % 40 == 0:
                    self._quietly(self._trim_log())

    def _lose_from_thread(self, loop: asyncio.AbstractEventLoop, error: BaseException) -> None:
        loop.call_soon_threadsafe(self._lose, f"the log refused an append: {error}")

    def _lose(self, why: str) -> None:
        if self.role == LEADER and self._lost is not None and not self._lost.is_set():
            log.warning("this node (%s) stops leading: %s", self.name, why)
            self._lost.set()

    async def _step_down(self, app: Dynastore | None) -> None:
        self.role = FOLLOWER
        fence = None if self.leader is None or self.leader.node != self.name else self.leader.revision
        if app is not None:
            self.app = None
            try:
                await app.stop()
            except StorageError as e:
                log.error("stopping the leading dynastore: %s", e)
            self.durability.current = None
            self.leader_log = None
        if fence is not None:
            with contextlib.suppress(EtcdUnavailable):  # else its lease lapses instead
                await self._etcd(etcd_client.resign, fence)
        self._open_replica()
        self._following = asyncio.get_running_loop().create_task(self._follow())

    async def _resign(self) -> None:
        leader = self.leader
        if leader is not None and leader.node == self.name:
            fence = leader.revision
            await self._etcd(etcd_client.resign, fence)

    # ---- reports and the log's trimming

    def _durable(self, index: int) -> None:
        """The store's file holds entries up to ``index`` durably: tell etcd, which may then forget them."""
        key = APPLIED_PREFIX + self.name.encode()
        value = str(index).encode()
        self.etcd.submit(lambda client: etcd_client.put(client, key, value))

    async def _report(self) -> None:
        while True:
            report = json.dumps({"url": self.url, "role": self.role, "appliedIndex": self.applied_index}).encode()
            lease_id = self._lease_id
            try:
                if lease_id is not None:
                    await self._etcd(etcd_client.put, MEMBERS_PREFIX + self.name.encode(), report, lease_id)
                members = await self._etcd(etcd_client.read_prefix, MEMBERS_PREFIX)
                self.members = [{"node": name.decode(), **json.loads(value)} for name, value in members]
                if self.role != LEADER:
                    head, _ = await self._etcd(etcd_client.read_head)
                    self.log_head = max(self.log_head, head)
            except (EtcdUnavailable, ValueError):
                pass
            await asyncio.sleep(REPORT_INTERVAL)

    async def _trim_log(self) -> None:
        """Forget the log entries every replica's store holds durably."""
        applied = await self._etcd(etcd_client.read_prefix, APPLIED_PREFIX)
        if not applied:
            return
        oldest_needed = min(int(value) for _, value in applied) + 1
        oldest = await self._etcd(etcd_client.oldest_entry)
        if oldest is not None and oldest < oldest_needed:
            await self._etcd(etcd_client.forget_log_before, oldest_needed)

    # ---- what the admin endpoints report

    def status(self) -> dict[str, Any]:
        leader = self.leader
        return {
            "node": self.name,
            "url": self.url,
            "role": self.role,
            "leader": None if leader is None else leader.node,
            "leaderUrl": None if leader is None else leader.url,
            "appliedIndex": self.applied_index,
            "logHead": max(self.log_head, self.applied_index),
            "leaderChanges": self.leader_changes,
            "nodes": [
                {"node": m["node"], "url": m.get("url"), "role": m.get("role"), "appliedIndex": m.get("appliedIndex")}
                for m in self.members
            ],
        }

    def digest(self) -> dict[str, Any]:
        """A hash of every key and value of this node's store, and the log index it holds."""
        store = self.app.kv if self.app is not None else self.replica
        index = self.applied_index
        sha = hashlib.sha256()
        if store is not None:
            with store.read() as txn:
                for key, value in txn.iter_range(b"", _DIGEST_END):
                    sha.update(len(key).to_bytes(4, "big") + key + len(value).to_bytes(4, "big") + value)
        return {"node": self.name, "appliedIndex": index, "digest": sha.hexdigest()}

    async def _etcd(self, operation: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``operation(client, *args)`` run on the etcd thread (replication/etcd_client.py's operations)."""
        return await self.etcd.run(lambda client: operation(client, *args))
