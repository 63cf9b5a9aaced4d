"""The dynastore nodes of a run: their command lines and their admin endpoints (GET /dynastore/cluster...)."""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

from tests.cluster.etcd import CLIENT_PORT, member_name

NODE_PORT = 8000


ROOT = Path(__file__).resolve().parents[2]  # the checkout: the nodes import tests.cluster.launch from it


def node_env() -> dict[str, str]:
    """The harness's environment, with the checkout on the path (the nodes run the code under test)."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def node_url(address: str) -> str:
    return f"http://{address}:{NODE_PORT}"


def node_argv(index: int, address: str, data_dir: Path, addresses: list[str]) -> list[str]:
    """Node ``index`` as an operator would run it, told every etcd member (it rotates when one fails)."""
    endpoints = ",".join(f"{a}:{CLIENT_PORT}" for a in addresses)
    return [
        sys.executable, "-m", "tests.cluster.launch", "serve",  # dynastore's command line, stacks on request
        f"--cluster=etcd://{endpoints}",
        f"--node-name={member_name(index)}",
        f"--advertise-url={node_url(address)}",
        f"--host={address}",
        f"--port={NODE_PORT}",
        f"--data-dir={data_dir}",
        "--auth=none",
        "--capacity=report",  # the load must not be throttled: what is checked is replication, not admission
    ]  # fmt: skip


def cluster_status(address: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """GET /dynastore/cluster of ``address``'s node, or None when it does not answer (in time, or with a 200)."""
    return get_json(f"{node_url(address)}/dynastore/cluster", timeout)


def digest(address: str, timeout: float = 30.0) -> dict[str, Any] | None:
    """GET /dynastore/cluster/digest: the node's name, applied index and the sha256 of its whole store."""
    return get_json(f"{node_url(address)}/dynastore/cluster/digest", timeout)


def get_json(url: str, timeout: float) -> dict[str, Any] | None:
    request = urllib.request.Request(url, headers={"Host": url.split("/")[2]})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except (OSError, ValueError):
        return None
