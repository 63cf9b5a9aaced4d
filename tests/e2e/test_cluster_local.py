"""A three-replica cluster on this machine (replication/local_cluster.py, `dynastore cluster up|status`): etcd
members that stop and start again as they were, a node that cannot start, and the commands end to end, through
real processes (docs/cluster.md "Trying it")."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynastore.replication.local_cluster import ETCD_BINARY, ClusterError, EtcdMembers, LocalCluster, Ports
from tests.e2e.conftest import make_client

needs_etcd = pytest.mark.skipif(
    not os.path.exists(ETCD_BINARY), reason=f"{ETCD_BINARY} is not installed (Debian: etcd-server)"
)


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def etcd_call(client_url: str, method: str, body: dict[str, str]) -> Any:
    request = urllib.request.Request(f"{client_url}/v3/kv/{method}", json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@needs_etcd
def test_etcd_members_stop_and_start_again_with_their_data(tmp_path: Path) -> None:
    ports = Ports.free("127.0.0.1")
    members = EtcdMembers(tmp_path, ports, "dynastore-test")
    members.start()
    try:
        etcd_call(members.client_urls[0], "put", {"key": b64("k"), "value": b64("v")})
    finally:
        members.stop()
    assert not [p for p in ports.etcd_client + ports.etcd_peer if listening(p)]
    again = EtcdMembers(tmp_path, ports, "dynastore-test")
    again.start()
    try:
        found = etcd_call(again.client_urls[2], "range", {"key": b64("k")})
        assert [base64.b64decode(kv["value"]) for kv in found["kvs"]] == [b"v"]
    finally:
        again.stop()


@needs_etcd
def test_a_node_that_cannot_start_stops_the_whole_cluster_and_says_why(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, serve_flags=["--no-such-flag"])
    with pytest.raises(ClusterError) as failed:
        cluster.start()
    text = str(failed.value)
    first = re.match(r"node (n\d) exited with 2 before a leader was known; the end of (.*):\n", text)
    assert first is not None and first[2] == f"{tmp_path}/logs/{first[1]}.log", text  # whichever failed first
    assert text.endswith("dynastore: error: unrecognized arguments: --no-such-flag")
    assert not [p for p in cluster.ports.every() if listening(p)]  # etcd stopped too
    assert cluster.etcd.processes == cluster.nodes.processes == []


# ---- `dynastore cluster up` and `dynastore cluster status` -----------------------------------------------------
_NODE = re.compile(r"dynastore cluster: node (n\d) (http://[\d.]+:\d+)( \(leader\))?$")


class Up:
    """`dynastore cluster up` running in the background; ``nodes`` are its printed endpoints."""

    def __init__(self, directory: Path) -> None:
        command = [sys.executable, "-m", "dynastore", "cluster", "up", "--data-dir", str(directory)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.lines: list[str] = []
        while not self.lines or not self.lines[-1].endswith("Ctrl-C stops the nodes, then etcd"):
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"cluster up ended: {self.lines} {self.process.stderr.read()}")  # type: ignore[union-attr]
            self.lines.append(line.rstrip("\n"))
        self.nodes = {m[1]: m[2] for m in map(_NODE.match, self.lines) if m}
        self.leader = next(m[1] for m in map(_NODE.match, self.lines) if m and m[3])

    def stop(self, how: int = signal.SIGINT) -> tuple[int, str]:
        self.process.send_signal(how)
        out, _ = self.process.communicate(timeout=90)
        return self.process.returncode, out


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    running = Up(tmp_path / "cluster")
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop(signal.SIGTERM)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, timeout=60, check=False
    )


@needs_etcd
def test_up_prints_three_endpoints_and_status_shows_the_nodes(up: Up, tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    assert sorted(up.nodes) == ["n1", "n2", "n3"]
    assert up.lines[0].startswith("dynastore cluster: etcd etcd://127.0.0.1:")
    assert up.lines[4:] == [
        f"dynastore cluster: data and logs in {directory}",
        f"dynastore cluster: status: dynastore cluster status --endpoint {up.nodes['n1']}",
        "dynastore cluster: Ctrl-C stops the nodes, then etcd",
    ]
    for name, url in up.nodes.items():
        shown = cli("cluster", "status", "--endpoint", url)
        assert (shown.returncode, shown.stderr) == (0, "")
        lines = shown.stdout.splitlines()
        assert lines[0] == f"leader: {up.leader} {up.nodes[up.leader]}"
        rows = {line.split()[0]: line.split()[1:3] for line in lines[4:7]}
        roles = {n: ("leader" if n == up.leader else "follower") for n in up.nodes}
        assert rows == {n: [roles[n], up.nodes[n]] for n in up.nodes}, name
    as_json = json.loads(cli("cluster", "status", "--endpoint", up.nodes["n3"], "--json").stdout)
    assert (as_json["node"], as_json["leader"]) == ("n3", up.leader)
    assert sorted((n["node"], n["url"]) for n in as_json["nodes"]) == sorted(up.nodes.items())


@needs_etcd
def test_ctrl_c_stops_everything_and_up_starts_the_same_cluster_again(tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    first = Up(directory)
    client = make_client(first.nodes["n2"])
    client.create_table(
        TableName="kept",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(TableName="kept", WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
    client.put_item(TableName="kept", Item={"pk": {"S": "a"}})
    code, out = first.stop(signal.SIGINT)
    assert (code, out.splitlines()[-2:]) == (
        0,
        ["dynastore cluster: stopping the nodes, then etcd", "dynastore cluster: stopped"],
    )
    ports = Ports.load(directory / "cluster.json")
    assert not [p for p in ports.every() if listening(p)]
    again = Up(directory)
    try:
        assert again.nodes == first.nodes
        item = make_client(again.nodes["n3"]).get_item(TableName="kept", Key={"pk": {"S": "a"}}, ConsistentRead=True)
        assert item["Item"] == {"pk": {"S": "a"}}
    finally:
        code, _ = again.stop(signal.SIGTERM)
    assert code == 0


@needs_etcd
def test_up_reports_a_node_that_exits_and_the_others_go_on(up: Up, tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    follower = next(name for name in up.nodes if name != up.leader)
    os.kill(int((directory / "run" / f"{follower}.pid").read_text()), signal.SIGKILL)
    assert up.process.stdout is not None
    assert up.process.stdout.readline() == (
        f"dynastore cluster: node {follower} exited with -9; the others go on (its log is in {directory / 'logs'})\n"
    )
    survivor = next(url for name, url in up.nodes.items() if name != follower)
    shown = cli("cluster", "status", "--endpoint", survivor)
    assert (shown.returncode, shown.stdout.splitlines()[0]) == (0, f"leader: {up.leader} {up.nodes[up.leader]}")
    code, _ = up.stop(signal.SIGTERM)
    assert code == 0
    assert not list((directory / "run").iterdir())  # every process that ran is gone


@needs_etcd
def test_a_node_stopped_and_started_again_catches_up(tmp_path: Path) -> None:
    with LocalCluster(tmp_path) as cluster:
        leader = cluster.status()["leader"]
        follower = next(i for i, name in enumerate(cluster.nodes.names) if name != leader)
        assert cluster.nodes.stop_one(follower) == 0
        client = make_client(cluster.urls[(follower + 1) % 3])
        client.create_table(
            TableName="while_away",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        client.get_waiter("table_exists").wait(TableName="while_away", WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
        client.put_item(TableName="while_away", Item={"pk": {"S": "a"}})
        cluster.nodes.start_one(follower)
        cluster.nodes.wait_for_leader()
        head = cluster.status((follower + 1) % 3)["logHead"]
        for _ in range(300):  # it applies what it missed by itself
            if cluster.status(follower)["appliedIndex"] >= head:
                break
            time.sleep(0.1)
        assert cluster.status(follower)["appliedIndex"] >= head
        got = make_client(cluster.urls[follower]).get_item(TableName="while_away", Key={"pk": {"S": "a"}})
        assert got["Item"] == {"pk": {"S": "a"}}  # an eventually consistent read, from its own replica
    assert not [p for p in cluster.ports.every() if listening(p)]


def test_status_of_a_server_that_is_not_clustered_says_so() -> None:
    from tests.e2e.server_process import ServerProcess

    server = ServerProcess()
    try:
        shown = cli("cluster", "status", "--endpoint", server.url)
    finally:
        server.close()
    assert (shown.returncode, shown.stdout, shown.stderr) == (
        1,
        "",
        f"dynastore cluster status: error: {server.url} is not part of a cluster (it was started without --cluster)\n",
    )
