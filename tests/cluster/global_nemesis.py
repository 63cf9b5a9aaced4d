"""The global tables' nemesis: one fault at a time against one region, chosen by a seeded random source, each
healed before the next and all healed before the load ends (the schedule is tests/cluster/nemesis.py's).

kill-server    kill -9 a region's server; start it again on its data directory
restart        SIGTERM a region's server (a clean stop); start it again
pause-server   SIGSTOP a region's server, then SIGCONT (its peers' requests hang, then time out)
link-down      unplug a region's link (its bridge port down): cut off from its peers and from the clients
one-way-out    a region's packets to the other regions dropped: it takes requests, its replication never arrives
one-way-in     the other regions' packets to it dropped: what it sends arrives, their answers (and changes) do not
"""

from __future__ import annotations

from collections.abc import Callable

from tests.cluster.global_regions import Region, Regions
from tests.cluster.nemesis import Schedule, each

KINDS = ("kill-server", "restart", "pause-server", "link-down", "one-way-out", "one-way-in")
HOLD = (3.0, 10.0)  # seconds a fault lasts: a region cut off for some seconds must catch up when it returns
GAP = (2.0, 5.0)


class RegionNemesis(Schedule[Region]):
    """Faults against one region at a time of ``regions``, from now until ``stop_at`` (time.monotonic())."""

    def __init__(self, regions: Regions, seed: int, origin: float, hold: tuple[float, float] = HOLD,
                 gap: tuple[float, float] = GAP, say: Callable[[str], object] = print) -> None:  # fmt: skip
        super().__init__(KINDS, seed, origin, hold, gap, say)
        self.regions = regions

    def _target(self, kind: str) -> Region | None:
        return self.rng.choice(self.regions.regions)

    def _apply(self, kind: str, region: Region) -> Callable[[], None]:
        network, server = self.regions.network, region.server
        others = [r.host.address for r in self.regions.regions if r is not region]
        if kind == "kill-server":
            server.kill()
            return server.start
        if kind == "restart":
            server.stop()
            return server.start
        if kind == "pause-server":
            server.pause()
            return server.resume
        if kind == "link-down":
            network.unplug(region.host)
            return lambda: network.plug(region.host)
        if kind == "one-way-out":
            network.drop_outgoing(region.host, others)
            return lambda: network.restore_outgoing(region.host)
        if kind == "one-way-in":
            hosts = [r.host for r in self.regions.regions if r is not region]
            for host in hosts:
                network.drop_outgoing(host, [region.host.address])
            return each(*(lambda h=h: network.restore_outgoing(h) for h in hosts))
        raise ValueError(f"unknown fault {kind}")

    def heal_all(self) -> None:
        """Every link plugged, every filter gone, every server resumed and running."""
        for region in self.regions.regions:
            self.regions.network.plug(region.host)
            self.regions.network.restore_outgoing(region.host)
            region.server.resume()
            region.server.start()
