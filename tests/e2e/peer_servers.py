"""Several `dynastore serve` processes on 127.0.0.1, each serving its own region and configured as the peers of the
others (``--region R --peer OTHER=URL ...``), for global tables across servers (docs/global-tables.md "Peers").

    with PeerServers(["us-east-1", "us-west-2"]) as servers:
        servers["us-east-1"].ddb.update_table(...)        # a ServerProcess per region
        servers.restart("us-west-2")                      # stopped and started again on its port and data

``auth=True`` starts every server with ``--auth sigv4`` and one admin key (DYNASTORE_ADMIN_ACCESS_KEY_ID / _SECRET),
which they also sign their requests to one another with (DYNASTORE_PEER_ACCESS_KEY_ID / _SECRET); ``client(region)``
is then a boto3 client signed with it. Each server keeps its data in a directory of its own (``data_root``), so that
``stop`` / ``start`` / ``restart`` bring it back with its tables; the ports are chosen free before the first start
(every server must know the others' URLs when it starts) and kept for restarts.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import boto3

from dynastore.pytest_plugin import admin_environment, session_credentials
from tests.e2e.conftest import BOTO_CONFIG
from tests.e2e.server_process import ServerProcess

__all__ = ["PeerServers", "free_port"]


def free_port() -> int:
    """A port nothing listens on now (the kernel's pick for a socket bound to port 0, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PeerServers:
    """One server per region of ``regions``, each a peer of all the others."""

    def __init__(
        self,
        regions: Sequence[str],
        *flags: str,
        auth: bool = False,
        data_root: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.regions = list(regions)
        self.flags = list(flags)
        self.ports = {region: free_port() for region in self.regions}
        self.urls = {region: f"http://127.0.0.1:{port}" for region, port in self.ports.items()}
        self._temporary = None if data_root is not None else tempfile.TemporaryDirectory(prefix="dynastore-peers-")
        self.data_root = data_root if data_root is not None else Path(self._temporary.name)  # type: ignore[union-attr]
        self.credentials = session_credentials() if auth else None
        self.env = dict(env or {})
        if self.credentials is not None:
            self.env.update(admin_environment(self.credentials))
            self.env["DYNASTORE_PEER_ACCESS_KEY_ID"] = self.credentials["aws_access_key_id"]
            self.env["DYNASTORE_PEER_SECRET_ACCESS_KEY"] = self.credentials["aws_secret_access_key"]
        self.servers: dict[str, ServerProcess] = {}
        self._clients: dict[str, Any] = {}

    def __enter__(self) -> PeerServers:
        try:
            for region in self.regions:
                self.start(region)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __getitem__(self, region: str) -> ServerProcess:
        return self.servers[region]

    def __iter__(self) -> Iterator[str]:
        return iter(self.regions)

    def flags_of(self, region: str) -> list[str]:
        """The `dynastore serve` flags of the server of ``region``: its port, region, data and peers."""
        flags = ["--port", str(self.ports[region]), "--region", region]
        for other in self.regions:
            if other != region:
                flags += ["--peer", f"{other}={self.urls[other]}"]
        if self.credentials is not None:
            flags += ["--auth", "sigv4"]
        return flags + self.flags

    def start(self, region: str) -> ServerProcess:
        directory = self.data_root / region
        directory.mkdir(parents=True, exist_ok=True)
        server = ServerProcess(*self.flags_of(region), data_dir=directory, env=self.env)
        self.servers[region] = server
        return server

    def stop(self, region: str) -> None:
        """SIGTERM: the server finishes what it was doing and exits."""
        self.servers.pop(region).stop()

    def kill(self, region: str) -> None:
        self.servers.pop(region).kill()

    def restart(self, region: str) -> ServerProcess:
        self.stop(region)
        return self.start(region)

    def client(self, region: str) -> Any:
        """A boto3 DynamoDB client of the server of ``region`` (signed with the admin key when ``auth``), with
        client-side validation and retries off."""
        found = self._clients.get(region)
        if found is None:
            keys = self.credentials or {"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}
            found = boto3.client(
                "dynamodb", endpoint_url=self.urls[region], region_name=region, config=BOTO_CONFIG, **keys
            )
            self._clients[region] = found
        return found

    def close(self) -> None:
        for server in self.servers.values():
            server.close()
        self.servers.clear()
        if self._temporary is not None:
            self._temporary.cleanup()
