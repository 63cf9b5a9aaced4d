"""``dynastore cluster status``: a node's GET /dynastore/cluster as a table or as JSON, and one line when the node
does not answer or is not clustered (a stand-in node: a local HTTP server answering a fixed status)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from dynastore.cli import main
from dynastore.replication.cluster_cli import format_status

STATUS: dict[str, Any] = {
    "node": "n2",
    "role": "follower",
    "leader": "n1",
    "leaderUrl": "http://10.0.0.1:8000",
    "appliedIndex": 95,
    "logHead": 100,
    "leaderChanges": 3,
    "nodes": [
        {"node": "n1", "url": "http://10.0.0.1:8000", "appliedIndex": 100},
        {"node": "n2", "url": "http://10.0.0.2:8000", "appliedIndex": 95},
        {"node": "n3", "url": "http://10.0.0.3:8000", "appliedIndex": 90},
    ],
}

TABLE = """\
leader: n1 http://10.0.0.1:8000
log head: 100; leader changes seen by n2: 3

node         role      url                             applied      lag
n1           leader    http://10.0.0.1:8000                100        0
n2           follower  http://10.0.0.2:8000                 95        5
n3           follower  http://10.0.0.3:8000                 90       10

as node n2 sees it; lag: log entries a node has still to apply"""


def test_the_table_shows_each_node_s_role_applied_index_and_lag() -> None:
    assert format_status(STATUS) == TABLE


def test_during_an_election_no_leader_is_named() -> None:
    electing = {**STATUS, "role": "starting", "leader": None, "leaderUrl": None, "nodes": STATUS["nodes"][1:2]}
    lines = format_status(electing).splitlines()
    assert lines[0] == "leader: none known (an election is under way, or etcd has no majority)"
    assert lines[4].split() == ["n2", "starting", "http://10.0.0.2:8000", "95", "5"]


class _Node(BaseHTTPRequestHandler):
    answers: dict[str, tuple[int, bytes]] = {}
    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        _Node.seen.append(dict(self.headers.items()))
        status, body = _Node.answers.get(self.path, (404, b'{"error": "unknown dynastore endpoint"}'))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def node() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Node)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Node.answers, _Node.seen = {}, []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def status(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["cluster", "status", *args])
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_status_of_a_node(node: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    _Node.answers["/dynastore/cluster"] = (200, json.dumps(STATUS).encode())
    assert status(capsys, "--endpoint", node) == (0, TABLE + "\n", "")
    assert "Authorization" not in _Node.seen[0]  # no key: unsigned, as a node with --auth none takes it
    code, out, _ = status(capsys, "--endpoint", node.removeprefix("http://"), "--json")
    assert (code, json.loads(out)) == (0, STATUS)


def test_status_signs_for_a_node_with_authentication(node: str, capsys: pytest.CaptureFixture[str]) -> None:
    _Node.answers["/dynastore/cluster"] = (200, json.dumps(STATUS).encode())
    key = ("--access-key-id", "AKIAEXAMPLEEXAMPLE12", "--secret-access-key", "secret")
    assert status(capsys, "--endpoint", node, *key)[0] == 0
    assert _Node.seen[0]["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEEXAMPLE12/")


def test_a_server_that_is_not_clustered_or_refuses(node: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert status(capsys, "--endpoint", node) == (
        1,
        "",
        f"dynastore cluster status: error: {node} is not part of a cluster (it was started without --cluster)\n",
    )
    _Node.answers["/dynastore/cluster"] = (403, b'{"error": "not an admin user"}')
    assert status(capsys, "--endpoint", node) == (
        1,
        "",
        f"dynastore cluster status: error: {node} refused: not an admin user\n",
    )


def test_an_endpoint_that_does_not_answer_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    assert status(capsys, "--endpoint", f"127.0.0.1:{port}") == (
        1,
        "",
        f"dynastore cluster status: error: cannot reach http://127.0.0.1:{port}: [Errno 111] Connection refused: "
        "is a dynastore node running there?\n",
    )
