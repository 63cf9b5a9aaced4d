"""Real etcd members and real ``dynastore serve --cluster`` nodes on 127.0.0.1 for the tests of a cluster node
(tests/cluster/test_node.py): started on free ports in a temporary directory, always stopped afterwards."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

import pytest

from dynastore.replication.etcd_config import ETCD_MEMBER_FLAGS
from tests.e2e.conftest import ADMIN
from tests.e2e.server_process import ServerProcess

ETCD = "/usr/bin/etcd"
POLL_TIMEOUT = 60.0  # seconds a condition may take before a test gives up on it (generous: a loaded 2-core host)
T = TypeVar("T")


def require_etcd() -> None:
    """Fail (not skip) without etcd: these tests are how CI knows the cluster works."""
    if not os.access(ETCD, os.X_OK):
        pytest.fail(f"{ETCD} is missing: the cluster tests need etcd 3.4 (Debian's etcd-server package)")


def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(what: str, check: Callable[[], T | None], timeout: float = POLL_TIMEOUT) -> T:
    """Poll ``check`` until it returns something other than None (or False); that value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            value = check()
        except (OSError, ValueError) as e:
            last = e
        else:
            if value is not None and value is not False:
                return value
            last = value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


class EtcdMember:
    def __init__(self, name: str, directory: Path, client_port: int, peer_port: int) -> None:
        self.name = name
        self.directory = directory
        self.client_port = client_port
        self.peer_port = peer_port
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    def start(self, initial_cluster: str) -> None:
        client_url = f"http://127.0.0.1:{self.client_port}"
        command = [
            ETCD,
            "--name", self.name,
            "--data-dir", str(self.directory / "data"),
            "--listen-client-urls", client_url,
            "--advertise-client-urls", client_url,
            "--listen-peer-urls", self.peer_url,
            "--initial-advertise-peer-urls", self.peer_url,
            "--initial-cluster", initial_cluster,
            "--initial-cluster-state", "new",
            "--initial-cluster-token", f"dynastore-test-{os.getpid()}",
            *ETCD_MEMBER_FLAGS,
        ]  # fmt: skip
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / "log", "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=log)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=20)


class EtcdCluster:
    """``size`` etcd members on free ports of 127.0.0.1, each in its own directory under ``directory``."""

    def __init__(self, directory: Path, size: int) -> None:
        self.members = [EtcdMember(f"etcd{i}", directory / f"etcd{i}", free_port(), free_port()) for i in range(size)]
        initial = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        for member in self.members:
            member.start(initial)

    @property
    def spec(self) -> str:
        """The --cluster value naming every member."""
        return "etcd://" + ",".join(f"127.0.0.1:{m.client_port}" for m in self.members)

    def endpoints(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", m.client_port) for m in self.members]

    def wait_healthy(self) -> None:
        for member in self.members:
            url = f"http://127.0.0.1:{member.client_port}/health"
            wait_for(f"etcd member {member.name}", lambda url=url: _healthy(url))  # type: ignore[misc]

    def stop(self) -> None:
        for member in self.members:
            member.stop()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(json.loads(response.read()).get("health") == "true")
    except urllib.error.HTTPError as e:  # (503 while the member has no quorum yet)
        e.close()
        return False


class Node:
    """A ``dynastore serve --cluster`` process with its name and data directory (kept across restarts)."""

    def __init__(self, name: str, data_dir: Path, cluster: str) -> None:
        self.name = name
        self.data_dir = data_dir
        self.cluster = cluster
        self.server: ServerProcess | None = None

    def start(self) -> ServerProcess:
        self.server = ServerProcess(
            "--cluster", self.cluster, "--node-name", self.name, "--host", "127.0.0.1", data_dir=self.data_dir
        )
        return self.server

    @property
    def running(self) -> ServerProcess:
        assert self.server is not None, f"node {self.name} is not running"
        return self.server

    def status(self) -> Any:
        return get_json(self.running.url + "/dynastore/cluster")

    def digest(self) -> Any:
        return get_json(self.running.url + "/dynastore/cluster/digest")

    def kill(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.kill()

    def stop(self) -> int:
        server, self.server = self.server, None
        return 0 if server is None else server.stop()

    def close(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            try:
                server.close()
            except subprocess.TimeoutExpired:
                server.kill()


def _brief(status: Any) -> Any:
    """A node's status without its list of nodes (what a failure message needs)."""
    if not isinstance(status, dict):
        return status
    keys = ("node", "role", "leader", "appliedIndex", "logHead", "leaderChanges")
    return {key: status.get(key) for key in keys}


def get_json(url: str) -> Any:
    request = urllib.request.Request(url, headers=ADMIN)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


class Cluster:
    """An etcd cluster and dynastore nodes n0..n{size-1} using it."""

    def __init__(self, directory: Path, etcd_size: int = 3, size: int = 3) -> None:
        require_etcd()
        self.etcd = EtcdCluster(directory, etcd_size)
        self.nodes = [Node(f"n{i}", directory / f"n{i}", self.etcd.spec) for i in range(size)]

    def start(self) -> None:
        self.etcd.wait_healthy()
        for node in self.nodes:
            node.start()

    def running(self) -> list[Node]:
        return [node for node in self.nodes if node.server is not None]

    def node(self, name: str) -> Node:
        return next(node for node in self.nodes if node.name == name)

    def leader(self) -> Node:
        """The one running node that says it leads, once every running node agrees on it."""

        def agreed() -> Node | None:
            statuses = [node.status() for node in self.running()]
            leaders = [s["node"] for s in statuses if s["role"] == "leader"]
            if len(leaders) == 1 and all(s["leader"] == leaders[0] for s in statuses):
                return self.node(leaders[0])
            return None

        return self.wait("one leader every node knows", agreed)

    def followers(self) -> list[Node]:
        leader = self.leader()
        return [node for node in self.running() if node is not leader]

    def converged(self) -> list[Any]:
        """The digests of every running node once each has applied the log's head, which they all agree on."""

        def settled() -> list[Any] | None:
            statuses = [node.status() for node in self.running()]
            heads = {s["logHead"] for s in statuses}
            if len(heads) != 1 or any(s["appliedIndex"] != s["logHead"] for s in statuses):
                return None
            digests = [node.digest() for node in self.running()]
            if {d["appliedIndex"] for d in digests} != heads:
                return None
            # The leader reports the index its store holds up to a quarter second late, so right after a write
            # its digest may already hold an entry its index does not say yet: equal digests are waited for too
            # (replicas that differ for good still fail, when this times out).
            if len({d["digest"] for d in digests}) != 1:
                self.last_digests = digests
                return None
            return digests

        return self.wait("every node applied the log's head", settled)

    last_digests: list[Any] | None = None  # the differing digests of the last convergence check

    def wait(self, what: str, check: Callable[[], T | None]) -> T:
        """``wait_for``, and what each node said and logged when it timed out."""
        try:
            return wait_for(what, check)
        except AssertionError as e:
            said = [_brief(self._status_or_error(node)) for node in self.running()]
            logs = "\n".join(f"--- {node.name}\n{node.running.log_text()[-3000:]}" for node in self.running())
            raise AssertionError(f"{e}; statuses: {said}; digests: {self.last_digests}\n{logs}") from None

    @staticmethod
    def _status_or_error(node: Node) -> Any:
        try:
            return node.status()
        except OSError as e:
            return f"{node.name}: {e}"

    def close(self) -> None:
        for node in self.nodes:
            node.close()
        self.etcd.stop()


__all__ = ["Cluster", "EtcdCluster", "Node", "free_port", "get_json", "require_etcd", "wait_for"]
