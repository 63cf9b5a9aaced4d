"""A multi-region strong consistency (MRSC) run's regions: three network namespaces, each with an etcd member of the
one etcd cluster that spans the regions (the table's strong log), and, in each replica region, a dynastore server
serving that region (``--peer`` for the others, ``--strong-etcd`` for every member). A witness region runs its etcd
member and no server."""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from pathlib import Path

from tests.cluster import etcd
from tests.cluster.global_regions import Region, healthy, region_url, server_argv
from tests.cluster.netns import Host, Network
from tests.cluster.nodes import node_env
from tests.cluster.processes import Service

REGION_NAMES = ("us-east-1", "us-east-2", "us-west-2")  # one region set, as DynamoDB requires of MRSC replicas
PREFIX = "dss"  # the names of this harness's namespaces and links ("dsf": the etcd cluster's, "dsg": MREC's)


@dataclass
class Site:
    """One region's namespace: its etcd member and, unless it is the witness, its server (``region``)."""

    name: str
    host: Host
    etcd: Service
    region: Region | None

    @property
    def services(self) -> list[Service]:
        return [self.etcd] + ([self.region.server] if self.region is not None else [])


def strong_endpoints(addresses: list[str]) -> str:
    """``--strong-etcd``'s value: every member's client address, so that a server rotates when one fails."""
    return ",".join(f"{address}:{etcd.CLIENT_PORT}" for address in addresses)


class StrongRegions:
    """Built by ``start``, taken down by ``destroy`` whatever happened in between (logs stay in ``workdir``).
    With ``witness`` the last region is the set's witness."""

    def __init__(self, workdir: Path, witness: bool = False) -> None:
        self.workdir = workdir
        self.witness = witness
        self.network = Network(len(REGION_NAMES), PREFIX)
        self.sites: list[Site] = []

    def start(self, timeout: float = 60) -> None:
        self.network.create()
        addresses = [host.address for host in self.network.hosts]
        token = f"dynastore-strong-{self.network.run_id}"
        serving = REGION_NAMES[:-1] if self.witness else REGION_NAMES
        urls = {name: region_url(host.address) for name, host in zip(REGION_NAMES, self.network.hosts, strict=True)
                if name in serving}  # fmt: skip
        for name, host in zip(REGION_NAMES, self.network.hosts, strict=True):
            home = self.workdir / name
            home.mkdir(parents=True, exist_ok=True)
            member = Service(f"etcd {name}", host.namespace,
                             etcd.etcd_argv(host.index, host.address, home / "etcd", addresses, token),
                             home / "etcd.log")  # fmt: skip
            region = None
            if name in serving:
                peers = {other: url for other, url in urls.items() if other != name}
                argv = [*server_argv(name, host.address, home / "data", peers),
                        f"--strong-etcd={strong_endpoints(addresses)}"]  # fmt: skip
                region = Region(name, host, Service(name, host.namespace, argv, home / "server.log", node_env()))
            self.sites.append(Site(name, host, member, region))
        for site in self.sites:
            site.etcd.start()
        self.wait_etcd_healthy(timeout)
        for region in self.regions:
            region.server.start()
        self.wait_ready(timeout)

    @property
    def regions(self) -> list[Region]:
        """The regions that serve the table (the witness serves none)."""
        return [site.region for site in self.sites if site.region is not None]

    @property
    def names(self) -> list[str]:
        return [region.name for region in self.regions]

    @property
    def witness_name(self) -> str | None:
        return REGION_NAMES[-1] if self.witness else None

    def wait_etcd_healthy(self, timeout: float) -> None:
        """Until every member answers and follows the same leader, and a write through each one commits."""
        deadline = time.monotonic() + timeout
        addresses = [site.host.address for site in self.sites]
        while time.monotonic() < deadline:
            statuses = [etcd.member_status(a) for a in addresses]
            leaders = {s.leader for s in statuses if s is not None}
            agreed = None not in statuses and len(leaders) == 1 and 0 not in leaders
            if agreed and all(etcd.put(a, "/strong-faults/probe", a) for a in addresses):
                return
            time.sleep(0.2)
        raise RuntimeError(f"etcd members not healthy after {timeout} s: {self.workdir}/*/etcd.log")

    def wait_ready(self, timeout: float) -> None:
        """Every server answers its health check."""
        deadline = time.monotonic() + timeout
        waiting = list(self.regions)
        while waiting:
            waiting = [r for r in waiting if not healthy(r.url)]
            for region in waiting:
                if not region.server.running:
                    raise RuntimeError(f"the server of {region.name} exited; see {region.server.log}")
            if waiting and time.monotonic() > deadline:
                raise RuntimeError(f"not answering after {timeout} s: {', '.join(r.name for r in waiting)}")
            time.sleep(0.2)

    def destroy(self) -> None:
        for site in self.sites:
            for service in site.services:
                service.kill()
        self.network.destroy()

    def dump_stacks(self) -> None:
        """Each running server writes its threads' and tasks' stacks to its log (tests/cluster/launch.py)."""
        for signum in (signal.SIGUSR1, signal.SIGUSR2):
            for region in self.regions:
                if region.server.running:
                    region.server.signal(signum)
            time.sleep(1.0)
