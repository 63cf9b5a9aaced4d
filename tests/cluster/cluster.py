"""A run's cluster: three namespaces, each with an etcd member and (once started) a dynastore node."""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from pathlib import Path

from tests.cluster import etcd, nodes
from tests.cluster.netns import Host, Network
from tests.cluster.processes import Service


@dataclass
class Member:
    """One host of the cluster and the two programs it runs."""

    host: Host
    etcd: Service
    node: Service | None

    @property
    def name(self) -> str:
        return etcd.member_name(self.host.index)

    @property
    def url(self) -> str:
        return nodes.node_url(self.host.address)

    def services(self) -> list[Service]:
        return [s for s in (self.node, self.etcd) if s is not None]


class Cluster:
    """Built by ``start``, taken down by ``destroy`` whatever happened in between (logs stay in ``workdir``)."""

    def __init__(self, workdir: Path, with_nodes: bool = True) -> None:
        self.workdir = workdir
        self.with_nodes = with_nodes
        self.network = Network()
        self.members: list[Member] = []

    def start(self, timeout: float = 60) -> None:
        self.network.create()
        addresses = [h.address for h in self.network.hosts]
        token = f"dynastore-faults-{self.network.run_id}"
        for host in self.network.hosts:
            home = self.workdir / etcd.member_name(host.index)
            home.mkdir(parents=True, exist_ok=True)
            member_etcd = Service(f"etcd {host.index}", host.namespace,
                                  etcd.etcd_argv(host.index, host.address, home / "etcd", addresses, token),
                                  home / "etcd.log")  # fmt: skip
            node = None
            if self.with_nodes:
                node = Service(f"dynastore {host.index}", host.namespace,
                               nodes.node_argv(host.index, host.address, home / "data", addresses),
                               home / "node.log", nodes.node_env())  # fmt: skip
            self.members.append(Member(host, member_etcd, node))
        for member in self.members:
            member.etcd.start()
        self.wait_etcd_healthy(timeout)
        for member in self.members:
            if member.node is not None:
                member.node.start()
        if self.with_nodes:
            self.wait_nodes_ready(timeout)

    def destroy(self) -> None:
        for member in self.members:
            for service in member.services():
                service.kill()
        self.network.destroy()

    def dump_stacks(self) -> None:
        """Each running node writes its threads' and tasks' stacks to its log (tests/cluster/launch.py)."""
        for member in self.members:
            if member.node is not None and member.node.running:
                member.node.signal(signal.SIGUSR1)
        time.sleep(0.5)
        for member in self.members:
            if member.node is not None and member.node.running:
                member.node.signal(signal.SIGUSR2)
        time.sleep(1.0)

    @property
    def addresses(self) -> list[str]:
        return [m.host.address for m in self.members]

    @property
    def urls(self) -> list[str]:
        return [m.url for m in self.members]

    def etcd_leader(self) -> Member | None:
        """The member etcd's Raft leader runs in, as a majority of the answering members see it."""
        statuses = {m.host.index: etcd.member_status(m.host.address) for m in self.members}
        ids = {s.member_id: index for index, s in statuses.items() if s is not None}
        votes = [s.leader for s in statuses.values() if s is not None and s.leader in ids]
        if not votes:
            return None
        leader = max(set(votes), key=votes.count)
        return self.members[ids[leader] - 1]

    def node_leader(self) -> Member | None:
        """The member whose dynastore node holds the write lease, as the answering nodes name it."""
        names = []
        for member in self.members:
            status = nodes.cluster_status(member.host.address, timeout=1.0)
            if status is not None and status.get("leader"):
                names.append(status["leader"])
        if not names:
            return None
        leader = max(set(names), key=names.count)
        return next((m for m in self.members if m.name == leader), None)

    def leader(self) -> Member | None:
        return self.node_leader() if self.with_nodes else self.etcd_leader()

    def wait_etcd_healthy(self, timeout: float) -> None:
        """Until every member answers and follows the same leader, and a write through each one commits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            statuses = [etcd.member_status(a) for a in self.addresses]
            leaders = {s.leader for s in statuses if s is not None}
            agreed = None not in statuses and len(leaders) == 1 and 0 not in leaders
            if agreed and all(etcd.put(a, "/faults/probe", a) for a in self.addresses):
                return
            time.sleep(0.2)
        raise RuntimeError(f"etcd members not healthy after {timeout} s: {self.workdir}/n*/etcd.log")

    def wait_nodes_ready(self, timeout: float) -> None:
        """Until every node answers, they agree on a leader, and each has applied the whole log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.caught_up() is not None:
                return
            time.sleep(0.3)
        raise RuntimeError(f"dynastore nodes not ready after {timeout} s: {self.workdir}/n*/node.log")

    def caught_up(self) -> int | None:
        """The log head, when every node agrees on the leader and has applied the log up to the same head."""
        statuses = [nodes.cluster_status(a) for a in self.addresses]
        if any(s is None for s in statuses):
            return None
        leaders = {s["leader"] for s in statuses if s is not None}
        heads = {(s["appliedIndex"], s["logHead"]) for s in statuses if s is not None}
        if len(leaders) != 1 or None in leaders or len(heads) != 1:
            return None
        applied, head = heads.pop()
        return int(head) if applied == head else None
