"""A multi-region strong consistency (MRSC) run's regions: three network namespaces, each with an etcd member of the
one etcd cluster that spans the regions (the table's strong log), and, in each replica region, a dynastore server
serving that region (``--peer`` for the others, ``--strong-etcd`` for every member). A witness region runs its etcd
member and no server."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from tests.cluster import etcd
from tests.cluster.global_regions import Region, RegionServers, region_server, region_url
from tests.cluster.netns import Host, Network
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


class StrongRegions(RegionServers):
    """Built by ``start``, taken down by ``destroy`` whatever happened in between (logs stay in ``workdir``).
    With ``witness`` the last region is the set's witness."""

    def __init__(self, workdir: Path, witness: bool = False) -> None:
        super().__init__(workdir, Network(len(REGION_NAMES), PREFIX))
        self.witness = witness
        self.sites: list[Site] = []

    def start(self, timeout: float = 60) -> None:
        self.network.create()
        addresses = [host.address for host in self.network.hosts]
        token = f"dynastore-strong-{self.network.run_id}"
        serving = REGION_NAMES[:-1] if self.witness else REGION_NAMES
        urls = {name: region_url(host.address) for name, host in zip(REGION_NAMES, self.network.hosts, strict=True)
                if name in serving}  # fmt: skip
        for name, host in zip(REGION_NAMES, self.network.hosts, strict=True):
            home = self.home(name)
            member = Service(f"etcd {name}", host.namespace,
                             etcd.etcd_argv(host.index, host.address, home / "etcd", addresses, token),
                             home / "etcd.log")  # fmt: skip
            region = None
            if name in serving:
                region = region_server(name, host, home, urls, f"--strong-etcd={strong_endpoints(addresses)}")
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

    def services(self) -> list[Service]:
        """Every region's etcd member and server."""
        return [service for site in self.sites for service in site.services]

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
