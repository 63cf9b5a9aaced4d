"""A global tables run's regions: two or three network namespaces, each with one dynastore server serving its region
and replicating with the others (``--peer REGION=URL``), durable on a data directory of its own."""

from __future__ import annotations

import signal
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from tests.cluster.clients import CREDENTIALS, LOAD_CONFIG
from tests.cluster.netns import Host, Network
from tests.cluster.nodes import node_env
from tests.cluster.processes import Service

REGION_NAMES = ("us-east-1", "us-west-2", "eu-west-1")
PREFIX = "dsg"  # the names of this harness's namespaces and links (the etcd cluster's harness uses "dsf")
PORT = 8000


def region_url(address: str) -> str:
    return f"http://{address}:{PORT}"


@dataclass
class Region:
    """One namespace and the server that serves its region."""

    name: str
    host: Host
    server: Service

    @property
    def url(self) -> str:
        return region_url(self.host.address)

    def client(self, config: Config = LOAD_CONFIG) -> Any:
        """A DynamoDB client of this region: it signs for the region, so its requests land in the region's tables
        (a server keeps a namespace per region of the credential scope)."""
        credentials = {**CREDENTIALS, "region_name": self.name}
        return boto3.session.Session().client("dynamodb", endpoint_url=self.url, config=config, **credentials)


def server_argv(name: str, address: str, data_dir: Path, peers: dict[str, str]) -> list[str]:
    """The server of region ``name`` as an operator would run it, told where every other region is served."""
    return [
        sys.executable, "-m", "tests.cluster.launch", "serve",  # dynastore's command line, stacks on request
        f"--region={name}",
        *(f"--peer={region}={url}" for region, url in sorted(peers.items())),
        f"--host={address}",
        f"--port={PORT}",
        f"--data-dir={data_dir}",
        "--auth=none",
        "--capacity=report",  # the load must not be throttled: what is checked is replication, not admission
    ]  # fmt: skip


def region_server(name: str, host: Host, home: Path, urls: dict[str, str], *options: str) -> Region:
    """Region ``name`` in ``host``'s namespace, its server told where every other of ``urls`` is served (and given
    ``options`` besides), its data and log under ``home``."""
    peers = {other: url for other, url in urls.items() if other != name}
    argv = [*server_argv(name, host.address, home / "data", peers), *options]
    return Region(name, host, Service(name, host.namespace, argv, home / "server.log", node_env()))


class RegionServers:
    """What a run's regions share, whatever else runs in them: their network, their servers (``regions``, the
    subclass's), a home per region in ``workdir``; waiting for the servers, their stacks, taking it all down."""

    def __init__(self, workdir: Path, network: Network) -> None:
        self.workdir = workdir
        self.network = network

    @property
    def regions(self) -> list[Region]:
        """The regions that serve the table."""
        raise NotImplementedError

    @property
    def names(self) -> list[str]:
        return [region.name for region in self.regions]

    def services(self) -> list[Service]:
        """Every process of the run, in the order ``destroy`` kills them (the servers here)."""
        return [region.server for region in self.regions]

    def home(self, name: str) -> Path:
        """Region ``name``'s directory (made if need be): its data and its logs."""
        home = self.workdir / name
        home.mkdir(parents=True, exist_ok=True)
        return home

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
        for service in self.services():
            service.kill()
        self.network.destroy()

    def dump_stacks(self) -> None:
        """Each running server writes its threads' and tasks' stacks to its log (tests/cluster/launch.py)."""
        for signum in (signal.SIGUSR1, signal.SIGUSR2):
            for region in self.regions:
                if region.server.running:
                    region.server.signal(signum)
            time.sleep(1.0)


class Regions(RegionServers):
    """Built by ``start``, taken down by ``destroy`` whatever happened in between (logs stay in ``workdir``)."""

    def __init__(self, workdir: Path, count: int) -> None:
        if not 2 <= count <= len(REGION_NAMES):
            raise ValueError(f"a run has 2 to {len(REGION_NAMES)} regions, not {count}")
        super().__init__(workdir, Network(count, PREFIX))
        self._regions: list[Region] = []

    @property
    def regions(self) -> list[Region]:
        return self._regions

    def start(self, timeout: float = 60) -> None:
        self.network.create()
        names = REGION_NAMES[: self.network.count]
        urls = {name: region_url(host.address) for name, host in zip(names, self.network.hosts, strict=True)}
        for name, host in zip(names, self.network.hosts, strict=True):
            self._regions.append(region_server(name, host, self.home(name), urls))
        for region in self.regions:
            region.server.start()
        self.wait_ready(timeout)


def healthy(url: str, timeout: float = 1.0) -> bool:
    request = urllib.request.Request(f"{url}/", headers={"Host": url.split("/")[2]})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def get_text(url: str, timeout: float = 5.0) -> str | None:
    """The body of a GET (``/metrics``), or None when the server does not answer it (in time, or with a 200)."""
    request = urllib.request.Request(url, headers={"Host": url.split("/")[2]})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return str(response.read().decode())
    except OSError:
        return None
