"""Which requests a listening server answers, by their Host and Origin headers (docs/security.md "Browsers").

DNS rebinding: a page of ``evil.example`` whose name is then made to resolve to 127.0.0.1 reaches a local server
as its own origin, with ``Host: evil.example``. A server answers only a Host that is

- ``localhost``, or any IP address literal (``127.0.0.1:8000``, ``[::1]:8000``, ``192.168.1.10``): rebinding
  needs a name the attacker controls, so a literal is safe whatever address the server listens on (this keeps
  ``docker run -p 8000:8000`` and a server on ``--host 0.0.0.0`` reachable by address);
- the name given with ``--host`` (when it is a name);
- a name given with ``--allowed-hosts`` (``*``: any Host, and any Origin below).

The port in Host is not compared: a published or forwarded port may differ from the one the server binds.

Cross-origin pages: with ``--auth none`` every request is served, so a browser request (one with an Origin) is
answered only when it comes from this server's own origin, or from a page of ``localhost``, a loopback address,
the ``--host`` address or a name given with ``--allowed-hosts``: a local page using the SDK keeps working, a page
of any other site is refused (its preflight too). With ``--auth sigv4`` a request is authorised by its signature,
which no other site's page can make, and any Origin is answered as DynamoDB answers it (``*``).

Only servers over HTTP check: the in-process mode (dynastore.testing) has no socket a browser could reach.
"""

from __future__ import annotations

import ipaddress
import logging
import zlib
from collections.abc import Iterable
from urllib.parse import urlsplit

import orjson

from dynastore import messages
from dynastore.protocol.http_server import RequestHandler
from dynastore.protocol.protocol import Headers, RawResponse

__all__ = ["ANY_HOST", "HostGuard", "HostRule"]

log = logging.getLogger("dynastore")

ANY_HOST = "*"
_WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::", "[::]"})
_VERDICT_CACHE_LIMIT = 256  # distinct Host / Origin values remembered (a client sends the same one every time)
_LOGGED_LIMIT = 32  # refused values logged once each, up to this many (a hostile page cannot flood the log)


def _name(host: str) -> str:
    """A host name as compared: lower case, without the final dot of a fully qualified name."""
    return host.strip().lower().removesuffix(".")


def _split_port(authority: str) -> str:
    """``name:8000`` -> ``name``, ``[::1]:8000`` -> ``::1``; what is not host:port stays as it is."""
    if authority.startswith("["):
        end = authority.find("]")
        return authority[1:end] if end > 0 else authority
    name, colon, port = authority.rpartition(":")
    return name if colon and port.isdigit() and ":" not in name else authority


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


class HostRule:
    """The Host and Origin rules of one server, from its listening address and ``--allowed-hosts``."""

    def __init__(self, listen_host: str, allowed: Iterable[str], *, check_origin: bool) -> None:
        names = {_name(name) for name in allowed}
        self.any_host = ANY_HOST in names
        listening = _name(listen_host)
        if listening not in _WILDCARD_ADDRESSES and _ip(_split_port(listening)) is None:
            names.add(listening)
        names.add("localhost")
        self._names = frozenset(names)
        listen_ip = _ip(listening.strip("[]"))
        self._listen_ip = None if listening in _WILDCARD_ADDRESSES else listen_ip
        self.check_origin = check_origin and not self.any_host
        self._hosts: dict[str, bool] = {}
        self._origins: dict[str, bool] = {}

    def allows_host(self, host: str) -> bool:
        """Whether a request with this Host header (as sent) is answered."""
        verdict = self._hosts.get(host)
        if verdict is None:
            name = _name(_split_port(host.strip()))
            verdict = self.any_host or name in self._names or _ip(name) is not None
            _remember(self._hosts, host, verdict)
        return verdict

    def allows_origin(self, origin: str, host: str) -> bool:
        """Whether a browser request from a page of ``origin`` (its Origin header) is answered."""
        if not self.check_origin:
            return True
        verdict = self._origins.get(origin)
        if verdict is None:
            verdict = self._is_local_origin(origin)
            _remember(self._origins, origin, verdict)
        return verdict or _is_same_origin(origin, host)

    def _is_local_origin(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin.strip())
            hostname = parts.hostname
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not hostname:
            return False  # "null" (a file:// page, a sandboxed frame) and other schemes
        name = _name(hostname)
        if name in self._names:
            return True
        address = _ip(name)
        return address is not None and (address.is_loopback or address == self._listen_ip)


def _is_same_origin(origin: str, host: str) -> bool:
    """A page this server served itself (the console) calling it back: its origin's authority is the Host."""
    scheme, separator, authority = origin.strip().partition("://")
    return bool(separator) and scheme in ("http", "https") and authority.lower() == host.strip().lower()


def _remember(cache: dict[str, bool], key: str, verdict: bool) -> None:
    if len(cache) >= _VERDICT_CACHE_LIMIT:
        cache.clear()
    cache[key] = verdict


class HostGuard:
    """A request handler that answers 403 to requests its HostRule refuses and hands on every other one."""

    def __init__(self, inner: RequestHandler, rule: HostRule) -> None:
        self._inner = inner
        self._rule = rule
        self._logged: set[str] = set()

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        host = headers.get("host")
        rule = self._rule
        if host is not None and not rule.allows_host(host):
            return self._refuse(messages.HOST_NOT_ALLOWED.format(host=host))
        origin = headers.get("origin")
        if origin is not None and not rule.allows_origin(origin, host or ""):
            return self._refuse(messages.ORIGIN_NOT_ALLOWED.format(origin=origin))
        return self._inner.handle(method, headers, body, path)

    def _refuse(self, text: str) -> RawResponse:
        if len(self._logged) < _LOGGED_LIMIT and text not in self._logged:
            self._logged.add(text)
            log.warning("refused a request: %s", text)
        # JSON with a "message", so that an SDK shows the text (its error code is then the status, "403").
        body = orjson.dumps({"message": text})
        return RawResponse(403, body, "application/json", [("x-amz-crc32", str(zlib.crc32(body)))])
