"""The HTTP host of a dynastore: listening sockets, signals and the asyncio loop around app.Dynastore."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import ssl
import sys
from typing import TYPE_CHECKING, NoReturn

from dynastore import messages
from dynastore.app import Dynastore
from dynastore.build_kind import PURE_PYTHON_NOTICE, is_compiled
from dynastore.config import Config
from dynastore.global_tables.strong_log import StrongLog
from dynastore.protocol import http_server
from dynastore.protocol.connections import ConnectionLimits, Registry
from dynastore.protocol.hosts import HostGuard, HostRule
from dynastore.protocol.http_server import Durability
from dynastore.protocol.protocol import MetricsEndpoint
from dynastore.storage.kv import StorageError
from dynastore.util.files import make_private_directory

if TYPE_CHECKING:
    from dynastore.replication.node import ClusterNode

log = logging.getLogger("dynastore")


def _cluster_node(config: Config) -> ClusterNode:
    """A replicated node (docs/cluster.md); imported only then, so the embedded default never loads etcd's
    client."""
    from dynastore.replication.node import ClusterNode

    return ClusterNode(config)


def _strong_log(config: Config) -> StrongLog | None:
    """The strong log of global tables with multi-region strong consistency kept in etcd (``--strong-etcd``),
    else None (every region of such a table is this server's); etcd's client is loaded only then."""
    if not config.strong_etcd:
        return None
    from dynastore.replication.etcd_config import parse_endpoints
    from dynastore.replication.strong_log_etcd import EtcdStrongLog

    return EtcdStrongLog(parse_endpoints(config.strong_etcd))


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


def tls_context(config: Config) -> ssl.SSLContext | None:
    """HTTPS with --tls-cert and --tls-key (TLS 1.2 at least; HTTP/1.1 inside, keep-alive as over plain HTTP).
    Raises OSError or ssl.SSLError if they cannot be loaded."""
    if config.tls_cert is None or config.tls_key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(config.tls_cert, config.tls_key)
    return context


class Server:
    """A dynastore (app.py) served over HTTP; ``run()`` serves until SIGINT or SIGTERM."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.app: Dynastore | ClusterNode = (
            Dynastore(config, strong_log=_strong_log(config)) if config.cluster is None else _cluster_node(config)
        )
        self._stopping: asyncio.Event | None = None
        self._metrics_registry: Registry | None = None  # the --metrics-port listener's connections
        # Every listener answers only the Host and Origin headers this rule allows (DNS rebinding, other sites).
        self.hosts = HostRule(config.host, config.allowed_hosts, check_origin=config.auth == "none")

    async def serve(
        self, sockets: list[socket.socket] | None = None, metrics_sockets: list[socket.socket] | None = None
    ) -> None:
        """Serve until stopped, on ``sockets`` (from http_server.listen) or on the configured host and port, and
        GET /metrics on ``metrics_sockets`` (or the configured --metrics-port) too."""
        loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        if sockets is None:
            sockets = http_server.listen(self.config.host, self.config.port)
        tls = tls_context(self.config)
        committer = self.app.start(loop)
        registry = Registry(connection_limits(self.config))
        extra: dict[str, ssl.SSLContext] = {} if tls is None else {"ssl": tls}
        guarded = HostGuard(self.app.protocol, self.hosts)
        listeners = await http_server.start(guarded, committer, sockets, registry, **extra)
        host, port = sockets[0].getsockname()[:2]
        self.app.serving_on(port)
        print(f"dynastore listening on {'https' if tls else 'http'}://{host}:{port}", flush=True)
        listeners += await self._serve_metrics(committer, registry, metrics_sockets)
        if not is_compiled():
            print(PURE_PYTHON_NOTICE, file=sys.stderr, flush=True)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stopping.set)
        try:
            await self._stopping.wait()
        finally:
            for listener in listeners:
                listener.close()  # new connections are refused from now on
            await registry.shut_down(self.config.shutdown_grace)
            registry.stop()
            if self._metrics_registry is not None:
                self._metrics_registry.stop()
            await self.app.stop()

    async def _serve_metrics(
        self, committer: Durability, registry: Registry, sockets: list[socket.socket] | None
    ) -> list[asyncio.Server]:
        """Count the main listener's connections; serve GET /metrics on its own port when one is configured."""
        metrics = self.app.metrics
        if metrics is None:
            return []
        metrics.watch_connections(registry)
        if sockets is None:
            if self.config.metrics_port is None:
                return []
            sockets = http_server.listen(self.config.host, self.config.metrics_port)
        own = self._metrics_registry = Registry(connection_limits(self.config))
        listeners = await http_server.start(HostGuard(MetricsEndpoint(metrics), self.hosts), committer, sockets, own)
        host, port = sockets[0].getsockname()[:2]
        print(f"dynastore metrics on http://{host}:{port}/metrics", flush=True)
        return listeners

    def stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()

    def close(self) -> None:
        self.app.close()

    def run(
        self, sockets: list[socket.socket] | None = None, metrics_sockets: list[socket.socket] | None = None
    ) -> None:
        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvloop is a dependency everywhere but Windows
            asyncio.run(self.serve(sockets, metrics_sockets))
        else:
            uvloop.run(self.serve(sockets, metrics_sockets))


def serve(config: Config) -> None:
    """Start a server from the command line. The port is bound before the store is opened, so that a start that
    fails leaves nothing behind (no data directory, lock file or log); a failure is one line on stderr."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    try:
        sockets = http_server.listen(config.host, config.port)
    except OSError as e:
        _fail(messages.CLI_CANNOT_LISTEN.format(host=config.host, port=config.port, reason=_reason(e)))
    metrics_sockets: list[socket.socket] | None = None
    try:
        if config.metrics and config.metrics_port is not None:
            metrics_sockets = _listen(config.host, config.metrics_port)
        server = _open(config)
    except BaseException:
        for sock in [*sockets, *(metrics_sockets or [])]:
            sock.close()
        raise
    server.run(sockets, metrics_sockets)


def _listen(host: str, port: int) -> list[socket.socket]:
    try:
        return http_server.listen(host, port)
    except OSError as e:
        _fail(messages.CLI_CANNOT_LISTEN.format(host=host, port=port, reason=_reason(e)))


def _open(config: Config) -> Server:
    try:
        tls_context(config)  # a certificate or key that does not load stops the start before the store opens
    except (OSError, ssl.SSLError) as e:
        _fail(messages.CLI_TLS.format(reason=e))
    if not config.in_memory:
        try:
            make_private_directory(config.data_dir)
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
