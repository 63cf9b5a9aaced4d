"""In-process mode: a dynastore inside the test process, answering boto3 and botocore clients without a socket.

``with in_process() as ds:`` (or the ``@mock_dynamodb`` decorator) runs a dynastore (app.Dynastore) in this
process. Every DynamoDB (and DynamoDB Streams) client botocore makes while it is active has a ``before-send``
handler that gives the signed HTTP request to ``Protocol.handle``, which answers it exactly as the server would
(validation, error codes and messages, CRC32, request ids); a response that reports a write is returned only
once the write is durable, as the server does.

The dynastore's asyncio loop is driven by the calling thread itself, one call at a time (a lock): the call runs
the loop until its answer is ready, which also runs the background work that is due (group commit, GSI
propagation, housekeeping). No thread is woken, so a call costs little more than ``Protocol.handle``. A caller
whose own thread already runs an asyncio loop (an async test calling boto3) has its call driven from a worker
thread instead. aiobotocore clients (and aioboto3's) are hooked the same way, their calls served from a worker
thread so that the caller's event loop keeps running. Only the sending is replaced: clients of other AWS
services, and clients made before the block, are left alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib.util
import os
import threading
import time
import zlib
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, overload
from urllib.parse import urlsplit

import orjson

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.protocol.http_server import Durability
from dynastore.protocol.protocol import RawResponse, durability_failure
from dynastore.util.clock import ManualClock
from dynastore.util.files import make_private_directory

__all__ = ["InProcess", "Response", "in_process", "mock_dynamodb"]

# The services whose clients are answered here: botocore's service name -> the event their requests are sent
# through (the hyphenized service id). DynamoDB Streams is served at the same endpoint, as by the server.
SERVICE_EVENTS = {"dynamodb": "before-send.dynamodb", "dynamodbstreams": "before-send.dynamodb-streams"}
# What a client needs to sign a request; set for the block only when the environment has none.
STAND_IN_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "dynastore",
    "AWS_SECRET_ACCESS_KEY": "dynastore",
}

# How many passes of the loop one call runs at most for the background work due (see _run_due).
MAX_LOOP_PASSES = 8

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


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


class InProcess:
    """A dynastore in this process, driven by its callers. ``start()`` / ``stop()``, or use it as a context
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
        self._drive = threading.Lock()  # one caller runs the loop at a time
        self._saved_environment: dict[str, str | None] = {}

    # ---- life cycle ----------------------------------------------------------------------------------------
    def start(self) -> InProcess:
        """Open the store; new DynamoDB clients are hooked until ``stop()``."""
        if self._loop is not None:
            raise RuntimeError("this in-process dynastore is already running")
        if not self.config.in_memory:
            make_private_directory(self.config.data_dir)
        loop = _new_loop()
        try:
            app = Dynastore(self.config)
        except BaseException:
            loop.close()
            raise
        self.app = app
        self._committer = app.start(loop)
        self._loop = loop
        if self.hook_clients:
            self._set_environment()
            _Hooks.activate(self)
        return self

    def stop(self) -> None:
        """Make the last writes durable and close the store. Clients hooked to this dynastore refuse further
        requests (they never reach the network)."""
        loop, app = self._loop, self.app
        if loop is None or app is None:
            return
        self._loop = None  # from here on requests are refused, not handed to a closing store
        _Hooks.deactivate(self)
        self._restore_environment()
        try:
            self._run(loop, app.stop())
        finally:
            loop.close()
            self._committer = None

    def __enter__(self) -> InProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._loop is not None

    def _run(self, loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, T]) -> T:
        """Run the loop until ``work`` is done (on a worker thread when this one already runs a loop)."""
        if _running_loop() is not None:
            return self._on_worker(lambda: self._run(loop, work))
        with self._drive:
            return loop.run_until_complete(work)

    @staticmethod
    def _on_worker(call: Callable[[], T]) -> T:
        result: list[T] = []
        failure: list[BaseException] = []

        def drive() -> None:
            try:
                result.append(call())
            except BaseException as e:
                failure.append(e)

        worker = threading.Thread(target=drive, name="dynastore")
        worker.start()
        worker.join()
        if failure:
            raise failure[0]
        return result[0]

    # ---- clients -------------------------------------------------------------------------------------------
    def hook(self, client: Any) -> Any:
        """Answer ``client`` (a botocore DynamoDB or DynamoDB Streams client, or a boto3 resource's) from here;
        returns it."""
        meta = client.meta
        if getattr(meta, "events", None) is None:
            meta = meta.client.meta  # a boto3 resource
        events = meta.events
        handler = self._before_send_async if _is_asynchronous(events) else self._before_send
        event = SERVICE_EVENTS.get(meta.service_model.service_name)
        if event is None:
            raise ValueError(f"not a DynamoDB or DynamoDB Streams client: {meta.service_model.service_name}")
        events.register(event, handler, unique_id=f"dynastore-in-process-{id(self)}")
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

    @property
    def credentials(self) -> dict[str, str] | None:
        """With ``auth="sigv4"``: the seeded admin user's key (``admin_access_key_id`` and
        ``admin_secret_access_key``), which the clients made here sign with; else None (any key is taken)."""
        config = self.config
        if config.auth != "sigv4" or not config.admin_access_key_id:
            return None
        return {
            "aws_access_key_id": config.admin_access_key_id,
            "aws_secret_access_key": config.admin_secret_access_key,
        }

    def _client_arguments(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        arguments = {"region_name": self.config.region}
        arguments.update({name.lower(): value for name, value in STAND_IN_ENVIRONMENT.items()})
        arguments.update(self.credentials or {})
        arguments.update(kwargs)
        return arguments

    def _before_send(self, request: Any, **_: Any) -> Any:
        """botocore's before-send handler: the HTTP response for a prepared request, from Protocol.handle."""
        method, headers, body, path = _request_parts(request)
        return _aws_response(request.url, self._serve(method, headers, body, path))

    async def _before_send_async(self, request: Any, **_: Any) -> Any:
        """aiobotocore's before-send handler: the same answer, served from a worker thread so that the caller's
        event loop keeps running (another task of the test may be waiting on it)."""
        from aiobotocore.awsrequest import AioAWSResponse

        method, headers, body, path = _request_parts(request)
        response = await asyncio.to_thread(self._serve, method, headers, body, path)
        return AioAWSResponse(request.url, response.status, _response_headers(response), _AsyncRaw(response.body))

    # ---- requests ------------------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        body: bytes | dict[str, Any] = b"",
        headers: dict[str, str] | None = None,
        *,
        sign: bool | None = None,
    ) -> Response:
        """Any request the server answers, e.g. dynastore's own endpoints: ``request("GET", "/dynastore/clock")``.
        A dict body is sent as JSON (with the Content-Type a POST to those endpoints needs). With ``auth="sigv4"``
        a request without an Authorization header is signed with the admin user's key (``sign=False``: never)."""
        sent = {name.lower(): value for name, value in (headers or {}).items()}
        if isinstance(body, dict):
            body = orjson.dumps(body)
            sent.setdefault("content-type", "application/json")
        credentials = self.credentials
        if credentials is not None and sign is not False and (sign or "authorization" not in sent):
            sent = _signed(credentials, self.config.region, method, path, sent, body)
        response = self._serve(method, sent, body, path)
        return Response(response.status, dict(_response_headers(response)), response.body)

    def advance_clock(self, seconds: float) -> float:
        """Move a manual clock (``manual_clock=True``) forward; returns the new time. Same as the endpoint."""
        response = self.request("POST", "/dynastore/clock", {"advance": seconds})
        if response.status != 200:
            raise RuntimeError(response.json()["error"])
        return float(response.json()["now"])

    def put_policy(
        self,
        name: str,
        document: str | dict[str, Any],
        *,
        user: str | None = None,
        group: str | None = None,
        account_id: str | None = None,
    ) -> None:
        """Attach an identity policy to a user or group (``Dynastore.put_policy``; docs/security.md "Policies")."""
        if self.app is None:
            raise RuntimeError("start the in-process dynastore first")
        with self._drive:  # not while a request of another thread runs
            self.app.put_policy(name, document, user=user, group=group, account_id=account_id)

    def _serve(self, method: str, headers: dict[str, str], body: bytes, path: str) -> RawResponse:
        loop, app = self._loop, self.app
        if loop is None or app is None:
            raise RuntimeError("the in-process dynastore has stopped: the request was not sent")
        if _running_loop() is not None:  # a loop cannot be run inside another on one thread: a worker does it
            return self._on_worker(lambda: self._serve(method, headers, body, path))
        with self._drive:
            response = app.protocol.handle(method, headers, body, path)
            if response.later is not None:  # made by the loop (a global table's strong log: api/strong_items.py)
                response = loop.run_until_complete(response.later)
            committer = self._committer
            assert committer is not None
            seq = response.commit_seq
            if seq and seq > committer.durable_seq:
                # A write is answered once durable, as the server answers it; the loop runs the group commit.
                return loop.run_until_complete(self._durable(loop, response))
            if _work_due(loop):
                _run_due(loop)  # background work that came due (GSI propagation, housekeeping) runs now
            return response

    async def _durable(self, loop: asyncio.AbstractEventLoop, response: RawResponse) -> RawResponse:
        committer = self._committer
        assert committer is not None
        seq = response.commit_seq
        if seq and seq > committer.durable_seq:
            durable: asyncio.Future[BaseException | None] = loop.create_future()

            def settled(error: BaseException | None) -> None:
                if not durable.done():
                    durable.set_result(error)

            committer.when_durable(seq, settled)
            error = await durable
            if error is not None:
                return _failed_write(error)
        return response

    # ---- the environment a client needs --------------------------------------------------------------------
    def _set_environment(self) -> None:
        for name, value in stand_in_environment(self.config.region, self.credentials).items():
            if name not in os.environ:
                self._saved_environment[name] = None
                os.environ[name] = value

    def _restore_environment(self) -> None:
        for name in self._saved_environment:
            os.environ.pop(name, None)
        self._saved_environment = {}


