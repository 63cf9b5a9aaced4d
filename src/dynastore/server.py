"""One dynastore server: storage, catalog, protocol and the HTTP listener, wired together."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
import sys

from dynastore.api.context import Context
from dynastore.config import Config
from dynastore.engine import indexes, ttl
from dynastore.protocol import dispatch, extensions, http_server
from dynastore.protocol.protocol import Protocol
from dynastore.storage.catalog import Catalog
from dynastore.storage.group_commit import GroupCommitter
from dynastore.storage.kv import KV, StorageError

log = logging.getLogger("dynastore")

MAINTENANCE_INTERVAL = 0.5  # seconds between housekeeping passes
PROPAGATION_PAUSE = 0.001  # seconds the GSI propagator waits after a wake-up, to batch concurrent writes


def open_storage(config: Config) -> KV:
    if config.in_memory:
        from dynastore.storage.memory_kv import MemoryKV

        return MemoryKV()
    from dynastore.storage.lmdb_kv import LmdbKV

    return LmdbKV(config.data_dir, ordered_sync=config.crash_safe, reserve_bytes=config.disk_reserve)


class Server:
    """Owns the storage for its lifetime; ``run()`` serves until SIGINT or SIGTERM."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.kv = open_storage(config)
        self.catalog = Catalog.load(self.kv, config)
        # Writes the store took back after a storage failure may have changed tables: read them again.
        self.kv.watch_losses(lambda durable, lost_through: self.catalog.reload())
        self.context = Context(config, self.kv, self.catalog)
        self.protocol = Protocol(
            dispatch.bind(self.context),
            region=config.region,
            commit_seq=lambda: self.kv.commit_seq,
            extension=extensions.bind(self.context),
        )
        self._stopping: asyncio.Event | None = None

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        committer = GroupCommitter(self.kv, loop)
        listener = await http_server.start(self.protocol, committer, self.config.host, self.config.port)
        host, port = listener.sockets[0].getsockname()[:2]
        # With --port 0 the operating system chose the port; DescribeEndpoints must report the real one.
        self.context.config = dataclasses.replace(self.config, port=port)
        print(f"dynastore listening on http://{host}:{port}", flush=True)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stopping.set)
        maintenance = loop.create_task(self._maintain())
        propagation = loop.create_task(self._propagate())
        try:
            await self._stopping.wait()
        finally:
            maintenance.cancel()
            propagation.cancel()
            listener.close()
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
                self.catalog.maintain()
                more = indexes.maintain(self.context)
                ttl.sweep(self.context)  # paced by this loop: a chunk per table per pass, never back to back
            except Exception:
                log.exception("maintenance failed")
            await asyncio.sleep(0 if more and self.config.gsi_backfill_interval <= 0 else MAINTENANCE_INTERVAL)

    async def _propagate(self) -> None:
        """Apply the GSI backlog soon after each write: woken by the write, then a chunk per loop turn, so
        requests keep being served in between. A short pause lets concurrent writes share one transaction."""
        wanted = asyncio.Event()
        backlog = indexes.state_of(self.context).backlog
        backlog.wake = wanted.set
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
                while indexes.propagate(self.context):
                    if self.config.gsi_propagation_delay > 0:
                        break  # records not due yet: the maintenance loop retries them
                    await asyncio.sleep(0)
            except Exception:
                log.exception("GSI propagation failed")
                await asyncio.sleep(MAINTENANCE_INTERVAL)
                wanted.set()

    def stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()

    def close(self) -> None:
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

    def run(self) -> None:
        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvloop is a dependency everywhere but Windows
            asyncio.run(self.serve())
        else:
            uvloop.run(self.serve())


def serve(config: Config) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    try:
        server = Server(config)
    except StorageError as e:
        log.error("cannot open the store: %s", e)
        raise SystemExit(1) from None
    server.run()
