"""``dynastore cluster up|status`` (docs/cluster.md): start a three-replica cluster on this machine for trying it,
and show a running cluster's nodes, leader, applied indexes and lag.

``up`` runs in the foreground (replication/local_cluster.py does the work): it prints the nodes' endpoints once
every node names the same leader, reports a process that exits on its own (a node killed to watch a failover), and
on Ctrl-C or SIGTERM stops the nodes, then etcd. ``status`` reads GET /dynastore/cluster of any node.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

from dynastore.admin.api_clients import add_client_options
from dynastore.admin.partitions_cli import endpoint_url, signer_from
from dynastore.replication.local_cluster import CLUSTER_PATH, ClusterError, LocalCluster

__all__ = ["DEFAULT_DIRECTORY", "add_cluster_command", "format_status", "run"]

DEFAULT_DIRECTORY = Path("dynastore-cluster")
_WATCH_INTERVAL = 0.5


def add_cluster_command(commands: Any, endpoint: str) -> None:
    cmd = commands.add_parser(
        "cluster",
        help="start a three-replica cluster on this machine, or show a running cluster (docs/cluster.md)",
        description="Start a three-replica cluster on this machine for trying it, or show a running cluster.",
    )
    actions = cmd.add_subparsers(dest="cluster_command", required=True)
    up = actions.add_parser(
        "up",
        help="start three etcd members and three dynastore nodes; Ctrl-C stops them all",
        description="Start three etcd members and three `dynastore serve --cluster` nodes on free local ports, "
        "print the nodes' endpoints once a leader is known, and keep them running until Ctrl-C or SIGTERM, which "
        "stops the nodes, then etcd. A directory that held a cluster starts the same cluster again (same ports, "
        "same data).",
    )
    up.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DIRECTORY,
        metavar="DIR",
        help=f"where the members, nodes and logs keep their files (default: ./{DEFAULT_DIRECTORY})",
    )
    up.add_argument("--host", default="127.0.0.1", help="the address everything listens on (default: 127.0.0.1)")
    up.add_argument(
        "--flags",
        default="",
        metavar="FLAGS",
        help='more `dynastore serve` flags for every node, as one string (e.g. "--auth sigv4 --log-requests")',
    )
    up.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for etcd and a leader (default: 90)")
    status = actions.add_parser(
        "status",
        help="a running cluster's nodes, leader, applied indexes and lag (from any node)",
        description="Show a running cluster's nodes, leader, applied indexes and replication lag, as one of its "
        "nodes sees them (GET /dynastore/cluster).",
    )
    add_client_options(status, endpoint)
    status.add_argument("--json", action="store_true", help="print the node's JSON answer as it is")


def run(args: argparse.Namespace) -> int:
    if args.cluster_command == "up":
        return run_up(args)
    return run_status(args)


# ---- up ---------------------------------------------------------------------------------------------------------
class _Stopped(Exception):
    """Ctrl-C or SIGTERM: stop everything (the first signal; later ones are ignored while stopping)."""


def _on_signal(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Stopped(signal.Signals(signum).name)


def run_up(args: argparse.Namespace) -> int:
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            cluster = LocalCluster(args.data_dir.absolute(), host=args.host, serve_flags=shlex.split(args.flags))
            leader = cluster.start(args.timeout)
        except ClusterError as e:
            return _fail("up", str(e))
        except _Stopped:
            return 0  # LocalCluster.start stopped what it had started
        try:
            _say(started_lines(cluster, leader))
            _watch(cluster)
        except _Stopped:
            _say(["stopping the nodes, then etcd"])
            cluster.stop()
            _say(["stopped"])
        return 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def started_lines(cluster: LocalCluster, leader: dict[str, Any]) -> list[str]:
    """What ``up`` prints once a leader is known: one line per node (the endpoints), then where things are."""
    lines = [f"etcd {cluster.etcd.endpoints}"]
    for name, url in zip(cluster.nodes.names, cluster.urls, strict=True):
        lines.append(f"node {name} {url}" + (" (leader)" if name == leader.get("leader") else ""))
    lines.append(f"data and logs in {cluster.directory}")
    lines.append(f"status: dynastore cluster status --endpoint {cluster.urls[0]}")
    lines.append("Ctrl-C stops the nodes, then etcd")
    return lines


def _watch(cluster: LocalCluster) -> None:
    """Until a signal: say once when a process exits by itself (the others go on: a cluster outlives one loss)."""
    told: set[str] = set()
    while True:
        time.sleep(_WATCH_INTERVAL)
        for name, code in cluster.exited():
            if name not in told:
                told.add(name)
                _say([f"{name} exited with {code}; the others go on (its log is in {cluster.directory / 'logs'})"])


def _say(lines: list[str]) -> None:
    for line in lines:
        print(f"dynastore cluster: {line}", flush=True)


# ---- status -----------------------------------------------------------------------------------------------------
def run_status(args: argparse.Namespace) -> int:
    base = endpoint_url(args.endpoint)
    bundle = args.ca_bundle or os.environ.get("AWS_CA_BUNDLE")
    context = ssl.create_default_context(cafile=bundle) if bundle else None
    url = base + CLUSTER_PATH
    headers = signer_from(args).headers("GET", url, {"Content-Type": "application/json"}, b"")
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10, context=context) as r:
            status = json.loads(r.read())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return _fail("status", f"{base} is not part of a cluster (it was started without --cluster)")
        return _fail("status", f"{base} refused: {_refusal(e)}")
    except urllib.error.URLError as e:
        return _fail("status", f"cannot reach {base}: {e.reason}: is a dynastore node running there?")
    except (OSError, ValueError) as e:
        return _fail("status", f"cannot reach {base}: {e}")
    if not isinstance(status, dict):
        return _fail("status", f"{base} answered something else than a cluster's status")
    print(json.dumps(status, indent=2) if args.json else format_status(status))
    return 0


def format_status(status: dict[str, Any]) -> str:
    """GET /dynastore/cluster as a table: one row per node, with its lag (log head minus its applied index)."""
    head = int(status.get("logHead", 0))
    leader = status.get("leader")
    lines = [
        f"leader: {leader} {status.get('leaderUrl') or ''}".rstrip()
        if leader
        else "leader: none known (an election is under way, or etcd has no majority)",
        f"log head: {head}; leader changes seen by {status.get('node')}: {status.get('leaderChanges', 0)}",
        "",
        f"{'node':<12} {'role':<9} {'url':<28} {'applied':>10} {'lag':>8}",
    ]
    for node in status.get("nodes", []):
        name = str(node.get("node"))
        applied = int(node.get("appliedIndex") or 0)
        role = status.get("role") if name == status.get("node") else node.get("role")
        role = role or ("leader" if name == leader else "follower")  # as it last reported itself
        lines.append(f"{name:<12} {role:<9} {node.get('url', ''):<28} {applied:>10} {max(0, head - applied):>8}")
    lines.append("")
    lines.append(f"as node {status.get('node')} sees it; lag: log entries a node has still to apply")
    return "\n".join(lines)


def _refusal(error: urllib.error.HTTPError) -> str:
    body = error.read()
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP {error.code}"


def _fail(command: str, text: str) -> int:
    print(f"dynastore cluster {command}: error: {text}", file=sys.stderr)
    return 1
