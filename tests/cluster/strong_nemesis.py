"""The MRSC run's nemesis: one fault at a time against one region, chosen by a seeded random source, each healed
before the next and all healed before the load ends (the schedule is tests/cluster/nemesis.py's).

kill-server    kill -9 a region's server; start it again on its data directory
pause-server   SIGSTOP a region's server for a few seconds, then SIGCONT
kill-etcd      kill -9 a region's etcd member (the witness's too); start it again
link-down      unplug a region's link: its server and its etcd member cut off from the other regions and clients
one-way-out    a region's packets to the other regions dropped (its etcd member's votes and appends among them)
one-way-in     the other regions' packets to it dropped
"""

from __future__ import annotations

from collections.abc import Callable

from tests.cluster.global_nemesis import server_fault
from tests.cluster.nemesis import LINK_KINDS, Schedule, cut_off, heal
from tests.cluster.strong_regions import Site, StrongRegions

KINDS = ("kill-server", "pause-server", "kill-etcd", *LINK_KINDS)
SERVER_KINDS = ("kill-server", "pause-server")
HOLD = (3.0, 8.0)
PAUSE_HOLD = (2.0, 5.0)  # SIGSTOP: a few seconds
GAP = (2.0, 5.0)


class StrongNemesis(Schedule[Site]):
    """Faults against one region at a time of ``regions``, from now until ``stop_at`` (time.monotonic())."""

    def __init__(self, regions: StrongRegions, seed: int, origin: float, hold: tuple[float, float] = HOLD,
                 gap: tuple[float, float] = GAP, say: Callable[[str], object] = print) -> None:  # fmt: skip
        super().__init__(KINDS, seed, origin, hold, gap, say)
        self.regions = regions

    def _hold(self, kind: str, drawn: float) -> float:
        return self.rng.uniform(*PAUSE_HOLD) if kind == "pause-server" else drawn

    def _target(self, kind: str) -> Site | None:
        """A region with a server for a server's faults; any region (the witness too) for the others."""
        sites = self.regions.sites
        return self.rng.choice([s for s in sites if s.region is not None] if kind in SERVER_KINDS else sites)

    def _apply(self, kind: str, site: Site) -> Callable[[], None]:
        if kind in SERVER_KINDS:
            assert site.region is not None
            return server_fault(kind, site.region.server)
        if kind == "kill-etcd":
            site.etcd.kill()
            return site.etcd.start
        others = [s.host for s in self.regions.sites if s is not site]
        return cut_off(self.regions.network, kind, site.host, others)

    def heal_all(self) -> None:
        """Every link plugged, every filter gone, every process resumed and running."""
        for site in self.regions.sites:
            heal(self.regions.network, site.host, site.services)
