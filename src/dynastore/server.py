"""One dynastore server: storage, catalog, protocol and the HTTP listener, wired together."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
import socket
import sys
from typing import NoReturn

from dynastore import messages
from dynastore.api.context import Context
from dynastore.build_kind import PURE_PYTHON_NOTICE, is_compiled
from dynastore.config import Config
from dynastore.engine import indexes, ttl
from dynastore.engine.admission import capacity_of
from dynastore.protocol import dispatch, extensions, http_server
from dynastore.protocol.connections import ConnectionLimits, Registry
from dynastore.protocol.protocol import Protocol
from dynastore.protocol.request_log import LoggedProtocol, RequestLog
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


def connection_limits(config: Config) -> ConnectionLimits:
    return ConnectionLimits(
        max_header_bytes=config.max_header_bytes,
        max_url_bytes=config.max_url_bytes,
        idle_timeout=config.idle_timeout,
        header_timeout=config.header_timeout,
        body_timeout=config.body_timeout,
        max_connections=config.max_connections,
        reserved_descriptors=config.reserved_descriptors,
        max_buffered_request_bytes=config.max_buffered_request_bytes,
        write_buffer_bytes=config.write_buffer_bytes,
    )


class Server:
    """Owns the storage for its lifetime; ``run()`` serves until SIGINT or SIGTERM."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.kv = open_storage(config)
        self.catalog = Catalog.load(self.kv, config)
        # Writes the store took back after a storage failure may have changed tables: read them again.
        self.kv.watch_losses(lambda durable, lost_through: self.catalog.reload())
        self.context = Context(config, self.kv, self.catalog)
        self.protocol = self._protocol()
        self._stopping: asyncio.Event | None = None

    def _protocol(self) -> Protocol:
        operations = dispatch.bind(self.context)
        extension = extensions.bind(self.context)
        kv = self.kv

        def commit_seq() -> int:
            return kv.commit_seq

        if not self.config.log_requests:
            return Protocol(
                operations,
                region=self.config.region,
                commit_seq=commit_seq,
                extension=extension,
                not_served=dispatch.not_served(),
            )
        return LoggedProtocol(
            operations,
            region=self.config.region,
            commit_seq=commit_seq,
            extension=extension,
            not_served=dispatch.not_served(),
            request_log=RequestLog(self.config.log_format),
            meters=capacity_of(self.context).meters,
        )

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        """Serve until stopped, on ``sockets`` (from http_server.listen) or on the configured host and port."""
        loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        if sockets is None:
            sockets = http_server.listen(self.config.host, self.config.port)
        committer = GroupCommitter(self.kv, loop)
        registry = Registry(connection_limits(self.config))
        if isinstance(self.protocol, LoggedProtocol):
            self.protocol.durability = committer
        listeners = await http_server.start(self.protocol, committer, sockets, registry)
        host, port = sockets[0].getsockname()[:2]
        # With --port 0 the operating system chose the port; DescribeEndpoints must report the real one.
        self.context.config = dataclasses.replace(self.config, port=port)
        print(f"dynastore listening on http://{host}:{port}", flush=True)
        if not is_compiled():
            print(PURE_PYTHON_NOTICE, file=sys.stderr, flush=True)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stopping.set)
        maintenance = loop.create_task(self._maintain())
        propagation = loop.create_task(self._propagate())
        try:
            await self._stopping.wait()
        finally:
            maintenance.cancel()
            propagation.cancel()
            for listener in listeners:
                listener.close()
            registry.stop()
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

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvloop is a dependency everywhere but Windows
            asyncio.run(self.serve(sockets))
        else:
            uvloop.run(self.serve(sockets))


def serve(config: Config) -> None:
    """Start a server from the command line. The port is bound before the store is opened, so that a start that
    fails leaves nothing behind (no data directory, lock file or log); a failure is one line on stderr."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    try:
        sockets = http_server.listen(config.host, config.port)
    except OSError as e:
        _fail(messages.CLI_CANNOT_LISTEN.format(host=config.host, port=config.port, reason=_reason(e)))
    try:
        server = _open(config)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    server.run(sockets)


def _open(config: Config) -> Server:
    if not config.in_memory:
        from dynastore.storage.lmdb_kv import DIRECTORY_MODE

        try:
            config.data_dir.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
        except OSError as e:
            _fail(messages.CLI_CANNOT_CREATE_DATA_DIR.format(path=config.data_dir, reason=_reason(e)))
    try:
        return Server(config)
    except StorageError as e:
        _fail(messages.CLI_CANNOT_OPEN_STORE.format(reason=e))
    except OSError as e:
        _fail(messages.CLI_CANNOT_OPEN_STORE.format(reason=f"{config.data_dir}: {_reason(e)}"))


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _fail(text: str) -> NoReturn:
    print(f"dynastore: error: {text}", file=sys.stderr, flush=True)
    raise SystemExit(1)
