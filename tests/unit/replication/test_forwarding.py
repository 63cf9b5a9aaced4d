"""Forwarding a request to the leader (replication/forwarding.py) against a tiny HTTP server standing in for it."""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

import orjson
import pytest

from dynastore.protocol.protocol import RawResponse
from dynastore.replication import forwarding
from dynastore.replication.forwarding import FORWARDED_HEADER, Forwarder
from tests.cluster.node_fixtures import free_port

ANSWER = b'{"Item":{}}'


class Leader:
    """Reads each request (head and Content-Length body) and answers 200 ``ANSWER`` on a kept-alive connection;
    ``hang_up``: closes each connection after reading its request instead."""

    def __init__(self, hang_up: bool = False) -> None:
        self.hang_up = hang_up
        self.requests: list[tuple[str, list[tuple[str, str]], bytes]] = []
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                line = await reader.readuntil(b"\r\n")
                headers: list[tuple[str, str]] = []
                while (header := await reader.readuntil(b"\r\n")) != b"\r\n":
                    name, _, value = header.decode("latin-1").partition(":")
                    headers.append((name, value.strip()))
                length = int(dict((n.lower(), v) for n, v in headers).get("content-length", "0"))
                body = await reader.readexactly(length)
                self.requests.append((line.decode().strip(), headers, body))
                if self.hang_up:
                    break
                writer.write(
                    b"HTTP/1.1 200 OK\r\nServer: dynastore\r\nContent-Type: application/x-amz-json-1.0\r\n"
                    b"x-amz-crc32: 123\r\nx-amzn-RequestId: r1\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


class Election:
    """What the forwarder reads of its node: the leader's URL (None: no leader known) and its change event."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.event = asyncio.Event()

    def leader_url(self) -> str | None:
        return self.url

    def changed(self) -> asyncio.Event:
        return self.event


HEADERS = {
    "host": "localhost:8000",
    "authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, Signature=ab",
    "x-amz-target": "DynamoDB_20120810.GetItem",
    "x-amz-date": "20260101T000000Z",
    "content-type": "application/x-amz-json-1.0",
    "content-length": "17",
    "connection": "keep-alive",
}
BODY = b'{"TableName":"t"}'


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, 60))


def test_a_request_is_forwarded_unchanged_and_the_answer_returned() -> None:
    async def scenario() -> tuple[RawResponse, Leader]:
        leader = Leader()
        election = Election(await leader.start())
        forwarder = Forwarder(election.leader_url, election.changed)
        try:
            return await forwarder.forward("POST", "/", dict(HEADERS), BODY), leader
        finally:
            forwarder.close()
            leader.close()

    response, leader = run(scenario())
    assert (response.status, response.body, response.content_type) == (200, ANSWER, "application/x-amz-json-1.0")
    assert response.headers == [("x-amz-crc32", "123"), ("x-amzn-RequestId", "r1")]
    [(line, headers, body)] = leader.requests
    assert line == "POST / HTTP/1.1"
    assert body == BODY
    sent = {name: value for name, value in headers}
    # Unchanged, the signed ones included; marked as forwarded (a node that does not lead answers it 503 rather
    # than forwarding it on); its own connection header is the forwarder's.
    assert sent == {**{name: value for name, value in HEADERS.items() if name != "connection"}, FORWARDED_HEADER: "1"}


def test_connections_to_the_leader_are_kept_and_reused() -> None:
    async def scenario() -> tuple[list[int], Leader]:
        leader = Leader()
        election = Election(await leader.start())
        forwarder = Forwarder(election.leader_url, election.changed)
        try:
            statuses = []
            for path in ("/a", "/b", "/c"):
                statuses.append((await forwarder.forward("POST", path, dict(HEADERS), BODY)).status)
            return statuses, leader
        finally:
            forwarder.close()
            leader.close()

    statuses, leader = run(scenario())
    assert statuses == [200, 200, 200]
    assert [line for line, _, _ in leader.requests] == ["POST /a HTTP/1.1", "POST /b HTTP/1.1", "POST /c HTTP/1.1"]
    assert leader.connections == 1


def test_connections_to_an_earlier_leader_are_closed_once_another_leads() -> None:
    async def scenario() -> tuple[dict[str, int], str, str]:
        first, second = Leader(), Leader()
        election = Election(await first.start())
        second_url = await second.start()
        forwarder = Forwarder(election.leader_url, election.changed)
        try:
            await forwarder.forward("POST", "/a", dict(HEADERS), BODY)
            first_url, election.url = election.url or "", second_url
            await forwarder.forward("POST", "/b", dict(HEADERS), BODY)
            return forwarder.pooled, first_url, second_url
        finally:
            forwarder.close()
            first.close()
            second.close()

    pooled, first_url, second_url = run(scenario())
    assert first_url != second_url
    assert pooled == {second_url: 1}


SERVICE_UNAVAILABLE = {
    "__type": "com.amazonaws.dynamodb.v20120810#ServiceUnavailable",
    "message": "No node of the cluster holds the write lease right now (an election); retry the request",
}


@pytest.mark.parametrize("reachable", [False, True])
def test_a_leader_that_refuses_connections_is_waited_for_then_503(
    reachable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forwarding, "LEADER_WAIT", 1.0)

    async def scenario() -> tuple[RawResponse, Leader]:
        leader = Leader()
        election = Election(f"http://127.0.0.1:{free_port()}")  # nothing listens there
        forwarder = Forwarder(election.leader_url, election.changed)

        async def elect() -> None:  # a new leader becomes known while the request waits
            await asyncio.sleep(0.3)
            election.url = await leader.start()
            election.event.set()

        task = asyncio.ensure_future(elect()) if reachable else None
        try:
            return await forwarder.forward("POST", "/", dict(HEADERS), BODY), leader
        finally:
            if task is not None:
                await task
            forwarder.close()
            leader.close()

    response, leader = run(scenario())
    if reachable:
        assert (response.status, response.body) == (200, ANSWER)
        assert len(leader.requests) == 1
    else:
        assert response.status == 503
        assert orjson.loads(response.body) == SERVICE_UNAVAILABLE
        assert leader.requests == []


def test_no_leader_known_answers_503(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forwarding, "LEADER_WAIT", 0.5)

    async def scenario() -> RawResponse:
        election = Election(None)
        return await Forwarder(election.leader_url, election.changed).forward("POST", "/", dict(HEADERS), BODY)

    response = run(scenario())
    assert response.status == 503
    assert orjson.loads(response.body) == SERVICE_UNAVAILABLE
    assert ("x-amz-crc32", str(zlib.crc32(response.body))) in response.headers


def test_a_connection_broken_after_the_request_was_sent_answers_500() -> None:
    async def scenario() -> tuple[RawResponse, Leader]:
        leader = Leader(hang_up=True)
        election = Election(await leader.start())
        forwarder = Forwarder(election.leader_url, election.changed)
        try:
            return await forwarder.forward("POST", "/", dict(HEADERS), BODY), leader
        finally:
            forwarder.close()
            leader.close()

    response, leader = run(scenario())
    assert len(leader.requests) == 1  # it was sent: the outcome is unknown
    assert response.status == 500
    assert orjson.loads(response.body) == {
        "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
        "message": "Internal server error",
    }
