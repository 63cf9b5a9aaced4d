"""A response made later (protocol.RawResponse.later, as a cluster node's forwarded request is) keeps its place in
its connection's order; a failed one answers 500 InternalServerError (protocol/http_server.py), on a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import orjson

from dynastore.protocol import http_server
from dynastore.protocol.connections import ConnectionLimits, Registry
from dynastore.protocol.protocol import RawResponse


class NothingToWaitFor:
    durable_seq = 1 << 62

    def poll(self) -> None:
        pass

    def when_durable(self, seq: int, callback: Callable[[BaseException | None], None]) -> None:
        callback(None)


class Handler:
    """/later/<name> answers later (once ``finish`` is called), /fail later with an error, anything else at once."""

    def __init__(self) -> None:
        self.later: dict[str, asyncio.Future[RawResponse]] = {}
        self.served: list[str] = []

    def handle(self, method: str, headers: dict[str, str], body: bytes, path: str = "/") -> RawResponse:
        self.served.append(path)
        if not path.startswith(("/later/", "/fail")):
            return RawResponse(200, path.encode(), "text/plain")
        response = RawResponse(0, b"")
        response.later = self.later[path] = asyncio.get_running_loop().create_future()
        return response


def request(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    status = int((await reader.readuntil(b"\r\n")).split(b" ")[1])
    headers: dict[str, str] = {}
    while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, await reader.readexactly(int(headers["content-length"]))


async def serving(handler: Handler) -> tuple[list[asyncio.Server], int]:
    sockets = http_server.listen("127.0.0.1", 0)
    port = sockets[0].getsockname()[1]
    registry = Registry(ConnectionLimits(), descriptors=1 << 10)
    return await http_server.start(handler, NothingToWaitFor(), sockets, registry), port


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def test_a_deferred_response_keeps_its_place_between_two_immediate_ones() -> None:
    async def scenario() -> list[tuple[int, bytes]]:
        handler = Handler()
        servers, port = await serving(handler)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request("/first") + request("/later/a") + request("/third"))
            # The third request is served before the second's response exists; it must still wait for it.
            await asyncio.wait_for(until(lambda: handler.served == ["/first", "/later/a", "/third"]), 10)
            first = await asyncio.wait_for(read_response(reader), 10)
            handler.later["/later/a"].set_result(RawResponse(200, b"made later", "text/plain"))
            second = await asyncio.wait_for(read_response(reader), 10)
            third = await asyncio.wait_for(read_response(reader), 10)
            writer.write(request("/fourth"))  # the connection stays open
            fourth = await asyncio.wait_for(read_response(reader), 10)
            writer.close()
            return [(status, body) for status, _, body in (first, second, third, fourth)]
        finally:
            for server in servers:
                server.close()

    assert asyncio.run(scenario()) == [(200, b"/first"), (200, b"made later"), (200, b"/third"), (200, b"/fourth")]


def test_nothing_after_a_deferred_response_leaves_before_it() -> None:
    async def scenario() -> bool:
        handler = Handler()
        servers, port = await serving(handler)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request("/later/a") + request("/second"))
            await asyncio.wait_for(until(lambda: len(handler.served) == 2), 10)
            try:
                await asyncio.wait_for(reader.readuntil(b"\r\n"), 0.3)
            except TimeoutError:
                sent_early = False
            else:
                sent_early = True
            writer.close()
            return sent_early
        finally:
            for server in servers:
                server.close()

    assert asyncio.run(scenario()) is False


def test_a_deferred_response_that_fails_answers_500_and_closes_the_connection() -> None:
    async def scenario() -> tuple[tuple[int, dict[str, str], bytes], bytes]:
        handler = Handler()
        servers, port = await serving(handler)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request("/fail"))
            await asyncio.wait_for(until(lambda: "/fail" in handler.later), 10)
            handler.later["/fail"].set_exception(RuntimeError("the leader's answer could not be read"))
            response = await asyncio.wait_for(read_response(reader), 10)
            rest = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            return response, rest
        finally:
            for server in servers:
                server.close()

    (status, headers, body), rest = asyncio.run(scenario())
    assert status == 500
    assert orjson.loads(body) == {
        "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
        "message": "Internal server error",
    }
    assert headers["connection"] == "close"
    assert rest == b""  # closed after it