def stand_in_environment(region: str, credentials: dict[str, str] | None) -> dict[str, str]:
    """What a client made without arguments needs to sign a request for a dynastore of ``region``: the variables
    to set where the environment has none (stand-in credentials, or ``credentials`` of a dynastore that verifies
    signatures; only the region when ``AWS_PROFILE`` names credentials of its own)."""
    wanted = dict(STAND_IN_ENVIRONMENT, AWS_DEFAULT_REGION=region)
    if credentials is not None:
        wanted.update({name.upper(): value for name, value in credentials.items()})
    if "AWS_PROFILE" in os.environ:
        wanted = {"AWS_DEFAULT_REGION": region}
    return wanted


class _Hooks:
    """While any in-process dynastore is active, botocore's ClientCreator hooks each new DynamoDB client to the
    innermost one. botocore copies the session's event handlers into each client it makes, so a handler on the
    client itself is the only way to reach clients of sessions made before the block (boto3's default session)."""

    active: list[InProcess] = []
    originals: list[tuple[Any, Any]] = []  # (class, its own create_client) to put back

    @classmethod
    def activate(cls, dynastore: InProcess) -> None:
        if not cls.active:
            from botocore.client import ClientCreator

            original = ClientCreator.create_client

            @functools.wraps(original)
            def create_client(creator: Any, service_name: str, *args: Any, **kwargs: Any) -> Any:
                client = original(creator, service_name, *args, **kwargs)
                if service_name in SERVICE_EVENTS and cls.active:
                    cls.active[-1].hook(client)
                return client

            cls._replace(ClientCreator, create_client)  # botocore's class, typed Any
            creator = _aiobotocore_creator()
            if creator is not None:
                cls._replace(creator, cls._asynchronous(creator.create_client))
        cls.active.append(dynastore)

    @classmethod
    def _asynchronous(cls, original: Any) -> Any:
        """aiobotocore's ``create_client`` (a coroutine) with the same hook."""

        @functools.wraps(original)
        async def create_client(creator: Any, service_name: str, *args: Any, **kwargs: Any) -> Any:
            client = await original(creator, service_name, *args, **kwargs)
            if service_name in SERVICE_EVENTS and cls.active:
                cls.active[-1].hook(client)
            return client

        return create_client

    @classmethod
    def _replace(cls, creator: Any, create_client: Any) -> None:
        cls.originals.append((creator, creator.__dict__["create_client"]))
        creator.create_client = create_client

    @classmethod
    def deactivate(cls, dynastore: InProcess) -> None:
        if dynastore in cls.active:
            cls.active.remove(dynastore)
        if not cls.active:
            for creator, original in reversed(cls.originals):
                creator.create_client = original
            cls.originals = []


