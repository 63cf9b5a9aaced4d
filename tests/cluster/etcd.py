"""The etcd members of a run: their command lines, and what each says about the cluster (its JSON gateway)."""

from __future__ import annotations

import base64
import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynastore.replication.etcd_config import ETCD_MEMBER_FLAGS

ETCD = "/usr/bin/etcd"
CLIENT_PORT = 2379
PEER_PORT = 2380


def member_name(index: int) -> str:
    return f"n{index}"


def client_url(address: str) -> str:
    return f"http://{address}:{CLIENT_PORT}"


def etcd_argv(index: int, address: str, data_dir: Path, addresses: list[str], token: str) -> list[str]:
    """How member ``index`` runs: dynastore's recommended flags plus its name, directory and URLs. A restarted member
    is given the same line (etcd ignores the initial-cluster flags once its data directory holds a member)."""
    peers = ",".join(f"{member_name(i)}=http://{a}:{PEER_PORT}" for i, a in enumerate(addresses, 1))
    return [
        ETCD,
        f"--name={member_name(index)}",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={client_url(address)}",
        f"--advertise-client-urls={client_url(address)}",
        f"--listen-peer-urls=http://{address}:{PEER_PORT}",
        f"--initial-advertise-peer-urls=http://{address}:{PEER_PORT}",
        f"--initial-cluster={peers}",
        "--initial-cluster-state=new",
        f"--initial-cluster-token={token}",
        *ETCD_MEMBER_FLAGS,
    ]


@dataclass(frozen=True)
class MemberStatus:
    """What one member answers: its id, the leader it follows (0: none) and its Raft indexes."""

    member_id: int
    leader: int
    raft_index: int
    raft_applied_index: int


def member_status(address: str, timeout: float = 1.0) -> MemberStatus | None:
    """``address``'s member's status, or None when it does not answer in time."""
    answer = _post(f"{client_url(address)}/v3/maintenance/status", {}, timeout)
    if answer is None:
        return None
    return MemberStatus(
        member_id=int(answer["header"]["member_id"]),
        leader=int(answer.get("leader", 0)),
        raft_index=int(answer.get("raftIndex", 0)),
        raft_applied_index=int(answer.get("raftAppliedIndex", 0)),
    )


def put(address: str, key: str, value: str, timeout: float = 2.0) -> bool:
    """A put through ``address``'s member (a write that must reach a majority): whether it was committed."""
    body = {"key": base64.b64encode(key.encode()).decode(), "value": base64.b64encode(value.encode()).decode()}
    return _post(f"{client_url(address)}/v3/kv/put", body, timeout) is not None


def _post(url: str, body: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except (OSError, ValueError):
        return None
