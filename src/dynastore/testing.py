"""In-process mode: a dynastore inside the test process, answering boto3 and botocore clients without a socket.

``with in_process() as ds:`` (or the ``@mock_dynamodb`` decorator) runs a dynastore (app.Dynastore) on an asyncio
loop in a background thread. Every DynamoDB client botocore makes while it is active has a ``before-send``
handler that hands the signed HTTP request to that thread, where ``Protocol.handle`` answers it exactly as the
server would (validation, error codes and messages, CRC32, request ids); a response that reports a write is
returned only once the write is durable, as the server does. Only the sending is replaced: clients of other AWS
services, and clients made before the block, are left alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, overload
from urllib.parse import urlsplit

import orjson

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.errors import InternalServerError
from dynastore.protocol.http_server import Durability
from dynastore.protocol.protocol import RawResponse
from dynastore.util.clock import ManualClock

__all__ = ["InProcess", "Response", "in_process", "mock_dynamodb"]

# The service whose clients are answered here (botocore's hyphenized service id in event names).
SERVICE_EVENT = "before-send.dynamodb"
# What a client needs to sign a request; set for the block only when the environment has none.
STAND_IN_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "dynastore",
    "AWS_SECRET_ACCESS_KEY": "dynastore",
}

F = TypeVar("F", bound=Callable[..., Any])


def make_config(config: Config | None = None, **overrides: Any) -> Config:
    """``config`` (by default: in memory) with ``overrides`` (Config field names, as the serve flags set them);
    ``manual_clock=True`` gives the dynastore a clock that moves only through ``advance_clock`` or
    ``POST /dynastore/clock``; a ``data_dir`` makes it durable in that directory."""
    base = config if config is not None else Config(in_memory="data_dir" not in overrides)
    merged = dataclasses.replace(base, **overrides) if overrides else base
    if merged.manual_clock and not isinstance(merged.clock, ManualClock):
        merged = dataclasses.replace(merged, clock=ManualClock(time.time()))
    return merged


class Response:
    """The answer to ``InProcess.request``: status, headers (lower-case names) and body, as sent over HTTP."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return orjson.loads(self.body)


class _Call:
    """One request handed to the loop thread; the caller waits on ``done`` (a lock the loop thread releases)."""

    __slots__ = ("method", "headers", "body", "path", "response", "done")

    def __init__(self, method: str, headers: dict[str, str], body: bytes, path: str) -> None:
        self.method = method
        self.headers = headers
        self.body = body
        self.path = path
        self.response: RawResponse | None = None
        self.done = threading.Lock()
        self.done.acquire()

    def finish(self, response: RawResponse) -> None:
        self.response = response
        self.done.release()