class _Raw:
    """What botocore reads a response body from (``AWSResponse.raw``)."""

    __slots__ = ("_body",)

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


class _AsyncRaw:
    """What aiobotocore reads a response body from (``await raw.read()``)."""

    __slots__ = ("_body",)

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def read(self) -> bytes:
        return self._body


def _request_parts(request: Any) -> tuple[str, dict[str, str], bytes, str]:
    """A prepared botocore request as the server receives it: method, lower-case headers, body, path."""
    parts = urlsplit(request.url)
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    headers = _lower_case_headers(request.headers)
    headers.setdefault("host", parts.netloc)
    return request.method, headers, _body_bytes(request.body), path


def _is_asynchronous(events: Any) -> bool:
    """Whether a client's event emitter is aiobotocore's (its handlers may be coroutines, and must answer with
    aiobotocore's response type). botocore wraps the emitter in an aliaser."""
    emitter = getattr(events, "_emitter", events)
    return type(emitter).__module__.startswith("aiobotocore.")


def _response_headers(response: RawResponse) -> list[tuple[str, str]]:
    headers = [("Content-Type", response.content_type), ("Content-Length", str(len(response.body)))]
    headers.extend(response.headers)
    return headers


def _aws_response(url: str, response: RawResponse) -> Any:
    """botocore's response to a request, from ``response``."""
    return _botocore_response_class()(url, response)


