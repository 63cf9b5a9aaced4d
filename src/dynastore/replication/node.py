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

Leases (replication/lease.py). A node takes itself as leader only while its etcd lease surely lives. A leader
stopped (SIGSTOP) or cut off past that refuses every request with a retryable 503 from its first moment back,
before any other node can have taken the lease, and its appends are refused by etcd once another leader exists
(the fence), so it can neither serve a stale strong read nor write.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.replication import etcd_client, read_budget
from dynastore.replication.etcd_client import EtcdClient, EtcdUnavailable, LeaderRecord
from dynastore.replication.etcd_config import APPLIED_PREFIX, HEAD_KEY, LEADER_KEY, MEMBERS_PREFIX, parse_endpoints
from dynastore.replication.lease import Lease
from dynastore.replication.replica import Replica, digest_of
from dynastore.replication.replica_reads import ReplicaReads
from dynastore.replication.replicated_log import ReplicatedLog, read_applied
from dynastore.replication.router import READS_PATH, Router
from dynastore.replication.seeding import discard_store, fetch_image, image_of, post_json
from dynastore.storage.kv import StorageError
from dynastore.storage.lmdb_kv import LmdbKV

__all__ = ["ClusterNode", "FOLLOWER", "LEADER", "STARTING"]

log = logging.getLogger("dynastore")

T = TypeVar("T")

