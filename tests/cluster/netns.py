"""Network namespaces (three unless asked otherwise) joined by a bridge of their own: the only way into or out of a
namespace is its link.

Every name made here starts with a prefix (PREFIX for the etcd cluster's runs, another for the global tables'
runs) and the id of the process that made it, so that two runs never share a name and a run can tell its own
leftovers (those whose process is gone) from a run still going.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from dataclasses import dataclass

PREFIX = "dsf"
NODE_COUNT = 3
SUBNET = "10.77"  # the run's hosts are SUBNET.<free octet>.1-3; the bridge's own address is .254


def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``argv`` run to completion; a failure raises with what the command printed."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return done


def in_namespace(namespace: str, *argv: str) -> list[str]:
    """The command line that runs ``argv`` inside ``namespace`` (ip execs it: the process keeps the same pid)."""
    return ["ip", "netns", "exec", namespace, *argv]


@dataclass(frozen=True)
class Host:
    """One namespace: its name, its address and the bridge port its link is plugged into."""

    index: int
    namespace: str
    address: str
    port: str  # the link's end on the bridge, in the root namespace: taking it down unplugs the host


class Network:
    """The bridge and the ``count`` namespaces of one run, every name starting with ``prefix``; ``create`` builds
    them, ``destroy`` takes everything away."""

    def __init__(self, count: int = NODE_COUNT, prefix: str = PREFIX) -> None:
        self.count = count
        self.prefix = prefix
        self.run_id = str(os.getpid())
        self.bridge = f"{prefix}{self.run_id}br"
        self.hosts: list[Host] = []
        self.gateway = ""

    def create(self) -> None:
        remove_leftovers(self.prefix)
        octet = free_octet()
        self.gateway = f"{SUBNET}.{octet}.254"
        run("ip", "link", "add", self.bridge, "type", "bridge")
        run("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        run("ip", "link", "set", self.bridge, "up")
        for index in range(1, self.count + 1):
            host = Host(index, f"{self.prefix}-{self.run_id}-n{index}", f"{SUBNET}.{octet}.{index}",
                        f"{self.prefix}{self.run_id}p{index}")  # fmt: skip
            self._plug(host)
            self.hosts.append(host)

    def _plug(self, host: Host) -> None:
        run("ip", "netns", "add", host.namespace)
        run("ip", "link", "add", host.port, "type", "veth", "peer", "name", "eth0", "netns", host.namespace)
        run("ip", "link", "set", host.port, "master", self.bridge)
        run("ip", "link", "set", host.port, "up")
        run("ip", "-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        run("ip", "-n", host.namespace, "link", "set", "eth0", "up")
        run("ip", "-n", host.namespace, "link", "set", "lo", "up")

    def destroy(self) -> None:
        """Every process left in the namespaces killed, the namespaces (and their links) and the bridge deleted.
        Each link is deleted first: the kernel takes a deleted namespace's links away later, and a run made next
        by the same process (the same names) would find them still there."""
        for host in self.hosts:
            run("ip", "link", "del", host.port, check=False)
            remove_namespace(host.namespace)
        run("ip", "link", "del", self.bridge, check=False)
        self.hosts = []

    def unplug(self, host: Host) -> None:
        run("ip", "link", "set", host.port, "down")

    def plug(self, host: Host) -> None:
        run("ip", "link", "set", host.port, "up")

    def drop_outgoing(self, host: Host, destinations: list[str]) -> None:
        """Packets ``host`` sends to ``destinations`` are dropped on its way out; what they send it still arrives.

        Done with tc (the kernel has no iptables here): an htb root whose default class passes everything, and a
        class whose queue holds no packet at all, into which a u32 filter sends the packets for ``destinations``.
        """
        tc = ["ip", "netns", "exec", host.namespace, "tc"]
        run(*tc, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "10")
        for klass in ("1:10", "1:20"):
            run(*tc, "class", "add", "dev", "eth0", "parent", "1:", "classid", klass, "htb", "rate", "10gbit",
                "quantum", "60000")  # fmt: skip
        run(*tc, "qdisc", "add", "dev", "eth0", "parent", "1:20", "handle", "20:", "pfifo", "limit", "0")
        for destination in destinations:
            run(*tc, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                "match", "ip", "dst", f"{destination}/32", "flowid", "1:20")  # fmt: skip

    def restore_outgoing(self, host: Host) -> None:
        run("ip", "netns", "exec", host.namespace, "tc", "qdisc", "del", "dev", "eth0", "root", check=False)


def free_octet() -> int:
    """A third octet no address of this machine uses yet, so that a run's subnet is its own."""
    shown = run("ip", "-4", "-o", "addr", "show").stdout
    used = {int(m) for m in re.findall(rf"inet {re.escape(SUBNET)}\.(\d+)\.", shown)}
    return next(octet for octet in range(256) if octet not in used)


def remove_namespace(namespace: str) -> None:
    pids = run("ip", "netns", "pids", namespace, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), 9)
    run("ip", "netns", "del", namespace, check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(prefix: str = PREFIX) -> None:
    """What an earlier run that died left behind (names starting with ``prefix`` whose process is gone) removed."""
    owned = re.compile(rf"^{re.escape(prefix)}-?(\d+)")
    for namespace in run("ip", "netns", "list").stdout.split("\n"):
        name = namespace.split(" ")[0]
        match = owned.match(name)
        if match and not _alive(int(match.group(1))):
            remove_namespace(name)
    for line in run("ip", "-o", "link", "show").stdout.splitlines():
        name = line.split(": ")[1].split("@")[0]
        match = owned.match(name)
        if match and not _alive(int(match.group(1))):
            run("ip", "link", "del", name, check=False)
