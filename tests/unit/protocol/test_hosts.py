"""protocol/hosts.py: which Host and Origin headers a listening server answers."""

from __future__ import annotations

import pytest

from dynastore.protocol.hosts import HostGuard, HostRule
from dynastore.protocol.protocol import Headers, RawResponse


class Answer:
    """A request handler that answers 200 and counts what it was handed."""

    def __init__(self) -> None:
        self.handled = 0

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        self.handled += 1
        return RawResponse(200, b"{}")


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST:8000", "localhost.", "127.0.0.1", "127.0.0.1:8000", "[::1]", "[::1]:8000",
     "10.1.2.3:80", "[2001:db8::1]", " 127.0.0.1 "],
)  # fmt: skip
def test_localhost_and_address_literals_are_allowed(host: str) -> None:
    assert HostRule("127.0.0.1", (), check_origin=True).allows_host(host)


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:8000", "localhost.evil.example", "sub.localhost", "127.0.0.1.nip.io", "x",
     "2130706433", "[evil.example]", "", "[::1", "::1]:80"],
)  # fmt: skip
def test_names_are_refused_unless_listed(host: str) -> None:
    assert not HostRule("0.0.0.0", (), check_origin=True).allows_host(host)


def test_listed_names_and_the_listening_name() -> None:
    rule = HostRule("Box.Local", ("db.example", "Dev.Example."), check_origin=True)
    for host in ("db.example:1", "DB.EXAMPLE", "dev.example", "box.local:8000", "box.local."):
        assert rule.allows_host(host), host
    assert not rule.allows_host("other.example")
    assert HostRule("0.0.0.0", ("*",), check_origin=True).allows_host("anything.example")


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:3000", True),
        ("https://localhost", True),
        ("http://127.0.0.1:5500", True),
        ("http://127.8.9.10", True),
        ("http://[::1]:8080", True),
        ("http://db.example:3000", True),
        ("http://192.168.1.10:9000", True),  # the address the server listens on
        ("http://192.168.1.11:9000", False),
        ("https://evil.example", False),
        ("null", False),
        ("file://", False),
        ("chrome-extension://abcdef", False),
        ("http://[::1", False),
        ("http://localhost.evil.example", False),
    ],
)
def test_origins_of_local_pages(origin: str, allowed: bool) -> None:
    rule = HostRule("192.168.1.10", ("db.example",), check_origin=True)
    assert rule.allows_origin(origin, "192.168.1.10:8000") is allowed


def test_a_page_of_the_server_itself_is_its_own_origin() -> None:
    rule = HostRule("0.0.0.0", (), check_origin=True)
    assert rule.allows_origin("http://172.17.0.2:8000", "172.17.0.2:8000")
    assert rule.allows_origin("https://172.17.0.2:8000", "172.17.0.2:8000")
    assert not rule.allows_origin("http://172.17.0.2:8001", "172.17.0.2:8000")
    assert not rule.allows_origin("http://172.17.0.2:8000", "")


def test_origins_are_not_checked_with_authentication_or_any_host() -> None:
    assert HostRule("127.0.0.1", (), check_origin=False).allows_origin("https://evil.example", "localhost")
    assert HostRule("127.0.0.1", ("*",), check_origin=True).allows_origin("null", "localhost")


def test_the_guard_answers_403_and_hands_on_the_rest() -> None:
    inner = Answer()
    guard = HostGuard(inner, HostRule("127.0.0.1", (), check_origin=True))
    refused = guard.handle("GET", {"host": "evil.example"}, b"")
    assert (refused.status, refused.content_type) == (403, "application/json")
    assert refused.body.startswith(b'{"message":"Host \'evil.example\' is not allowed')
    assert [name for name, _ in refused.headers] == ["x-amz-crc32"]
    refused = guard.handle("POST", {"host": "localhost", "origin": "https://evil.example"}, b"{}")
    assert refused.status == 403 and b"Origin 'https://evil.example' is not allowed" in refused.body
    assert inner.handled == 0
    assert guard.handle("POST", {"host": "localhost:8000", "origin": "http://localhost:3000"}, b"{}").status == 200
    assert guard.handle("GET", {}, b"").status == 200  # no Host (HTTP/1.0): no browser sent it
    assert inner.handled == 2
