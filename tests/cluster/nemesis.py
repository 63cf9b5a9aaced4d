"""The nemesis: one fault at a time, chosen by a seeded random source, each healed before the next and all healed
before the load ends.

kill-node / kill-etcd / kill-both  kill -9 the leader's dynastore node, its etcd member, or both; start them again
link-down                          unplug a host's link (its bridge port down), plug it back
one-way-out / one-way-in           a host's packets to the other hosts dropped (or theirs to it): one direction only
pause-leader                       SIGSTOP the leader's node for longer than its lease, then SIGCONT
restart                            SIGTERM a node (a clean stop) and start it again

``Schedule`` is the part any nemesis shares (when, what kind, for how long), ``cut_off`` the link faults and ``heal``
what heals a host whatever struck it; ``Nemesis`` is the etcd cluster's, tests/cluster/global_nemesis.py the global
tables' regions' and tests/cluster/strong_nemesis.py the MRSC regions'.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from dynastore.replication import lease
from tests.cluster.cluster import Cluster, Member
from tests.cluster.netns import Host, Network
from tests.cluster.processes import Service

LEASE_SECONDS = float(lease.LEASE_TTL)  # how long a silent leader keeps its lease
NODE_KINDS = ("kill-node", "kill-both", "pause-leader", "restart")
LINK_KINDS = ("link-down", "one-way-out", "one-way-in")
ETCD_KINDS = ("kill-etcd", *LINK_KINDS)
T = TypeVar("T", bound="Target")


@dataclass
class Fault:
    kind: str
    target: str
    start: float
    end: float = 0.0

    def __str__(self) -> str:
        return f"{self.start:7.2f}-{self.end:7.2f} s  {self.kind:<13} {self.target}"


class Target(Protocol):
    """What a fault strikes: something with a name for the report."""

    @property
    def name(self) -> str: ...


class Schedule(Generic[T]):
    """One fault at a time until ``stop_at`` (time.monotonic()), timed from ``origin``: kinds drawn from ``kinds``,
    holds and gaps from the seed. What a kind does, and to what, is the subclass's (``_target``, ``_apply``,
    ``heal_all``)."""

    def __init__(self, kinds: tuple[str, ...], seed: int, origin: float, hold: tuple[float, float],
                 gap: tuple[float, float], say: Callable[[str], object]) -> None:  # fmt: skip
        self.rng = random.Random(seed)
        self.origin = origin
        self.hold = hold
        self.gap = gap
        self.faults: list[Fault] = []
        self.say = say
        self.kinds = kinds
        self._stop = threading.Event()
        self._bag: list[str] = []

    def run(self, stop_at: float) -> None:
        """Inject until ``stop_at`` (or ``stop``), leaving every fault healed."""
        try:
            while not self._sleep(min(self.rng.uniform(*self.gap), stop_at - time.monotonic())):
                kind = self._next_kind()
                hold = self._hold(kind, self.rng.uniform(*self.hold))
                if time.monotonic() + hold > stop_at:
                    break
                self.inject(kind, hold)
        finally:
            self.heal_all()

    def _hold(self, kind: str, drawn: float) -> float:
        """How long ``kind`` is held, given the hold drawn for it."""
        return drawn

    def _next_kind(self) -> str:
        """Kinds are drawn from a shuffled bag holding each once: a short run sees each kind before any twice."""
        if not self._bag:
            self._bag = list(self.kinds)
            self.rng.shuffle(self._bag)
        return self._bag.pop()

    def stop(self) -> None:
        self._stop.set()

    def _sleep(self, seconds: float) -> bool:
        """Whether the nemesis should stop (asked to, or out of time) after waiting ``seconds``."""
        return seconds <= 0 or self._stop.wait(seconds)

    def _now(self) -> float:
        return time.monotonic() - self.origin

    def inject(self, kind: str, hold: float) -> None:
        target = self._target(kind)
        if target is None:
            return
        fault = Fault(kind, target.name, self._now())
        self.faults.append(fault)
        heal = self._apply(kind, target)
        self._stop.wait(hold)
        heal()
        fault.end = self._now()
        self.say(f"fault healed: {fault}")

    def _target(self, kind: str) -> T | None:
        raise NotImplementedError

    def _apply(self, kind: str, target: T) -> Callable[[], None]:
        """Inflict ``kind`` on ``target``; what heals it."""
        raise NotImplementedError

    def heal_all(self) -> None:
        raise NotImplementedError

    def summary(self) -> str:
        counts = Counter(f.kind for f in self.faults)
        return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) or "none"


class Nemesis(Schedule[Member]):
    """Faults against ``cluster`` from now until ``stop_at`` (time.monotonic()), timed from ``origin``."""

    def __init__(self, cluster: Cluster, seed: int, origin: float, hold: tuple[float, float] = (2.0, 6.0),
                 gap: tuple[float, float] = (2.0, 5.0), say: Callable[[str], object] = print) -> None:  # fmt: skip
        super().__init__(ETCD_KINDS + (NODE_KINDS if cluster.with_nodes else ()), seed, origin, hold, gap, say)
        self.cluster = cluster

    def _hold(self, kind: str, drawn: float) -> float:
        return LEASE_SECONDS + self.rng.uniform(1.0, 3.0) if kind == "pause-leader" else drawn

    def _target(self, kind: str) -> Member | None:
        """The leader for faults of the leader (None while there is none), else any host, the leader half the time."""
        leader = self.cluster.leader()
        if kind in ("kill-node", "kill-etcd", "kill-both", "pause-leader"):
            return leader
        if leader is not None and self.rng.random() < 0.5:
            return leader
        return self.rng.choice(self.cluster.members)

    def _apply(self, kind: str, member: Member) -> Callable[[], None]:
        """Inflict ``kind`` on ``member``; what heals it."""
        network, others = self.cluster.network, [m for m in self.cluster.members if m is not member]
        node, member_etcd = member.node, member.etcd
        if kind in ("kill-node", "kill-both", "restart", "pause-leader") and node is None:
            raise ValueError(f"{kind} needs dynastore nodes")
        if kind == "kill-etcd":
            member_etcd.kill()
            return member_etcd.start
        if kind in ("kill-node", "kill-both") and node is not None:
            node.kill()
            if kind == "kill-both":
                member_etcd.kill()
            return each(member_etcd.start, node.start)
        if kind == "restart" and node is not None:
            node.stop()
            return node.start
        if kind == "pause-leader" and node is not None:
            node.pause()
            return node.resume
        if kind in LINK_KINDS:
            return cut_off(network, kind, member.host, [m.host for m in others])
        raise ValueError(f"unknown fault {kind}")

    def heal_all(self) -> None:
        """Every link plugged, every filter gone, every process resumed and running."""
        for member in self.cluster.members:
            heal(self.cluster.network, member.host, member.services())


def cut_off(network: Network, kind: str, host: Host, others: list[Host]) -> Callable[[], None]:
    """Inflict link fault ``kind`` on ``host``: link-down unplugs its link, one-way-out drops its packets to
    ``others``, one-way-in theirs to it. What heals it."""
    if kind == "link-down":
        network.unplug(host)
        return lambda: network.plug(host)
    if kind == "one-way-out":
        network.drop_outgoing(host, [other.address for other in others])
        return lambda: network.restore_outgoing(host)
    if kind == "one-way-in":
        for other in others:
            network.drop_outgoing(other, [host.address])
        return each(*(lambda o=o: network.restore_outgoing(o) for o in others))
    raise ValueError(f"not a link fault: {kind}")


def heal(network: Network, host: Host, services: list[Service]) -> None:
    """``host``'s link plugged and its filters gone, each of ``services`` (its processes) resumed and running."""
    network.plug(host)
    network.restore_outgoing(host)
    for service in services:
        service.resume()
        service.start()


def each(*heals: Callable[[], None]) -> Callable[[], None]:
    def heal() -> None:
        for one in heals:
            one()

    return heal
