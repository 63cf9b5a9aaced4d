"""The common request read in one pass, for a connection (http_server.py) to serve without the parser.

The parser (httptools) reads a request through a callback per part: the start of the message, the URL, each
header, the end of the head, the body and the end of the message, each a call from C into Python with objects made
for it, which came to about a fifth of what a GetItem costs the server. Nearly every request an SDK sends has one
form: ``POST / HTTP/1.1``, a few headers of names seen before, a Content-Length and a body that arrived with the
head. ``read_simple`` reads a request of exactly that form, complete in the bytes received, in one pass over its
head; for anything else it answers None and the connection hands the bytes to the parser, which reads them as it
always has. It accepts nothing the parser refuses: every header name must be one the parser has already accepted
(``learn_name``), no control character (not even a tab) may appear in the head, Content-Length must be plain
digits and given once, and Transfer-Encoding, Expect, Upgrade and any Connection value but ``keep-alive`` or
``close`` send the request to the parser. Values are read as the parser reads them: leading spaces dropped,
trailing ones kept.

This is the pure-Python form. The compiled build replaces this module by request_head.c (setup.py builds it under
this module's name, and Python imports an extension module before a .py of the same name), which reads the head
in one loop over its bytes: tests/unit/protocol/test_request_head.py holds the two to the parser's readings.
"""

from __future__ import annotations

from typing import Final

__all__ = ["learn_name", "read_simple"]

# Header names the parser accepted, as text, to their keys (lower case, interned). Bounded: a client's own names
# beyond the bound send its requests to the parser.
_KNOWN: Final[dict[str, str]] = {}
_KNOWN_MAX: Final = 64


def learn_name(name: bytes, key: str) -> None:
    """Keep a header name the parser accepted, with its key, for ``read_simple``."""
    if len(_KNOWN) < _KNOWN_MAX and 0 < len(name) <= 64:
        _KNOWN.setdefault(name.decode("latin-1"), key)


def _forget_names() -> None:
    """Forget every name learned: for tests, which teach their own."""
    _KNOWN.clear()


_REQUEST_LINE: Final = b"POST / HTTP/1.1\r\n"
_HEAD_END: Final = b"\r\n\r\n"
# Control characters: the parser refuses them in a head (but for tab in a value, which sends a request to it).
_CONTROLS: Final = bytes(range(32)) + b"\x7f"
_SPECIAL: Final = frozenset({"content-length", "transfer-encoding", "expect", "upgrade", "connection"})


def read_simple(
    data: bytes, start: int, max_head: int, max_body: int
) -> tuple[dict[str, str], bytes, bool, int] | None:
    """The request at ``start`` in ``data`` if it has the common form and is complete there, its head at most
    ``max_head`` bytes and its body at most ``max_body``: its headers (by key), its body, whether the connection
    stays open after it, and where the next request begins. None otherwise (the parser reads it instead, and
    refuses what must be refused)."""
    if not data.startswith(_REQUEST_LINE, start):
        return None
    lines_start = start + len(_REQUEST_LINE)
    end = data.find(_HEAD_END, lines_start - 2)
    if end < 0 or end - start > max_head:
        return None
    headers: dict[str, str] = {}
    keep_alive = True
    length = 0
    if end > lines_start:  # else the head ends at the request line: no headers
        raw = data[lines_start:end]
        lines = raw.decode("latin-1").split("\r\n")
        # No control character but the line breaks themselves: a lone CR or LF, a NUL or a tab sends it on.
        if len(raw.translate(None, _CONTROLS)) != len(raw) - 2 * (len(lines) - 1):
            return None
        for line in lines:
            name, colon, value = line.partition(":")
            key = _KNOWN.get(name)
            if key is None or not colon:
                return None
            value = value.lstrip(" ")
            if key in _SPECIAL:
                if key == "content-length":
                    if "content-length" in headers or not (value.isascii() and value.isdigit()):
                        return None
                    length = int(value)
                elif key == "connection":
                    token = value.lower()
                    if token != "keep-alive" and token != "close":
                        return None
                    keep_alive = token == "keep-alive"
                else:
                    return None
            headers[key] = value
    body_start = end + 4
    if length > max_body or len(data) - body_start < length:
        return None
    body_end = body_start + length
    body = data[body_start:body_end] if length else b""
    return headers, body, keep_alive, body_end
