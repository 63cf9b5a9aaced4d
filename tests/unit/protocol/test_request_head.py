"""The common request read in one pass (request_head.read_simple), in its two forms, the Python module and its C
twin (protocol/request_head.c): whatever either reads, it reads as the parser (httptools) does; whatever the
parser refuses or reads otherwise, it leaves to the parser; and a connection serves requests of either kind,
pipelined in any mix, in order. The C file is compiled here from the source tree, as the SigV4 hashing tests
compile theirs."""

from __future__ import annotations

import random
import sysconfig
from types import ModuleType
from typing import Any

import httptools
import pytest

from dynastore.protocol import request_head as installed
from dynastore.protocol.http_server import HttpConnection, _header_name
from dynastore.protocol.protocol import RawResponse
from tests.unit import c_twins
from tests.unit.protocol.test_http_server import FakeCommitter, FakeProtocol, FakeTransport

HEAD_LIMIT = 16 * 1024
BODY_LIMIT = 1024

COMMON = (
    b"POST / HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept-Encoding: identity\r\n"
    b"Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.GetItem\r\n"
    b"User-Agent: Boto3/1.35 md/Botocore#1.35\r\nX-Amz-Date: 20261128T214346Z\r\n"
    b"Authorization: AWS4-HMAC-SHA256 Credential=AKID/20261128/us-east-1/dynamodb/aws4_request, "
    b"SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=2ed2\r\n"
    b"Content-Length: 23\r\n\r\n"
    b'{"TableName":"t","K":1}'
)
NAMES: tuple[bytes, ...] = (b"Host", b"Accept-Encoding", b"Content-Type", b"X-Amz-Target", b"User-Agent")
NAMES += (b"X-Amz-Date", b"Authorization", b"Content-Length", b"Connection", b"Transfer-Encoding", b"Expect")
NAMES += (b"Upgrade", b"A")


def _with(header: bytes) -> bytes:
    """COMMON with one more header line (or lines), before its Host."""
    return COMMON.replace(b"Host:", header + b"\r\nHost:")


@pytest.fixture(scope="module")
def compiled_here(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """request_head.c built with the compiler Python was built with, as setup.py builds it."""
    return c_twins.compiled_here("protocol/request_head", tmp_path_factory.mktemp("c"))


@pytest.fixture(scope="module")
def in_python() -> ModuleType:
    return c_twins.in_python("protocol/request_head")


@pytest.fixture(params=["c", "python", "installed"])
def reader(request: pytest.FixtureRequest) -> ModuleType:
    """A form of the module, knowing NAMES as the parser's callback teaches them (http_server._header_name)."""
    module: ModuleType
    if request.param == "installed":
        module = installed
    else:
        module = request.getfixturevalue("compiled_here" if request.param == "c" else "in_python")
    module._forget_names()  # whatever other tests taught it, up to its bound
    for name in NAMES:
        module.learn_name(name, _header_name(name))
    return module


def test_the_c_twin_has_the_names_of_the_module_it_replaces(compiled_here: ModuleType, in_python: ModuleType) -> None:
    assert str(compiled_here.__file__).endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    public = {"learn_name", "read_simple"}
    assert {n for n in dir(compiled_here) if not n.startswith("_")} == public
    assert {n for n in dir(in_python) if not n.startswith("_")} - {"annotations", "Final"} == public


class _Parsed:
    """What the parser makes of bytes: each request's method, URL, headers, body and keep-alive, or its refusal."""

    def __init__(self, data: bytes) -> None:
        self.requests: list[tuple[bytes, bytes, dict[str, str], bytes, bool]] = []
        self._headers: dict[str, str] = {}
        self._url = b""
        self._body = b""
        self.parser = httptools.HttpRequestParser(self)
        self.error = ""
        try:
            self.parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as e:
            self.error = type(e).__name__

    def on_message_begin(self) -> None:
        self._headers, self._url, self._body = {}, b"", b""

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self._body += body

    def on_message_complete(self) -> None:
        method = self.parser.get_method()
        self.requests.append((method, self._url, self._headers, self._body, self.parser.should_keep_alive()))


def _agrees(reader: ModuleType, data: bytes) -> bool:
    """read_simple either leaves ``data`` to the parser or reads its first request as the parser does; True when
    it read it."""
    read = reader.read_simple(data, 0, HEAD_LIMIT, BODY_LIMIT)
    if read is None:
        return False
    headers, body, keep_alive, end = read
    parsed = _Parsed(data[:end])
    assert parsed.error == ""
    assert parsed.requests == [(b"POST", b"/", headers, body, keep_alive)]
    return True


def test_the_common_form_is_read_as_the_parser_reads_it(reader: ModuleType) -> None:
    assert _agrees(reader, COMMON)
    read = reader.read_simple(COMMON + b"POST / HTT", 0, HEAD_LIMIT, BODY_LIMIT)
    assert read is not None and read[3] == len(COMMON)  # a pipelined request follows where it ends
    assert read[0]["x-amz-target"] == "DynamoDB_20120810.GetItem" and read[2] is True
    again = reader.read_simple(b"xx" + COMMON, 2, HEAD_LIMIT, BODY_LIMIT)  # read from where it starts
    assert again is not None and again[:3] == read[:3] and again[3] == len(COMMON) + 2


def test_a_request_without_headers_is_read_as_the_parser_reads_it(reader: ModuleType) -> None:
    assert _agrees(reader, b"POST / HTTP/1.1\r\n\r\nPOST")


@pytest.mark.parametrize(
    "header",
    [
        b"A:  x y  ",  # leading spaces dropped, trailing kept
        b"A:",
        b"A: \xff\xe9",  # bytes past ASCII, read as Latin-1
        b"Connection: close",
        b"Connection: Keep-Alive",
        b"A: 1\r\nA: 2",  # the last of a repeated header
    ],
)
def test_values_are_read_as_the_parser_reads_them(reader: ModuleType, header: bytes) -> None:
    assert _agrees(reader, _with(header))


@pytest.mark.parametrize(
    "data",
    [
        _with(b"Unknown-Name: x"),  # a name the parser has not accepted yet
        _with(b"A : x"),
        _with(b"A"),  # no colon
        _with(b"A: x\x01y"),
        _with(b"A: x\x7fy"),
        _with(b"A: x\ty"),
        _with(b"A: x\ny"),
        _with(b"A: x\ry"),
        _with(b"A: x\r\n folded"),
        _with(b"Content-Length: 23"),  # given twice
        COMMON.replace(b"Content-Length: 23", b"Content-Length: +23"),
        COMMON.replace(b"Content-Length: 23", b"Content-Length: \xb2\xb3"),  # digits only in Latin-1
        _with(b"Transfer-Encoding: chunked"),
        _with(b"Expect: 100-continue"),
        _with(b"Upgrade: h2c"),
        _with(b"Connection: keep-alive, Upgrade"),
        COMMON.replace(b"POST / ", b"GET / "),
        COMMON.replace(b"POST / ", b"POST /x "),
        COMMON.replace(b"HTTP/1.1", b"HTTP/1.0"),
        COMMON[:-1],  # the body not all here yet
        COMMON[:40],  # nor the head
        COMMON.replace(b"Content-Length: 23", b"Content-Length: 2048") + b"x" * 2025,  # past the body limit
        COMMON.replace(b"Host: ", b"Host: " + b"h" * HEAD_LIMIT),  # past the head limit
    ],
)
def test_anything_else_is_left_to_the_parser(reader: ModuleType, data: bytes) -> None:
    assert reader.read_simple(data, 0, HEAD_LIMIT, BODY_LIMIT) is None


def test_mutated_requests_are_read_as_the_parser_reads_them_or_left_to_it(reader: ModuleType) -> None:
    """Bytes changed, inserted and cut at random: never a request the parser would refuse or read otherwise."""
    rng = random.Random(32)
    alphabet = b"\x00\t\n\r :,\x7f\xffaA0-/" + bytes(range(32, 127))
    read = 0
    for _ in range(3000):
        data = bytearray(COMMON)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            kind = rng.random()
            if kind < 0.4:
                data[at] = rng.choice(alphabet)
            elif kind < 0.8:
                data[at:at] = bytes([rng.choice(alphabet)])
            else:
                del data[at : at + rng.randint(1, 4)]
        read += _agrees(reader, bytes(data))
    assert read > 300  # many mutations (a letter in a value, a digit in the body) leave the common form


class _Seen(FakeProtocol):
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str], bytes]] = []

    def handle(self, method: str, headers: dict[str, str], body: bytes, path: str = "/") -> RawResponse:
        self.seen.append((method, dict(headers), body))
        return super().handle(method, headers, body, path)