STARTING, FOLLOWER, LEADER = "starting", "follower", "leader"
APPLY_CHUNK = 64  # log entries read per request while applying
SELF_REPORT_INTERVAL = 1.0  # seconds between a node's reports of itself (members/, applied/)
FRESH_FOR = 1.5  # seconds a follower answers eventually consistent reads after it last saw itself caught up
BARRIER_WAIT = 1.0  # seconds a read after a forwarded write waits for the replica to apply it


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
        assert config.cluster is not None
        self.config = config
        self.name = config.node_name or socket.gethostname()
        self.url = config.advertise_url or f"http://{config.host}:{config.port}"
        self.etcd = EtcdClient(parse_endpoints(config.cluster))
        self.role = STARTING
        self.leader: LeaderRecord | None = None
        self.app: Dynastore | None = None  # while leading
        self.leader_log: ReplicatedLog | None = None
        self.replica: Replica | None = None  # while following
        self.caught_up_at = 0.0  # time.monotonic() when the apply loop last found nothing more to apply
        self.forwarded_writes = 0  # requests forwarded to the leader (other than eventually consistent reads)
        self._barrier_mark = 0  # forwarded_writes when the replica last caught up with the log's head
        self._applied_event: asyncio.Event | None = None
        self.applied_index = 0  # the newest entry in this node's store (applied or, leading, synced)
        self.log_head = 0  # the newest entry this node knows of
        self.leader_changes = 0
        self.members: list[dict[str, Any]] = []
        self.metrics = None
        self.durability = _CurrentCommitter()
        self.lease = Lease(self.etcd, self._lose)
        self._lost: asyncio.Event | None = None
        self._leader_seen: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._following: asyncio.Task[None] | None = None
        self._open_replica()
        self.protocol = Router(self, config.cluster_secret, authenticated=config.auth == "sigv4")

    # ---- hosting (server.py drives a node as it drives a Dynastore)

    def start(self, loop: asyncio.AbstractEventLoop) -> _CurrentCommitter:
        self._lost = asyncio.Event()
        self._leader_seen = asyncio.Event()
        self._tasks = [
            loop.create_task(self.lease.keep()),
            loop.create_task(self._report()),
            loop.create_task(self._elect()),
            loop.create_task(self._share_reads()),
        ]
        self._following = loop.create_task(self._follow())
        self.role = FOLLOWER
        return self.durability

    def serving_on(self, port: int) -> None:
        self.config = dataclasses.replace(self.config, port=port)  # what a dynastore it leads with reports
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

    @property
    def replica_reads(self) -> ReplicaReads | None:
        """Eventually consistent reads from this node's replica, while it follows."""
        replica = self.replica
        return None if replica is None else replica.reads

    def _open_replica(self) -> None:
        replica = self.replica = Replica(self.config, self.etcd, self._durable)
        self.applied_index = replica.applied_index
        self.caught_up_at = 0.0

    def _close_replica(self) -> None:
        replica, self.replica = self.replica, None
        if replica is not None:
            replica.close()

    def _apply(self, index: int, payload: bytes) -> None:
        """Write log entry ``index`` into the replica."""
        replica = self.replica
        assert replica is not None
        replica.apply(index, payload)
        self.applied_index = index
        self.log_head = max(self.log_head, index)
        applied = self._applied_event
        if applied is not None:
            applied.set()
            self._applied_event = None

    async def _follow(self) -> None:
        """Apply the log as it grows, for as long as this node follows."""
        gap_reported = False
        # Until _lead or stop takes this task away: a cancel alone could be lost (EtcdClient.run says how).
        while self._following is asyncio.current_task():
            start = self.applied_index + 1
            try:
                entries, revision = await self._etcd(etcd_client.read_log, start, APPLY_CHUNK)
                if entries and entries[0][0] != start:
                    if not await self._seed() and not gap_reported:
                        log.error(
                            "the cluster's log no longer holds entry %d (forgotten) and no other node could give "
                            'a copy of its store: this node waits (docs/cluster.md "A replica that fell behind")',
                            start,
                        )
                        gap_reported = True
                    await asyncio.sleep(1)
                    continue
                for index, payload in entries:
                    self._apply(index, payload)
                if len(entries) < APPLY_CHUNK:
                    self.caught_up_at = time.monotonic()  # every entry up to the head at ``revision`` applied
                if not entries:
                    await self._etcd(etcd_client.wait_for_change, HEAD_KEY, revision, 1.0)
            except EtcdUnavailable as e:
                log.debug("applying the log waits for etcd: %s", e)
                await asyncio.sleep(0.3)
            except StorageError as e:
                log.error("this node's replica cannot apply the log: %s", e)
                await asyncio.sleep(1)
            except Exception:
                log.exception("applying the log failed; it goes on")
                await asyncio.sleep(1)

    async def _seed(self) -> bool:
        """Replace this node's store by a copy of the most advanced other node's; whether that worked."""
        peers = sorted(
            (m for m in self.members if m["node"] != self.name and m.get("url")),
            key=lambda m: -int(m.get("appliedIndex") or 0),
        )
        data_dir = str(self.config.data_dir)
        for peer in peers:
            self._close_replica()
            try:
                index = await asyncio.to_thread(fetch_image, str(peer["url"]), data_dir, self.config.cluster_secret)
            except (OSError, ValueError, KeyError) as e:
                log.warning("node %s could not give a copy of its store: %s", peer["node"], e)
                continue
            finally:
                self._open_replica()
            log.info("this node's store now holds the log up to %d (a copy from %s)", index, peer["node"])
            return True
        return False

    def image(self) -> tuple[bytes, int]:
        """A copy of this node's store and the log index it holds (seeding another node)."""
        app, leader_log = self.app, self.leader_log
        if app is not None and leader_log is not None and isinstance(app.kv, LmdbKV):
            with app.kv.snapshot():  # the open batch reaches the file: the file then holds the synced log
                pass
            return image_of(app.kv), leader_log.synced_index
        if self.replica is None:
            raise StorageError("this node has no store open")
        return self.replica.image()

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

    # ---- reads a follower answers itself

    def fresh(self) -> bool:
        """Whether this node may answer eventually consistent reads from its replica: it follows and was caught
        up with the log moments ago (else its reads go to the leader)."""
        return self.role == FOLLOWER and time.monotonic() - self.caught_up_at < FRESH_FOR

    def barrier_needed(self) -> bool:
        """Whether a request was forwarded to the leader since the replica last caught up with the head: a read
        then first waits for the replica to hold the head (a client reads its own writes through one node)."""
        return self.forwarded_writes != self._barrier_mark

    async def catch_up_to_head(self) -> bool:
        """Wait until the replica applied the log's head as of now (a linearizable read of it); False if that
        took longer than ``BARRIER_WAIT`` or etcd did not answer."""
        mark = self.forwarded_writes
        try:
            async with asyncio.timeout(BARRIER_WAIT):
                head, _ = await self._etcd(etcd_client.read_head)
        except (EtcdUnavailable, TimeoutError):
            return False
        deadline = time.monotonic() + BARRIER_WAIT
        while self.applied_index < head:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.role != FOLLOWER:
                return False
            if self._applied_event is None:
                self._applied_event = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._applied_event.wait()
        self._barrier_mark = max(self._barrier_mark, mark)
        return True

    async def _share_reads(self) -> None:
        """Report the reads this follower answered to the leader, and hold its buckets to the leader's
        (replication/read_budget.py)."""
        seen: read_budget.Seen = {}
        counted: ReplicaReads | None = None
        while True:
            await asyncio.sleep(read_budget.REPORT_INTERVAL)
            reads, url = self.replica_reads, self.leader_url()
            if reads is None or url is None or self.role != FOLLOWER:
                continue
            if reads is not counted:
                seen, counted = {}, reads  # a replica opened again meters from zero
            report = read_budget.consumed_since(reads.capacity, seen)
            try:
                pressure = await asyncio.to_thread(post_json, url + READS_PATH, report, self.config.cluster_secret)
            except (OSError, ValueError, TypeError) as e:
                log.debug("the leader did not take this node's read report: %s", e)
                continue
            read_budget.apply_pressure(reads.capacity, pressure, self.config.clock.now())

    def charge_reads(self, report: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The leader: charge the reads a follower answered to its buckets; the partitions under pressure."""
        app = self.app
        if app is None:
            raise StorageError("this node does not lead")
        return read_budget.charge_reads(app.engine.capacity, report, self.config.clock.now())

    # ---- the election

    async def _elect(self) -> None:
        while True:
            try:
                leader, revision = await self._etcd(etcd_client.read_leader)
                if leader is not None and leader.node == self.name:
                    # This node does not lead (it would be in _lead), so the key is its earlier run's, whose
                    # process is gone: give it up rather than wait for that run's lease to lapse.
                    await self._etcd(etcd_client.resign, leader.revision)
                    continue
                self._see_leader(leader)
                lease_id = self.lease.lease_id
                if leader is None and lease_id is not None and self.lease.held():
                    fence = await self._etcd(etcd_client.campaign, lease_id, self.name, self.url)
                    if fence is not None:
                        self._see_leader(LeaderRecord(self.name, self.url, fence))
                        await self._lead(fence)
                        continue
                await self._etcd(etcd_client.wait_for_change, LEADER_KEY, revision, 1.0)
            except EtcdUnavailable:
                await asyncio.sleep(0.3)
            except Exception:
                log.exception("the election loop failed; it goes on")  # never leave the node without one
                await asyncio.sleep(1)

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

    @property
    def leading(self) -> Dynastore | None:
        """The dynastore this node runs while it leads."""
        return self.app

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
            app = Dynastore(self.config, leader_log, cluster_status=self.status)
            self._log_opening_writes(app)
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

    def _log_opening_writes(self, app: Dynastore) -> None:
        """Opening a dynastore may write before group commit batches its writes (ending transfers an earlier
        leader left running), and such writes reach the store's file at once: make them durable in the log now.
        If that fails the file holds writes the log does not, so it is thrown away (the node then catches up
        from the log, or is seeded from another node's store). Raises ``StorageError``."""
        if not app.kv.commit_seq:
            return
        try:
            app.kv.flush()
        except StorageError:
            app.close()
            discard_store(str(self.config.data_dir))
            raise

    async def _hold_lead(self, fence: int, lost: asyncio.Event) -> None:
        """Return once this node may no longer lead."""
        checks = 0
        while not lost.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.25):  # (not wait_for, which may lose a cancel: EtcdClient.run)
                    await lost.wait()
            leader_log = self.leader_log
            if leader_log is not None:
                self.applied_index = self.log_head = leader_log.synced_index
            if time.monotonic() > self.lease.valid_until:
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
            except Exception:
                log.exception("stopping the leading dynastore failed")
                app.kv.close()  # the store's directory must be free for the replica
            self.durability.current = None
            self.leader_log = None
        if fence is not None:
            try:
                await self._etcd(etcd_client.resign, fence)
            except EtcdUnavailable:
                # Its lease must lapse instead (a new one is taken after it), or the leader key attached to it
                # would name this follower as the leader for as long as it runs.
                self.lease.let_lapse()
        while True:
            try:
                self._open_replica()
                break
            except StorageError as e:
                log.error("this node cannot open its replica (it tries again): %s", e)
                await asyncio.sleep(1)
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
        # Every node that ever joined holds an applied/ record, so the log is never trimmed past a node that has
        # not reported yet (it would have to be seeded from a copy instead).
        self._durable(read_applied(str(self.config.data_dir)))
        while True:
            report = json.dumps({"url": self.url, "role": self.role, "appliedIndex": self.applied_index}).encode()
            lease_id = self.lease.lease_id
            try:
                if lease_id is not None:
                    await self._etcd(etcd_client.put, MEMBERS_PREFIX + self.name.encode(), report, lease_id)
                members = await self._etcd(etcd_client.read_prefix, MEMBERS_PREFIX)
                self.members = [{"node": name.decode(), **json.loads(value)} for name, value in members]
                if self.role != LEADER:
                    head, _ = await self._etcd(etcd_client.read_head)
                    self.log_head = max(self.log_head, head)
            except (EtcdUnavailable, ValueError, KeyError):
                pass
            await asyncio.sleep(SELF_REPORT_INTERVAL)

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
            "forwardedRequests": self.protocol.forwarder.forwarded,
            "replicaReads": self.protocol.replica_reads,
            "log": self._log_figures(),
            "nodes": [
                {"node": m["node"], "url": m.get("url"), "role": m.get("role"), "appliedIndex": m.get("appliedIndex")}
                for m in self.members
            ],
        }

    def _log_figures(self) -> dict[str, Any] | None:
        """The leader's appends to etcd's log so far (None on a follower)."""
        leader_log = self.leader_log
        if leader_log is None:
            return None
        return {
            "transactions": leader_log.transactions,
            "entries": leader_log.entries_sent,
            "bytes": leader_log.bytes_sent,
            "appendSeconds": round(leader_log.append_seconds, 3),
        }

    def digest(self) -> dict[str, Any]:
        """A hash of every key and value of this node's store, and the log index it holds."""
        store = self.app.kv if self.app is not None else None if self.replica is None else self.replica.store
        index = self.applied_index
        return {"node": self.name, "appliedIndex": index, "digest": "" if store is None else digest_of(store)}

    async def _etcd(self, operation: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``operation(client, *args)`` run on the etcd thread (replication/etcd_client.py's operations)."""
        return await self.etcd.run(lambda client: operation(client, *args))
