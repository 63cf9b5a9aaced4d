"""replication/local_cluster.py without starting anything: the ports a cluster directory keeps, and the commands
its etcd members and nodes are started with."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from dynastore.replication.etcd_config import ETCD_MEMBER_FLAGS
from dynastore.replication.local_cluster import ClusterError, EtcdMembers, LocalCluster, Nodes, Ports


def test_free_ports_are_distinct_and_free() -> None:
    ports = Ports.free("127.0.0.1")
    every = ports.every()
    assert len(every) == len(set(every)) == 9
    for port in every:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # nothing holds it


def test_a_directory_keeps_its_ports_for_the_next_start(tmp_path: Path) -> None:
    first = LocalCluster(tmp_path / "c")
    again = LocalCluster(tmp_path / "c")
    assert again.ports == first.ports
    assert again.etcd.token == first.etcd.token != LocalCluster(tmp_path / "other").etcd.token
    with pytest.raises(ClusterError) as refused:
        LocalCluster(tmp_path / "c", host="127.0.0.2")
    assert str(refused.value) == f"{tmp_path / 'c'} holds a cluster on 127.0.0.1, not 127.0.0.2: use another directory"


def test_etcd_members_run_with_the_recommended_flags_and_know_each_other(tmp_path: Path) -> None:
    ports = Ports("127.0.0.1", (2379, 2479, 2579), (2380, 2480, 2580), (8000, 8001, 8002))
    etcd = EtcdMembers(tmp_path, ports, "dynastore-test")
    command = etcd.command(1)
    assert command[0] == "/usr/bin/etcd"
    assert command[1:10] == [
        "--name=e2",
        f"--data-dir={tmp_path}/etcd/e2",
        "--listen-client-urls=http://127.0.0.1:2479",
        "--advertise-client-urls=http://127.0.0.1:2479",
        "--listen-peer-urls=http://127.0.0.1:2480",
        "--initial-advertise-peer-urls=http://127.0.0.1:2480",
        "--initial-cluster=e1=http://127.0.0.1:2380,e2=http://127.0.0.1:2480,e3=http://127.0.0.1:2580",
        "--initial-cluster-token=dynastore-test",
        "--initial-cluster-state=new",
    ]
    assert tuple(command[10:]) == ETCD_MEMBER_FLAGS
    assert etcd.endpoints == "etcd://127.0.0.1:2379,127.0.0.1:2479,127.0.0.1:2579"
    nodes = Nodes(tmp_path, ports, etcd.endpoints, ["--auth", "sigv4"])
    assert nodes.command(2) == [
        sys.executable, "-m", "dynastore", "serve",
        "--cluster", "etcd://127.0.0.1:2379,127.0.0.1:2479,127.0.0.1:2579", "--node-name", "n3",
        "--host", "127.0.0.1", "--port", "8002", "--data-dir", f"{tmp_path}/nodes/n3", "--auth", "sigv4",
    ]  # fmt: skip
    assert nodes.urls == ["http://127.0.0.1:8000", "http://127.0.0.1:8001", "http://127.0.0.1:8002"]


def test_a_missing_etcd_is_named_with_its_package(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, etcd_binary=str(tmp_path / "no-etcd"))
    with pytest.raises(ClusterError) as refused:
        cluster.start()
    assert str(refused.value) == f"{tmp_path}/no-etcd not found: install etcd (Debian: apt-get install etcd-server)"


def test_a_port_taken_since_the_first_start_is_named(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", cluster.ports.etcd_client[0]))
        taken.listen()
        with pytest.raises(ClusterError) as refused:
            cluster.start()
    assert str(refused.value) == (
        f"port {cluster.ports.etcd_client[0]} (recorded in {tmp_path}/cluster.json) is in use: another cluster runs "
        "from this directory, or something else took the port (stop it, or use another directory)"
    )