@functools.cache
def _botocore_response_class() -> Any:
    """botocore's response type, made straight from a RawResponse. Its own constructor builds a header mapping
    (replaced at once here) through the generic mapping update, and its body is read from ``raw`` when botocore
    first asks for it: together a tenth of what in-process mode adds to a call. Same behaviour: the body is there
    as ``content``, and ``raw`` streams it to whoever reads it (botocore does only for streaming outputs, which
    DynamoDB has none of)."""
    from botocore.awsrequest import AWSResponse

    headers_class = _response_headers_class()

    class Answer(AWSResponse):  # type: ignore[misc]  # botocore is untyped
        def __init__(self, url: str, response: RawResponse) -> None:
            self.url = url
            self.status_code = response.status
            self.headers = headers_class(response)
            self._content = response.body

        @property
        def raw(self) -> _Raw:
            return _Raw(self._content)

    return Answer


@functools.cache
def _response_headers_class() -> Any:
    """botocore's case-insensitive header mapping, kept as a plain dict by lower-case name. botocore reads a
    response's headers a dozen times (its metadata copies them all, its CRC32 check and request id read them):
    through its own mapping each read makes a key object, which cost a tenth of what in-process mode adds to a
    call. Same behaviour: names keep their case when iterated, any case finds them."""
    from botocore.awsrequest import HeadersDict

    class ResponseHeaders(HeadersDict):  # type: ignore[misc]  # botocore is untyped
        def __init__(self, response: RawResponse) -> None:
            # As _response_headers lists them, with no list made between (a later name of the same case wins).
            by_lower = {
                "content-type": ("Content-Type", response.content_type),
                "content-length": ("Content-Length", str(len(response.body))),
            }
            for name, value in response.headers:
                by_lower[name.lower()] = (name, value)
            self._by_lower = by_lower

        def __getitem__(self, name: str) -> str:
            return self._by_lower[name.lower()][1]

        def __setitem__(self, name: str, value: str) -> None:
            lower = name.lower()
            found = self._by_lower.get(lower)
            self._by_lower[lower] = (name if found is None else found[0], value)  # the first case is kept

        def __delitem__(self, name: str) -> None:
            del self._by_lower[name.lower()]

        def __iter__(self) -> Iterator[str]:
            return (name for name, _ in self._by_lower.values())

        def __len__(self) -> int:
            return len(self._by_lower)

        def __contains__(self, name: Any) -> bool:
            return name.lower() in self._by_lower

        def get(self, name: str, default: Any = None) -> Any:
            found = self._by_lower.get(name.lower())
            return default if found is None else found[1]

        def __repr__(self) -> str:
            return repr(dict(self._by_lower.values()))

    return ResponseHeaders


