"""The composition root: one dynastore built from a Config, every component an explicit, typed field.

``Dynastore(config)`` opens the store over its durable log (``durable_log``) and builds the catalog, the engine's
components (engine/context.py), the request-side services (api/services.py) and the protocol that answers
requests. ``start(loop)`` begins its background work on an asyncio loop (group commit, GSI propagation,
housekeeping, triggers, the replication of global tables) and ``stop()`` ends it and closes the store. It knows
nothing of sockets: server.py adapts it to HTTP, and any other host (in a test process, a cluster node) can drive
the same object.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from dynastore.admin import routes
from dynastore.api.services import RequestServices
from dynastore.config import Config, policies_path
from dynastore.engine import backups, continuous_backups, indexes, restore, retention, ttl
from dynastore.engine.backups import create_system_backup
from dynastore.engine.capacity.state import Capacity
from dynastore.engine.changelog import ChangeLog, Consumer
from dynastore.engine.context import Context, Engine
from dynastore.engine.gsi_propagation import GsiPropagation
from dynastore.engine.index_state import IndexState
from dynastore.engine.key_spaces import TableSpaces
from dynastore.engine.log_consumers import StreamRecords
from dynastore.engine.pitr_archive import PointInTimeArchive, archive_in
from dynastore.engine.pitr_images import SnapshotImages
from dynastore.engine.progress import Jobs
from dynastore.engine.recovery_state import RecoveryState
from dynastore.engine.stream_shards import StreamShards
from dynastore.engine.transaction_locks import TransactionLocks
from dynastore.engine.transfers import Transfers
from dynastore.expressions.cache import ExpressionCache, KeyTemplates
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.global_tables.links import RemoteLinkMaker
from dynastore.global_tables.peers import remote_link_maker
from dynastore.global_tables.replicator import GlobalReplicator, links_for
from dynastore.global_tables.strong import StrongTables
from dynastore.global_tables.strong_log import StrongLog
from dynastore.partiql.cache import StatementCache
from dynastore.protocol import dispatch
from dynastore.protocol.metrics import Metrics, RequestMetrics, directory_bytes
from dynastore.protocol.protocol import Protocol
from dynastore.protocol.request_log import LoggedProtocol, RequestLog
from dynastore.security.authenticator import Authenticator
from dynastore.security.caller import AnonymousCallers, anonymous
from dynastore.security.credentials import CredentialStore, seeded_admin, store_path
from dynastore.security.identity_policies import GROUP, USER, IdentityPolicies
from dynastore.security.sts import StsService
from dynastore.storage.backup_files import BackupFiles
from dynastore.storage.buckets import buckets_of
from dynastore.storage.catalog import Catalog
from dynastore.storage.durability import DurableLog
from dynastore.storage.group_commit import GroupCommitter
from dynastore.storage.kv import KV, StorageError
from dynastore.triggers.service import Triggers
from dynastore.triggers.spec import TriggerSpec, parse_triggers

__all__ = [
    "Dynastore",
    "build_context",
    "build_engine",
    "build_replicator",
    "durable_log",
    "open_storage",
    "remote_links",
    "request_services",
]

log = logging.getLogger("dynastore")

MAINTENANCE_INTERVAL = 0.5  # seconds between housekeeping passes
STRONG_FOLLOW_INTERVAL = 0.05  # seconds between two rounds of applying the strong log's new records
REPLICATION_INTERVAL = 0.02  # seconds the replicator of global tables rests after a round that moved nothing
PROPAGATION_PAUSE = 0.001  # seconds the GSI propagator waits after a wake-up, to batch concurrent writes


def durable_log(config: Config) -> DurableLog:
    """Where a commit becomes durable (storage/durability.py): the local write-ahead log in the data directory.
    A replicated log is built here instead, and nothing else changes."""
    from dynastore.storage.local_log import LOG_DIRECTORY, LocalLog

    return LocalLog(str(config.data_dir / LOG_DIRECTORY))


def open_storage(config: Config, log_: DurableLog | None = None) -> KV:
    """The store ``config`` names, made durable through ``log_`` (default: ``durable_log(config)``)."""
    if config.in_memory:
        from dynastore.storage.memory_kv import MemoryKV

        return MemoryKV()
    from dynastore.storage.lmdb_kv import LmdbKV

    return LmdbKV(
        config.data_dir,
        ordered_sync=config.crash_safe,
        reserve_bytes=config.disk_reserve,
        durable_log=durable_log(config) if log_ is None else log_,
    )


def authenticator(config: Config) -> Authenticator | None:
    """--auth sigv4: the verifier of every request, over the credentials store and the seeded admin (if any)."""
    if config.auth != "sigv4":
        return None
    path = config.users_file
    if path is None and not config.in_memory:
        path = store_path(config.data_dir)
    seed = None
    if config.admin_access_key_id and config.admin_secret_access_key:
        seed = seeded_admin(config.admin_access_key_id, config.admin_secret_access_key, config.account_id)
    return Authenticator(CredentialStore(path, config.region, seed), config.region, config.clock)


def request_services(
    config: Config, clock: HybridClock | None = None, strong_log: StrongLog | None = None
) -> RequestServices:
    """What requests use beside the engine (api/services.py): the PartiQL statement cache, the identity policies
    of users and groups (read from the policies file, if any, on each change of it), and the writes and strong
    reads of global tables with multi-region strong consistency (``clock``: the replicator's hybrid clock;
    ``strong_log``: the strong log their writes are committed to, None when every region is this server's)."""
    strong = StrongTables(clock or HybridClock(config.clock), strong_log, frozenset(config.peers))
    return RequestServices(StatementCache(), IdentityPolicies(policies_path(config)), strong)


def build_engine(config: Config, kv: KV, catalog: Catalog) -> Engine:
    """The engine's components over an open store and its catalog, every one built here, the engine's change log
    consumers registered: one engine per dynastore, whatever the namespaces."""
    progress = Jobs(config.clock)  # the long work running now (engine/progress.py)
    capacity = Capacity(config, kv, catalog, progress)
    shards = StreamShards(kv, capacity)
    changelog = ChangeLog(kv, config.clock)
    propagation = GsiPropagation(kv, config.clock, config.gsi_propagation_delay)
    changelog.register(propagation)
    changelog.marked = propagation.marked  # the watermark GSI reads wait for, and the propagator's wake-up
    streams = StreamRecords(shards, capacity)
    changelog.register(streams, placer=streams)
    archive = PointInTimeArchive(kv, SnapshotImages())  # point-in-time recovery's archive
    archive.system_backup = create_system_backup  # what a deleted table with recovery on leaves
    changelog.register(archive)
    return Engine(
        config,
        kv,
        catalog,
        capacity=capacity,
        indexes=IndexState(config),
        changelog=changelog,
        propagation=propagation,
        shards=shards,
        locks=TransactionLocks(kv, config.clock, config.transaction_lock_hold),
        ttl_cursors={},
        expressions=ExpressionCache(),
        key_templates=KeyTemplates(),
        table_spaces=TableSpaces(),
        recovery=RecoveryState(BackupFiles.open(None if config.in_memory else config.data_dir)),
        progress=progress,
    )


def remote_links(config: Config) -> RemoteLinkMaker:
    """How the replicator reaches a region served by another dynastore (``config.peers``): a RemoteLink over HTTP,
    signed with the key configured for peers (global_tables/peers.py)."""
    return remote_link_maker(config)


def build_replicator(ctx: Context, config: Config) -> GlobalReplicator:
    """The replicator of global tables (global_tables/replicator.py), registered with the change log as a
    consumer and as the versioner of the changes of the tables it follows."""
    clock = HybridClock(config.clock)
    links = links_for(ctx, config.peers, clock, remote_links(config))
    replicator = GlobalReplicator(ctx, links, clock, config.tombstone_retention_seconds)
    ctx.changelog.register(replicator, versioner=replicator)
    return replicator


def build_context(config: Config, kv: KV, catalog: Catalog) -> Context:
    """A new engine's context of its default namespace, called by the anonymous caller of a server without
    authentication (what an embedding host or a test drives the engine with)."""
    caller = anonymous(config.account_id, config.region)
    return build_engine(config, kv, catalog).context(catalog.namespace, caller.origin)


class Dynastore:
    """One dynastore: owns its store from construction until ``close()`` (or ``stop()``). ``log_``: the durable
    log its store commits through (a cluster node's replicated log; default: the configuration's)."""

    def __init__(
        self,
        config: Config,
        log_: DurableLog | None = None,
        cluster_status: Callable[[], dict[str, Any]] | None = None,
        strong_log: StrongLog | None = None,
    ) -> None:
        self.config = config
        self._cluster_status = cluster_status  # a cluster node's status (GET /dynastore/cluster, /metrics)
        self.kv = open_storage(config, log_)
        self.catalog = Catalog.load(self.kv, config)
        # Writes the store took back after a storage failure may have changed tables: read them again.
        self.kv.watch_losses(lambda durable, lost_through: self.catalog.reload())
        # The engine (one set of components), as a context of the default namespace called by the account itself:
        # what hosts, admin endpoints, triggers and background work drive it with (TTL deletions are the
        # service's: engine/ttl.py).
        self.engine = build_context(config, self.kv, self.catalog)
        self.replicator = build_replicator(self.engine, config)  # global tables
        self.services = request_services(config, self.replicator.clock, strong_log)
        # ... and the stream shards they may have opened or closed: read them again when next needed.
        self.kv.watch_losses(lambda durable, lost_through: self.engine.shards.clear())
        # Configured triggers (a wrong one raises TriggerConfigError); add_trigger adds Python ones before start.
        self.triggers = Triggers(self.engine, parse_triggers(config.triggers, file=config.triggers_file))
        for runner in self.triggers.runners:
            self.engine.changelog.register(runner)
        self.metrics = self._metrics()
        self.protocol = self._protocol()
        self.protocol.authenticator = authenticator(config)
        if self.protocol.authenticator is not None:  # the STS endpoint beside DynamoDB's (security/sts.py)
            self.protocol.sts = StsService(
                self.protocol.authenticator, self.protocol.authenticator.store, self.services.policies, config.clock
            )
        if self.protocol.sts is not None and self.metrics is not None:
            self.metrics.oidc_key_fetches = self.protocol.sts.jwks.counts
        self.protocol.anonymous = AnonymousCallers(config.account_id, config.region, shared=config.shared_namespace)
        self.committer: GroupCommitter | None = None
        self._tasks: list[asyncio.Task[None]] = []
        # Exports and imports (engine/transfers.py): those an earlier run left unfinished end FAILED now.
        reports = None if config.in_memory else config.data_dir / "imports"
        self.transfers = Transfers(self.engine, buckets_of(config), reports)
        if self.kv.writable:
            self.transfers.recover()

    def _protocol(self) -> Protocol:
        operations = dispatch.bind(self.engine, self.services)
        admin = routes.bind(self.engine, self.triggers, self._cluster_status, self.replicator.clock)
        # Read twice a request (protocol.py: whether it committed a write); a partial of getattr runs in C, where a
        # function defined here would run as Python even in a compiled build (this module is not compiled).
        commit_seq: Callable[[], int] = functools.partial(getattr, self.kv, "commit_seq")
        if not self.config.log_requests:
            return Protocol(
                operations,
                region=self.config.region,
                commit_seq=commit_seq,
                extension=admin,
                not_served=dispatch.not_served(),
                streams_operations=dispatch.bind_streams(self.engine, self.services),
                metrics=self.metrics,
                account_id=self.config.account_id,
            )
        return LoggedProtocol(
            operations,
            region=self.config.region,
            commit_seq=commit_seq,
            extension=admin,
            not_served=dispatch.not_served(),
            streams_operations=dispatch.bind_streams(self.engine, self.services),
            request_log=RequestLog(self.config.log_format),
            meters=self.engine.capacity.meters,
            metrics=self.metrics,
            account_id=self.config.account_id,
        )

    def add_trigger(self, spec: TriggerSpec) -> None:
        """Drive a handler from a table's stream (docs/triggers.md); before ``start``. A Python callable goes in
        ``TriggerSpec(name=..., table=..., handler=fn)``."""
        if self._tasks:
            raise RuntimeError("add triggers before the dynastore starts")
        self.engine.changelog.register(self.triggers.add(spec))

    def add_consumer(self, consumer: Consumer) -> None:
        """Follow the change log with ``consumer`` (docs/design.md "The change log and its consumers"): the
        changes of the tables it follows are logged for it from the next write on, with the images it needs,
        and kept until it no longer holds them."""
        self.engine.changelog.register(consumer)

    def put_policy(
        self,
        name: str,
        document: str | dict[str, Any],
        *,
        user: str | None = None,
        group: str | None = None,
        account_id: str | None = None,
    ) -> None:
        """Attach an identity policy to a user or a group of the account (default: the server's), as
        ``dynastore policies put`` does (docs/security.md "Policies"); it applies to the next request. Raises
        IdentityPolicyError for a document IAM would refuse."""
        if (user is None) == (group is None):
            raise ValueError("give either user or group")
        text = document if isinstance(document, str) else json.dumps(document)
        kind, who = (USER, user) if user is not None else (GROUP, group)
        assert who is not None
        self.services.policies.put(account_id or self.config.account_id, kind, who, name, text)

    def _metrics(self) -> Metrics | None:
        """What GET /metrics reports (docs/metrics.md); None with --no-metrics."""
        if not self.config.metrics:
            return None
        data_dir = self.config.data_dir
        metrics = Metrics(
            RequestMetrics(dispatch.OPERATIONS, dispatch.STREAMS_OPERATIONS),
            self.engine.capacity,
            self.catalog,
            self.engine.propagation,
            None if self.config.in_memory else lambda: directory_bytes(data_dir),
            archive_in(self.engine.changelog),
        )
        metrics.cluster_status = self._cluster_status
        metrics.global_tables = self.replicator.view  # replication latency and pending changes per region pair
        return metrics

    def _start_metrics(self, committer: GroupCommitter) -> None:
        """Time writes until durable and count the storage syncs of ``committer``."""
        if self.metrics is not None:
            self.metrics.requests.durability = committer
            committer.on_sync = self.metrics.syncs.synced

    def serving_on(self, port: int) -> None:
        """The port requests arrive on (with port 0 the operating system chose it; DescribeEndpoints reports it)."""
        self.config = dataclasses.replace(self.config, port=port)
        self.engine.engine.reconfigure(self.config)

    # ---- running on an asyncio loop -------------------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop) -> GroupCommitter:
        """Begin the background work on ``loop``; the returned committer answers when writes are durable."""
        committer = self.committer = GroupCommitter(self.kv, loop)
        if isinstance(self.protocol, LoggedProtocol):
            self.protocol.durability = committer
        self._start_metrics(committer)
        self._finish_interrupted_recovery()
        self._tasks = [
            loop.create_task(self._maintain()),
            loop.create_task(self._propagate()),
            loop.create_task(self._replicate()),
            loop.create_task(self._follow_strong_logs()),
        ]
        self.triggers.start(loop)
        return committer

    def _finish_interrupted_recovery(self) -> None:
        """Restores the last run did not finish leave no table, backups it did not finish end DELETED
        (docs/backups.md)."""
        try:
            for name in restore.abandon_unfinished(self.engine):
                log.warning("table %s was still being restored when the server stopped: it is dropped", name)
            for arn in backups.recover_backups(self.engine):
                log.warning("backup %s was still being created when the server stopped: it ends DELETED", arn)
        except StorageError as e:
            log.error("unfinished restores could not be dropped (the next start tries again): %s", e)

    async def stop(self) -> None:
        """End the background work, make the last writes durable and close the store."""
        self.engine.recovery.cancel()
        await self.triggers.stop()
        await self.transfers.stop()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self.replicator.cancel_work()
        self._save_replication()
        committer, self.committer = self.committer, None
        if committer is not None:
            try:
                await committer.drain()
            except StorageError as e:
                log.error("the last writes could not be made durable: %s", e)
            committer.close()
        self.close()

    async def _maintain(self) -> None:
        """Background housekeeping: lifecycle purges of deleted tables, saving item statistics, GSI backfills
        (one chunk per pass, passes back to back while a backfill has work), deleting expired TTL items."""
        while True:
            more = False
            if not self.kv.retry_writes():
                # Read-only after a storage failure (a full disk): nothing here may write until a retry succeeds.
                await asyncio.sleep(MAINTENANCE_INTERVAL)
                continue
            try:
                if self.engine.recovery.orphaned:
                    restore.abandon_unfinished(self.engine)  # a failed restore's table, now that writes resume
                self.transfers.poll(asyncio.get_running_loop())
                self.catalog.maintain()
                more = indexes.maintain(self.engine)
                continuous_backups.maintain(self.engine)  # point-in-time bases due, trimming (before the log's)
                more |= retention.trim(self.engine)
                ttl.sweep(self.engine)  # paced by this loop: a chunk per table per pass, never back to back
                self.replicator.purge_tombstones()  # global tables: tombstones past their retention
                self.engine.engine.progress.report()  # a log line per long job every few seconds
            except Exception:
                log.exception("maintenance failed")
            await asyncio.sleep(0 if more and self.config.gsi_backfill_interval <= 0 else MAINTENANCE_INTERVAL)

    async def _propagate(self) -> None:
        """Apply the GSI backlog soon after each write: woken by the write, then a chunk per loop turn, so
        requests keep being served in between. A short pause lets concurrent writes share one transaction."""
        wanted = asyncio.Event()
        self.engine.propagation.wake = wanted.set
        wanted.set()  # records left by an earlier run (a crash) are applied at once
        while True:
            await wanted.wait()
            wanted.clear()
            await asyncio.sleep(PROPAGATION_PAUSE)
            if not self.kv.writable:  # read-only: the backlog waits (it is durable) until writes resume
                await asyncio.sleep(MAINTENANCE_INTERVAL)
                wanted.set()
                continue
            try:
                while indexes.propagate(self.engine):
                    if self.config.gsi_propagation_delay > 0:
                        break  # records not due yet: the maintenance loop retries them
                    await asyncio.sleep(0)
            except Exception:
                log.exception("GSI propagation failed")
                await asyncio.sleep(MAINTENANCE_INTERVAL)
                wanted.set()

    async def _replicate(self) -> None:
        """Global tables: ship each region's changes to the other regions of their replica sets, seed new
        replicas, remove replicas; round after round while there is work, resting briefly when there is none."""
        while True:
            moved = False
            try:
                moved = await self.replicator.step()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("global tables replication failed")
                await asyncio.sleep(MAINTENANCE_INTERVAL)
            # A server without global tables looks for new ones at the pace of housekeeping.
            idle = REPLICATION_INTERVAL if self.replicator.active else MAINTENANCE_INTERVAL
            await asyncio.sleep(0 if moved else idle)

    async def _follow_strong_logs(self) -> None:
        """Global tables with multi-region strong consistency: apply what the other regions committed to the strong
        log (global_tables/strong.py ``follow``), round after round; nothing to do without a strong log."""
        strong = self.services.strong
        if not strong.logged:
            return
        while True:
            try:
                await strong.follow(self.engine)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("following the strong log failed")
                await asyncio.sleep(MAINTENANCE_INTERVAL)
            await asyncio.sleep(STRONG_FOLLOW_INTERVAL)

    def _save_replication(self) -> None:
        """The replicator's cursors, saved at a stop (the changes since the last save are shipped again otherwise)."""
        if not self.kv.writable:
            return
        try:
            self.replicator.save(force=True)
        except StorageError as e:
            log.error("the cursors of global tables replication could not be saved: %s", e)

    def close(self) -> None:
        """Save what the store keeps between runs and close it."""
        if self.protocol.sts is not None:
            self.protocol.sts.jwks.close()  # fetches of providers' keys still running are not waited for
        if isinstance(self.protocol, LoggedProtocol):
            self.protocol.request_log.flush()  # the lines of the last requests answered
        try:
            if self.kv.writable:
                self.catalog.close()
                self.kv.seal()
                self.kv.flush()
        except StorageError as e:
            # The store took back what it could not make durable and closes read-only: its log stays for the
            # next start to replay.
            log.error("saving state at shutdown failed: %s", e)
        self.kv.close()
        self.services.strong.close()
