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
from tests.cluster.nemesis import LINK_KINDS, Schedule, cut_off, heal
from tests.cluster.processes import Service

SERVER_KINDS = ("kill-server", "restart", "pause-server")
KINDS = (*SERVER_KINDS, *LINK_KINDS)
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
        if kind in SERVER_KINDS:
            return server_fault(kind, region.server)
        others = [r.host for r in self.regions.regions if r is not region]
        return cut_off(self.regions.network, kind, region.host, others)

    def heal_all(self) -> None:
        """Every link plugged, every filter gone, every server resumed and running."""
        for region in self.regions.regions:
            heal(self.regions.network, region.host, [region.server])


def server_fault(kind: str, server: Service) -> Callable[[], None]:
    """Inflict ``kind`` on a region's server: kill-server (kill -9), restart (SIGTERM), pause-server (SIGSTOP).
    What heals it: the server started again on its data directory, or resumed."""
    if kind == "kill-server":
        server.kill()
        return server.start
    if kind == "restart":
        server.stop()
        return server.start
    if kind == "pause-server":
        server.pause()
        return server.resume
    raise ValueError(f"not a server fault: {kind}")