def _failed_write(error: BaseException) -> RawResponse:
    """What the server answers for a write the store could not make durable (protocol/http_server.py)."""
    failure = durability_failure(error)
    body = orjson.dumps(failure.to_body())
    return RawResponse(failure.status, body, headers=[("x-amz-crc32", str(zlib.crc32(body)))])


def _lower_case_headers(headers: Any) -> dict[str, str]:
    """A prepared request's headers as the server sees them (lower-case names). botocore keeps them in a
    case-insensitive dict whose keys already hold the lower-case name: read there, it costs a tenth of going
    through its mapping interface (a quarter of what in-process mode adds to a call)."""
    keyed = getattr(headers, "_dict", None)
    if isinstance(keyed, dict):
        try:  # the values are text or bytes (latin-1, as HTTP sends them); decoded here, not by a call each
            lower_case: dict[str, str] = {}
            for key, value in keyed.items():
                lower_case[key._lower] = value.decode("latin-1") if value.__class__ is bytes else value
            return lower_case
        except AttributeError:
            pass  # another botocore's layout: the mapping interface below
    return {name.lower(): _text(value) for name, value in headers.items()}


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


def _work_due(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the loop has a callback ready or a timer due: otherwise running it would do nothing, and a call
    that needs no durability wait skips it (most of what a call would otherwise add). The standard library's
    loop keeps both in ``_ready`` and ``_scheduled``; a loop without them is always run."""
    ready = getattr(loop, "_ready", None)
    scheduled = getattr(loop, "_scheduled", None)
    if ready is None or scheduled is None:
        return True
    return bool(ready) or (bool(scheduled) and scheduled[0].when() <= loop.time())


def _run_due(loop: asyncio.AbstractEventLoop) -> None:
    """Passes of the loop until no callback is ready and no timer due (what those callbacks wake runs in the next
    pass), at most ``MAX_LOOP_PASSES``: work that keeps rescheduling itself goes on at the next call."""
    for _ in range(MAX_LOOP_PASSES):
        loop.call_soon(loop.stop)
        loop.run_forever()
        if not _work_due(loop):
            return


def _aiobotocore_creator() -> Any:
    """aiobotocore's client creator, when aiobotocore is installed (its clients are hooked too)."""
    if importlib.util.find_spec("aiobotocore") is None:
        return None
    from aiobotocore.client import AioClientCreator

    return AioClientCreator


def _running_loop() -> asyncio.AbstractEventLoop | None:
    return asyncio._get_running_loop()  # None outside a running loop (get_running_loop raises, which costs more)


def _new_loop() -> asyncio.AbstractEventLoop:
    """The standard library's loop: started and stopped for every call, it costs a third of uvloop's there
    (about 9 against 29 us a run on the machine measured), and the in-process dynastore serves no sockets."""
    return asyncio.new_event_loop()


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


def _signed(
    credentials: dict[str, str], region: str, method: str, path: str, headers: dict[str, str], body: bytes
) -> dict[str, str]:
    """``headers`` (lower-case names) signed now with ``credentials``, as a client of ``localhost`` signs them."""
    from dynastore.security.sigv4 import sign_headers

    signed = sign_headers(
        method,
        path,
        {**headers, "host": headers.get("host", "localhost")},
        body,
        access_key_id=credentials["aws_access_key_id"],
        secret=credentials["aws_secret_access_key"],
        region=region,
        amz_date=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
    )
    return {name.lower(): value for name, value in signed.items()}
