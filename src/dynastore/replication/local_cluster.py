"""A three-replica cluster on one machine, for trying it and for tests (docs/cluster.md "Trying it").

Three etcd members (``/usr/bin/etcd``, run with ETCD_MEMBER_FLAGS) and three ``dynastore serve --cluster`` nodes,
each on free local ports, everything kept under one directory::

    <directory>/cluster.json       the ports chosen on the first start (a later start reuses them: etcd members
                                   remember their peers' addresses, so a stopped cluster restarts as it was)
    <directory>/cluster-secret     what the nodes show each other (DYNASTORE_CLUSTER_SECRET), made on the first start
    <directory>/etcd/e1..e3        the etcd members' data
    <directory>/nodes/n1..n3       the dynastore nodes' data directories
    <directory>/logs/*.log         each process's output
    <directory>/run/*.pid          the process id of each member and node while it runs (to stop or kill one, say
                                   to watch a failover: kill -9 $(cat <directory>/run/n1.pid))

``LocalCluster.start()`` starts the members, waits until etcd answers healthy, starts the nodes and waits until
every node names the same leader (GET /dynastore/cluster); ``stop()`` stops the nodes first (SIGTERM, so each
closes its store cleanly), then etcd. Every child runs in a process group of its own, so a Ctrl-C typed at the
terminal reaches only the launcher, which then stops them in that order; on Linux each child also receives
SIGTERM if the launcher dies without stopping them.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from dynastore.replication.etcd_config import ETCD_MEMBER_FLAGS
from dynastore.security.sigv4 import sign_headers

__all__ = [
    "CLUSTER_PATH",
    "ETCD_BINARY",
    "ClusterError",
    "EtcdMembers",
    "LocalCluster",
    "Nodes",
    "Ports",
    "fetch_status",
]

ETCD_BINARY = "/usr/bin/etcd"
CLUSTER_PATH = "/dynastore/cluster"
SIZE = 3
# Seconds a stopped process is given to exit before it is killed: a node finishes the requests under way and
# closes its store (its own --shutdown-grace is 10 s by default); an etcd member needs far less.
NODE_STOP_TIMEOUT = 30.0
ETCD_STOP_TIMEOUT = 10.0
_POLL = 0.1
_PR_SET_PDEATHSIG = 1


class ClusterError(Exception):
    """The cluster could not start (the message says which process and why, with the end of its log)."""


@dataclass(frozen=True)
class Ports:
    """The local ports of one cluster: etcd's client and peer ports and the nodes' HTTP ports, member i with
    node i."""

    host: str
    etcd_client: tuple[int, ...]
    etcd_peer: tuple[int, ...]
    nodes: tuple[int, ...]

    @classmethod
    def free(cls, host: str, size: int = SIZE) -> Ports:
        """Ports nothing listens on now (the system's choice: each is bound once, then released)."""
        chosen = _free_ports(host, 3 * size)
        return cls(host, tuple(chosen[:size]), tuple(chosen[size : 2 * size]), tuple(chosen[2 * size :]))

    @classmethod
    def load(cls, path: Path) -> Ports:
        data = json.loads(path.read_text())
        return cls(data["host"], *(tuple(int(p) for p in data[k]) for k in ("etcd_client", "etcd_peer", "nodes")))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")

    def every(self) -> tuple[int, ...]:
        return self.etcd_client + self.etcd_peer + self.nodes


def _free_ports(host: str, count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):  # all held at once, so that no port is handed out twice
            s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(s)
            s.bind((host, 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _in_use(host: str, port: int) -> bool:
    """Whether something listens on the port (as servers do, connections of a stopped one that linger in
    TIME_WAIT are not counted)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _die_with_parent() -> None:
    """In the child, before exec: receive SIGTERM when the launcher dies (Linux; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class _Process:
    """One child process whose output goes to a log file of its own."""

    def __init__(
        self, name: str, command: Sequence[str], directory: Path, env: Mapping[str, str] | None = None
    ) -> None:
        """``name`` is ``etcd e1`` or ``node n1``: its output goes to ``directory/logs/<e1|n1>.log``, its process
        id to ``directory/run/<e1|n1>.pid``."""
        self.name = name
        short = name.split()[-1]
        self.log = directory / "logs" / f"{short}.log"
        self.pid_file = directory / "run" / f"{short}.pid"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[bytes] = self.log.open("ab")
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            env=None if env is None else dict(env),
            start_new_session=True,  # a Ctrl-C at the terminal reaches the launcher only: it stops us in order
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - no threads run in the launcher while it starts children
        )
        self.pid_file.write_text(f"{self.process.pid}\n")

    @property
    def pid(self) -> int:
        return self.process.pid

    def exited(self) -> int | None:
        return self.process.poll()

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()

    def wait(self, timeout: float) -> None:
        """Wait for the exit; past ``timeout`` seconds, kill."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._out.close()
        self.pid_file.unlink(missing_ok=True)

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])


def _stop_together(processes: Sequence[_Process], timeout: float) -> None:
    for p in processes:
        p.terminate()
    deadline = time.monotonic() + timeout
    for p in processes:
        p.wait(max(0.0, deadline - time.monotonic()))


def _failure(process: _Process, what: str) -> ClusterError:
    tail = process.log_tail()
    return ClusterError(f"{what}; the end of {process.log}:\n{tail}" if tail else f"{what} ({process.log} is empty)")


class EtcdMembers:
    """The three etcd members of a local cluster."""

    def __init__(self, directory: Path, ports: Ports, token: str, binary: str = ETCD_BINARY) -> None:
        self.directory = directory
        self.ports = ports
        self.token = token  # --initial-cluster-token: members of another cluster never join this one by mistake
        self.binary = binary
        self.names = tuple(f"e{i + 1}" for i in range(len(ports.etcd_client)))
        self.processes: list[_Process] = []

    @property
    def client_urls(self) -> list[str]:
        return [_url(self.ports.host, p) for p in self.ports.etcd_client]

    @property
    def endpoints(self) -> str:
        """What ``dynastore serve --cluster`` takes: ``etcd://HOST:PORT,HOST:PORT,...``."""
        return "etcd://" + ",".join(u.removeprefix("http://") for u in self.client_urls)

    def command(self, index: int) -> list[str]:
        host, name = self.ports.host, self.names[index]
        peer, client = _url(host, self.ports.etcd_peer[index]), _url(host, self.ports.etcd_client[index])
        initial = ",".join(f"{n}={_url(host, p)}" for n, p in zip(self.names, self.ports.etcd_peer, strict=True))
        return [
            self.binary,
            f"--name={name}",
            f"--data-dir={self.directory / 'etcd' / name}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster={initial}",
            f"--initial-cluster-token={self.token}",
            "--initial-cluster-state=new",  # ignored by a member that has data: it rejoins as it was
            *ETCD_MEMBER_FLAGS,
        ]

    def start(self, timeout: float = 60.0) -> None:
        """Start every member and wait until each answers healthy (its cluster has a leader)."""
        if shutil.which(self.binary) is None:
            raise ClusterError(f"{self.binary} not found: install etcd (Debian: apt-get install etcd-server)")
        (self.directory / "etcd").mkdir(parents=True, exist_ok=True)
        for i, name in enumerate(self.names):
            self.processes.append(_Process(f"etcd {name}", self.command(i), self.directory))
        deadline = time.monotonic() + timeout
        for process, url in zip(self.processes, self.client_urls, strict=True):
            _wait_until(partial(_etcd_healthy, url), process, deadline, "answer healthy")

    def stop(self, timeout: float = ETCD_STOP_TIMEOUT) -> None:
        """One member at a time: stopped together, a leader whose followers are gone first tries (for seconds) to
        hand its leadership over; one by one, each hand-over finds a member to take it, and the last member, alone,
        leads nothing."""
        for process in self.processes:
            _stop_together([process], timeout)
        self.processes.clear()


def _etcd_healthy(client_url: str) -> bool:
    try:
        with urllib.request.urlopen(client_url + "/health", timeout=2) as answer:
            return bool(json.loads(answer.read()).get("health") == "true")
    except (OSError, ValueError):
        return False


def _wait_until(ready: Callable[[], bool], process: _Process, deadline: float, what: str) -> None:
    while not ready():
        code = process.exited()
        if code is not None:
            raise _failure(process, f"{process.name} exited with {code} before it could {what}")
        if time.monotonic() > deadline:
            raise _failure(process, f"{process.name} did not {what} in time")
        time.sleep(_POLL)


def fetch_status(url: str, credentials: Mapping[str, str] | None = None, timeout: float = 5.0) -> dict[str, Any]:
    """A node's GET /dynastore/cluster (signed with ``credentials`` for a node with ``--auth sigv4``). Raises
    urllib's errors (URLError: no answer; HTTPError: a refusal) and ValueError for an answer that is not a JSON
    object."""
    headers = {"Content-Type": "application/json"}
    if credentials is not None:
        headers = _signed(credentials, url, headers)
    request = urllib.request.Request(url.rstrip("/") + CLUSTER_PATH, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        status = json.loads(answer.read())
    if not isinstance(status, dict):
        raise ValueError(f"{url}{CLUSTER_PATH} answered no JSON object")
    return status


def _signed(credentials: Mapping[str, str], url: str, headers: dict[str, str]) -> dict[str, str]:
    from urllib.parse import urlsplit

    return sign_headers(
        "GET",
        CLUSTER_PATH,
        {**headers, "Host": urlsplit(url).netloc},
        b"",
        access_key_id=credentials["aws_access_key_id"],
        secret=credentials["aws_secret_access_key"],
        region=credentials.get("region", "us-east-1"),
        amz_date=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
        session_token=credentials.get("aws_session_token", ""),
    )


class Nodes:
    """The three ``dynastore serve --cluster`` nodes of a local cluster."""

    def __init__(
        self,
        directory: Path,
        ports: Ports,
        etcd_endpoints: str,
        serve_flags: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
    ) -> None:
        self.directory = directory
        self.ports = ports
        self.etcd_endpoints = etcd_endpoints
        self.serve_flags = tuple(serve_flags)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.credentials = credentials  # signs GET /dynastore/cluster when the nodes run with --auth sigv4
        self.names = tuple(f"n{i + 1}" for i in range(len(ports.nodes)))
        self.processes: list[_Process] = []

    @property
    def urls(self) -> list[str]:
        return [_url(self.ports.host, p) for p in self.ports.nodes]

    def command(self, index: int) -> list[str]:
        name = self.names[index]
        return [
            sys.executable,
            "-m",
            "dynastore",
            "serve",
            "--cluster",
            self.etcd_endpoints,
            "--node-name",
            name,
            "--host",
            self.ports.host,
            "--port",
            str(self.ports.nodes[index]),
            "--data-dir",
            str(self.directory / "nodes" / name),
            *self.serve_flags,
        ]

    def start(self, timeout: float = 60.0) -> dict[str, Any]:
        """Start every node and wait until all of them answer, name the same leader and know every node; the
        leader's status."""
        for i, name in enumerate(self.names):
            self.processes.append(_Process(f"node {name}", self.command(i), self.directory, self.env))
        return self.wait_for_leader(timeout)

    def stop_one(self, index: int, timeout: float = NODE_STOP_TIMEOUT) -> int:
        """Stop node ``index`` (SIGTERM) while the others go on; its exit code."""
        process = self.processes[index]
        _stop_together([process], timeout)
        return int(process.process.returncode)

    def start_one(self, index: int) -> None:
        """Start node ``index`` again (after it stopped or was killed); it catches up from etcd by itself."""
        name = self.names[index]
        self.processes[index] = _Process(f"node {name}", self.command(index), self.directory, self.env)

    def wait_for_leader(self, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        statuses: list[dict[str, Any]] = []

        def agreed() -> bool:
            statuses[:] = [self._status_or_empty(url) for url in self.urls]
            leaders = {s.get("leader") for s in statuses}
            settled = all(s.get("role") != "starting" and len(s.get("nodes", ())) == len(self.names) for s in statuses)
            # (a leader key left by a node's earlier run names it until that run's lease lapses: the node it names
            # must lead now)
            leading = any(s.get("role") == "leader" for s in statuses)
            return len(leaders) == 1 and None not in leaders and settled and leading

        while not agreed():
            for process in self.processes:
                code = process.exited()
                if code is not None:
                    raise _failure(process, f"{process.name} exited with {code} before a leader was known")
            if time.monotonic() > deadline:
                raise _failure(self.processes[0], "the nodes named no common leader in time")
            time.sleep(_POLL)
        return next(s for s in statuses if s.get("role") == "leader") if statuses else {}

    def _status_or_empty(self, url: str) -> dict[str, Any]:
        try:
            return fetch_status(url, self.credentials, timeout=2)
        except (OSError, ValueError):
            return {}

    def stop(self, timeout: float = NODE_STOP_TIMEOUT) -> None:
        _stop_together(self.processes, timeout)
        self.processes.clear()


class LocalCluster:
    """Three etcd members and three dynastore nodes under ``directory`` (see the module's docstring)."""

    def __init__(
        self,
        directory: Path,
        *,
        host: str = "127.0.0.1",
        serve_flags: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
        etcd_binary: str = ETCD_BINARY,
    ) -> None:
        self.directory = directory
        self.ports = self._ports(directory, host)
        self.etcd = EtcdMembers(directory, self.ports, self._token(directory), etcd_binary)
        secret = {"DYNASTORE_CLUSTER_SECRET": self._secret(directory)}
        self.nodes = Nodes(
            directory, self.ports, self.etcd.endpoints, serve_flags, {**secret, **(env or {})}, credentials
        )

    @staticmethod
    def _ports(directory: Path, host: str) -> Ports:
        """The ports of an earlier start from this directory, else new free ones (recorded for the next start)."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "logs").mkdir(exist_ok=True)
        recorded = directory / "cluster.json"
        if recorded.exists():
            ports = Ports.load(recorded)
            if ports.host != host:
                raise ClusterError(f"{directory} holds a cluster on {ports.host}, not {host}: use another directory")
            return ports
        ports = Ports.free(host)
        ports.save(recorded)
        return ports

    @staticmethod
    def _token(directory: Path) -> str:
        path = directory / "etcd-token"
        if not path.exists():
            path.write_text("dynastore-" + secrets.token_hex(8) + "\n")
        return path.read_text().strip()

    @staticmethod
    def _secret(directory: Path) -> str:
        """The secret one node shows another for what only nodes may ask (a copy of a store, reports of reads),
        readable by its owner only; DYNASTORE_CLUSTER_SECRET in ``env`` or the environment wins."""
        given = os.environ.get("DYNASTORE_CLUSTER_SECRET")
        if given:
            return given
        path = directory / "cluster-secret"
        if not path.exists():
            path.touch(mode=0o600)
            path.write_text(secrets.token_urlsafe(32) + "\n")
        return path.read_text().strip()

    @property
    def urls(self) -> list[str]:
        """The nodes' endpoints (any of them takes any request)."""
        return self.nodes.urls

    def start(self, timeout: float = 90.0) -> dict[str, Any]:
        """Start etcd, then the nodes; the leader's GET /dynastore/cluster once every node agrees on it. On a
        failure everything started is stopped and ClusterError says why."""
        busy = [p for p in self.ports.every() if _in_use(self.ports.host, p)]
        if busy:
            raise ClusterError(
                f"port {busy[0]} (recorded in {self.directory / 'cluster.json'}) is in use: another cluster runs "
                "from this directory, or something else took the port (stop it, or use another directory)"
            )
        deadline = time.monotonic() + timeout
        try:
            self.etcd.start(timeout)
            return self.nodes.start(max(1.0, deadline - time.monotonic()))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Nodes first (each closes its store), then etcd."""
        try:
            self.nodes.stop()
        finally:
            self.etcd.stop()

    def status(self, index: int = 0) -> dict[str, Any]:
        return fetch_status(self.urls[index], self.nodes.credentials)

    def exited(self) -> list[tuple[str, int]]:
        """(name, exit code) of every process that has exited although it was not stopped."""
        found = []
        for process in (*self.etcd.processes, *self.nodes.processes):
            code = process.exited()
            if code is not None:
                found.append((process.name, code))
        return found

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