def _connect(handler: Any) -> tuple[HttpConnection, FakeTransport]:
    connection = HttpConnection(handler, FakeCommitter())
    transport = FakeTransport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    return connection, transport


def _request(target: bytes, extra: bytes = b"") -> bytes:
    return (
        b"POST / HTTP/1.1\r\nHost: x\r\n" + extra + b"X-Amz-Target: DynamoDB_20120810." + target + b"\r\n"
        b"Content-Length: 2\r\n\r\n{}"
    )


def test_a_common_request_is_served_without_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    installed._forget_names()
    for name in (b"Host", b"X-Amz-Target", b"Content-Length"):
        installed.learn_name(name, _header_name(name))  # as the parser's callback teaches a name it accepted
    handler = _Seen()
    connection, transport = _connect(handler)

    def refuse(data: bytes) -> None:
        raise AssertionError("the parser was used")

    monkeypatch.setattr(connection, "_parser", type("NoParser", (), {"feed_data": staticmethod(refuse)})())
    connection.data_received(_request(b"Get") + _request(b"Put"))
    assert [headers["x-amz-target"] for _, headers, _ in handler.seen] == [
        "DynamoDB_20120810.Get",
        "DynamoDB_20120810.Put",
    ]
    assert len(transport.written) == 2


@pytest.mark.parametrize("cut", [1, 10, 30, 60, 90])
def test_requests_of_both_kinds_pipelined_and_cut_anywhere_are_served_in_order(cut: int) -> None:
    """A request the parser reads (an unknown header) between common ones, the bytes cut at ``cut`` and every
    ``cut`` bytes after: the parser's half-read request is never taken for the start of a common one."""
    handler = _Seen()
    connection, transport = _connect(handler)
    data = _request(b"One") + _request(b"Two", b"Never-Seen-Before-%d: y\r\n" % cut) + _request(b"Three")
    data += _request(b"Four")
    for i in range(0, len(data), cut):
        connection.data_received(data[i : i + cut])
    targets = [headers["x-amz-target"].rpartition(".")[2] for _, headers, _ in handler.seen]
    assert targets == ["One", "Two", "Three", "Four"]
    assert [body for _, _, body in handler.seen] == [b"{}"] * 4
    assert len(transport.written) == 4 and not transport.closed


def test_connection_close_ends_the_connection_after_its_answer() -> None:
    handler = _Seen()
    connection, transport = _connect(handler)
    connection.data_received(_request(b"Last", b"Connection: close\r\n") + _request(b"Never"))
    assert [headers["x-amz-target"] for _, headers, _ in handler.seen] == ["DynamoDB_20120810.Last"]
    assert transport.closed and b"Connection: close" in transport.written[0]