class InProcess:
    """A dynastore on a background thread of this process. ``start()`` / ``stop()``, or use it as a context
    manager: while it is active, new botocore DynamoDB clients are answered by it (unless ``hook_clients`` is
    False: then only those of ``client()``, ``resource()`` and ``hook()``)."""

    def __init__(self, config: Config | None = None, *, hook_clients: bool = True, **overrides: Any) -> None:
        self.config = make_config(config, **overrides)
        # Whether every DynamoDB client made while it runs is answered here, or only those of client(),
        # resource() and hook() (a test suite that also drives servers of its own through boto3).
        self.hook_clients = hook_clients
        self.app: Dynastore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._committer: Durability | None = None  # answers when writes are durable
        self._thread: threading.Thread | None = None
        self._saved_environment: dict[str, str | None] = {}

    # ---- life cycle ----------------------------------------------------------------------------------------
    def start(self) -> InProcess:
        """Open the store and start the loop thread; new DynamoDB clients are hooked until ``stop()``."""
        if self._thread is not None:
            raise RuntimeError("this in-process dynastore is already running")
        started = threading.Event()
        failure: list[BaseException] = []
        loop = _new_loop()
        thread = threading.Thread(target=self._run, args=(loop, started, failure), name="dynastore", daemon=True)
        thread.start()
        started.wait()
        if failure:
            thread.join()
            raise failure[0]
        self._loop, self._thread = loop, thread
        if self.hook_clients:
            self._set_environment()
            _Hooks.activate(self)
        return self

    def stop(self) -> None:
        """Make the last writes durable, close the store and end the loop thread. Clients hooked to this
        dynastore refuse further requests (they never reach the network)."""
        loop, thread, app = self._loop, self._thread, self.app
        if loop is None or thread is None or app is None:
            return
        self._loop = None  # from here on requests are refused, not handed to a closing store
        _Hooks.deactivate(self)
        self._restore_environment()
        try:
            asyncio.run_coroutine_threadsafe(app.stop(), loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            self._thread = self._committer = None

    def __enter__(self) -> InProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._loop is not None

    def _run(self, loop: asyncio.AbstractEventLoop, started: threading.Event, failure: list[BaseException]) -> None:
        """The loop thread: the store is opened, used and closed here only."""
        asyncio.set_event_loop(loop)
        try:
            if not self.config.in_memory:
                from dynastore.storage.lmdb_kv import DIRECTORY_MODE

                self.config.data_dir.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
            self.app = Dynastore(self.config)
            self._committer = self.app.start(loop)
        except BaseException as e:
            failure.append(e)
            loop.close()
            started.set()
            return
        started.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    # ---- clients -------------------------------------------------------------------------------------------
    def hook(self, client: Any) -> Any:
        """Answer ``client`` (a botocore DynamoDB client, or a boto3 resource's) from here; returns it."""
        events = getattr(getattr(client, "meta", None), "events", None)
        if events is None:
            events = client.meta.client.meta.events  # a boto3 resource
        events.register(SERVICE_EVENT, self._before_send, unique_id=f"dynastore-in-process-{id(self)}")
        return client

    def client(self, **kwargs: Any) -> Any:
        """A boto3 DynamoDB client answered here (region and stand-in credentials filled in)."""
        import boto3

        return self.hook(boto3.client("dynamodb", **self._client_arguments(kwargs)))

    def resource(self, **kwargs: Any) -> Any:
        """A boto3 DynamoDB resource answered here."""
        import boto3

        resource = boto3.resource("dynamodb", **self._client_arguments(kwargs))
        self.hook(resource.meta.client)
        return resource

    def _client_arguments(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        arguments = {"region_name": self.config.region}
        arguments.update({name.lower(): value for name, value in STAND_IN_ENVIRONMENT.items()})
        arguments.update(kwargs)
        return arguments

    def _before_send(self, request: Any, **_: Any) -> Any:
        """botocore's before-send handler: the HTTP response for a prepared request, from Protocol.handle."""
        from botocore.awsrequest import AWSResponse

        url = request.url
        parts = urlsplit(url)
        path = parts.path or "/"
        if parts.query:
            path = f"{path}?{parts.query}"
        headers = {name.lower(): _text(value) for name, value in request.headers.items()}
        headers.setdefault("host", parts.netloc)
        response = self._serve(request.method, headers, _body_bytes(request.body), path)
        return AWSResponse(url, response.status, _response_headers(response), _Raw(response.body))

    # ---- requests ------------------------------------------------------------------------------------------
    def request(
        self, method: str, path: str, body: bytes | dict[str, Any] = b"", headers: dict[str, str] | None = None
    ) -> Response:
        """Any request the server answers, e.g. dynastore's own endpoints: ``request("GET", "/dynastore/clock")``.
        A dict body is sent as JSON (with the Content-Type a POST to those endpoints needs)."""
        sent = {name.lower(): value for name, value in (headers or {}).items()}
        if isinstance(body, dict):
            body = orjson.dumps(body)
            sent.setdefault("content-type", "application/json")
        response = self._serve(method, sent, body, path)
        return Response(response.status, dict(_response_headers(response)), response.body)

    def advance_clock(self, seconds: float) -> float:
        """Move a manual clock (``manual_clock=True``) forward; returns the new time. Same as the endpoint."""
        response = self.request("POST", "/dynastore/clock", {"advance": seconds})
        if response.status != 200:
            raise RuntimeError(response.json()["error"])
        return float(response.json()["now"])

    def _serve(self, method: str, headers: dict[str, str], body: bytes, path: str) -> RawResponse:
        loop = self._loop
        if loop is None:
            raise RuntimeError("the in-process dynastore has stopped: the request was not sent")
        call = _Call(method, headers, body, path)
        loop.call_soon_threadsafe(self._answer, call)
        call.done.acquire()
        assert call.response is not None
        return call.response

    def _answer(self, call: _Call) -> None:
        """On the loop thread: answer ``call``, once its write (if any) is durable, as the server does."""
        app, committer = self.app, self._committer
        assert app is not None and committer is not None
        try:
            response = app.protocol.handle(call.method, call.headers, call.body, call.path)
        except BaseException:
            call.finish(_internal_error())
            raise
        seq = response.commit_seq
        if seq and seq > committer.durable_seq:
            committer.when_durable(seq, lambda error: call.finish(response if error is None else _internal_error()))
        else:
            call.finish(response)

    # ---- the environment a client needs --------------------------------------------------------------------
    def _set_environment(self) -> None:
        wanted = dict(STAND_IN_ENVIRONMENT, AWS_DEFAULT_REGION=self.config.region)
        if "AWS_PROFILE" in os.environ:
            wanted = {"AWS_DEFAULT_REGION": self.config.region}
        for name, value in wanted.items():
            if name not in os.environ:
                self._saved_environment[name] = None
                os.environ[name] = value

    def _restore_environment(self) -> None:
        for name in self._saved_environment:
            os.environ.pop(name, None)
        self._saved_environment = {}


class _Hooks:
    """While any in-process dynastore is active, botocore's ClientCreator hooks each new DynamoDB client to the
    innermost one. botocore copies the session's event handlers into each client it makes, so a handler on the
    client itself is the only way to reach clients of sessions made before the block (boto3's default session)."""

    active: list[InProcess] = []
    original: Any = None

    @classmethod
    def activate(cls, dynastore: InProcess) -> None:
        if not cls.active:
            from botocore.client import ClientCreator

            original = cls.original = ClientCreator.create_client

            @functools.wraps(original)
            def create_client(creator: Any, service_name: str, *args: Any, **kwargs: Any) -> Any:
                client = original(creator, service_name, *args, **kwargs)
                if service_name == "dynamodb" and cls.active:
                    cls.active[-1].hook(client)
                return client

            ClientCreator.create_client = create_client
        cls.active.append(dynastore)

    @classmethod
    def deactivate(cls, dynastore: InProcess) -> None:
        if dynastore in cls.active:
            cls.active.remove(dynastore)
        if not cls.active and cls.original is not None:
            from botocore.client import ClientCreator

            ClientCreator.create_client = cls.original
            cls.original = None


class _Raw:
    """What botocore reads a response body from (``AWSResponse.raw``)."""

    __slots__ = ("_body",)

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def _response_headers(response: RawResponse) -> list[tuple[str, str]]:
    headers = [("Content-Type", response.content_type), ("Content-Length", str(len(response.body)))]
    headers.extend(response.headers)
    return headers


def _internal_error() -> RawResponse:
    """What the server answers for a write the store could not make durable (protocol/http_server.py)."""
    body = orjson.dumps(InternalServerError().to_body())
    return RawResponse(500, body, headers=[("x-amz-crc32", str(zlib.crc32(body)))])


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, bytearray):
        return bytes(body)
    data = body.read()  # a file-like body
    return data.encode() if isinstance(data, str) else bytes(data)


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency everywhere but Windows
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


@contextmanager
def in_process(config: Config | None = None, **overrides: Any) -> Iterator[InProcess]:
    """``with in_process() as ds:`` a dynastore answers every DynamoDB client made in the block."""
    dynastore = InProcess(config, **overrides)
    with dynastore:
        yield dynastore


@overload
def mock_dynamodb(func: F, /) -> F: ...


@overload
def mock_dynamodb(**overrides: Any) -> Callable[[F], F]: ...


def mock_dynamodb(func: F | None = None, /, **overrides: Any) -> F | Callable[[F], F]:
    """Decorator form of ``in_process``: ``@mock_dynamodb`` or ``@mock_dynamodb(capacity="report")``. The test
    runs against a fresh dynastore (in memory unless ``data_dir`` is given)."""

    def decorate(test: F) -> F:
        @functools.wraps(test)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with in_process(**overrides):
                return test(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate(func) if func is not None else decorate
