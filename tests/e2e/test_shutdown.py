"""Stopping a server under load (SIGTERM): new connections are refused, the requests under way are answered once
their writes are durable, nothing is answered 500, every write answered 200 is there after a restart, and the
process exits 0 (docs/operations.md "Stopping")."""

from __future__ import annotations

import json
import signal
import socket
import threading
from pathlib import Path

from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError

from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess

WRITERS = 8
PUTS_PER_WRITER = 400  # a bound: the stop comes long before
STOP_AFTER = 200  # acknowledged puts before the signal
STOPPING = (
    503,
    "ServiceUnavailable",
    "The server is stopping and takes no new requests; retry the request",
)
AUTH = (
    b"X-Amz-Date: 20260101T000000Z\r\nAuthorization: AWS4-HMAC-SHA256 "
    b"Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=abc\r\n"
)


class Load:
    """Writers putting items until the server stops answering; what each put got."""

    def __init__(self, url: str, table: str) -> None:
        self.url = url
        self.table = table
        self.acknowledged: list[str] = []
        self.refused: list[tuple[int, str, str]] = []
        self.unreachable = 0  # the connection was refused or closed: the put was never answered
        self._lock = threading.Lock()
        self.enough = threading.Event()

    def run(self, writer: int) -> None:
        client = make_client(self.url)
        for n in range(PUTS_PER_WRITER):
            pk = f"w{writer}-{n}"
            try:
                client.put_item(TableName=self.table, Item={"pk": {"S": pk}, "v": {"S": "x" * 1000}})
            except ClientError as e:
                response = e.response
                answer = (response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"])
                with self._lock:
                    self.refused.append((*answer, response["Error"].get("Message", "")))
                continue
            except (EndpointConnectionError, ConnectionClosedError):
                with self._lock:
                    self.unreachable += 1
                return
            with self._lock:
                self.acknowledged.append(pk)
                if len(self.acknowledged) >= STOP_AFTER:
                    self.enough.set()


def stored(url: str, table: str, keys: list[str]) -> list[str]:
    client = make_client(url)
    return [k for k in keys if "Item" in client.get_item(TableName=table, Key={"pk": {"S": k}}, ConsistentRead=True)]


def test_a_stop_under_load_answers_the_writes_under_way_and_loses_none(tmp_path: Path) -> None:
    data = tmp_path / "db"
    server = ServerProcess(data_dir=data)
    try:
        table = create_table(make_client(server.url))
        load = Load(server.url, table)
        writers = [threading.Thread(target=load.run, args=(i,)) for i in range(WRITERS)]
        for writer in writers:
            writer.start()
        assert load.enough.wait(timeout=120), "the writers never got going"
        server.process.send_signal(signal.SIGTERM)
        code = server.process.wait(timeout=60)
        for writer in writers:
            writer.join(timeout=60)
        server.stop()  # the process has exited: this only closes its pipes
    except BaseException:
        server.kill()
        raise
    assert code == 0
    assert set(load.refused) <= {STOPPING}, load.refused  # never a 500: at most the stopping server's 503
    assert load.unreachable == WRITERS  # every writer ended on a refused (or closed) connection
    restarted = ServerProcess(data_dir=data)
    try:
        assert stored(restarted.url, table, load.acknowledged) == load.acknowledged
    finally:
        assert restarted.stop() == 0


def _put_request(table: str, pk: str) -> tuple[bytes, bytes]:
    """A PutItem as raw HTTP: (head, body)."""
    body = json.dumps({"TableName": table, "Item": {"pk": {"S": pk}}}).encode()
    head = (
        b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
        b"X-Amz-Target: DynamoDB_20120810.PutItem\r\n" + AUTH + b"Content-Length: %d\r\n\r\n" % len(body)
    )
    return head, body


def _refused(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=5).close()
    except (ConnectionRefusedError, ConnectionResetError):  # reset: in the backlog when the listener closed
        return True
    return False


def _read_response(sock: socket.socket) -> bytes:
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def test_a_request_under_way_at_the_stop_is_answered_and_new_connections_are_refused(tmp_path: Path) -> None:
    data = tmp_path / "db"
    server = ServerProcess(data_dir=data)
    try:
        table = create_table(make_client(server.url))
        head, body = _put_request(table, "under-way")
        sock = socket.create_connection((server.host, server.port), timeout=30)
        sock.sendall(head + body[:10])  # the request has begun: half its body is still to come
        idle = socket.create_connection((server.host, server.port), timeout=30)
        server.process.send_signal(signal.SIGTERM)
        tries = 0
        while not _refused(server.host, server.port):  # the stop has begun once the port refuses connections
            tries += 1
            assert tries < 100_000, "the server never stopped listening"
        assert idle.recv(1) == b""  # an idle connection is closed at once
        sock.sendall(body[10:])
        response = _read_response(sock)  # answered, then closed
        assert response.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"\r\nConnection: close\r\n" in response.partition(b"\r\n\r\n")[0] + b"\r\n"
        sock.close()
        idle.close()
        code = server.process.wait(timeout=60)
        server.stop()
    except BaseException:
        server.kill()
        raise
    assert code == 0
    restarted = ServerProcess(data_dir=data)
    try:
        assert stored(restarted.url, table, ["under-way"]) == ["under-way"]
    finally:
        assert restarted.stop() == 0
