"""Request heads: the header names a connection has read, and the common request read in one pass.

The general parser (httptools) reads a request through a callback per part: the start of the message, the URL,
each header, the end of the head, the body and the end of the message, each a call from C into Python with
objects made for it, which came to about a fifth of what a GetItem costs the server. Nearly every request an SDK
sends has one form: ``POST / HTTP/1.1``, a few headers of names seen before, a Content-Length and a body that
arrived with the head. ``read_simple`` reads a request of exactly that form, complete in the bytes received, in
one pass over its head; for anything else it answers None and the connection hands the bytes to the parser,
which reads them as it always has. It accepts nothing the parser refuses: every header name must be one the parser
has already accepted (``header_key`` records them), no control character may appear in the head, Content-Length
must be plain digits and given once, and Transfer-Encoding, Expect, Upgrade and any Connection value but
``keep-alive`` or ``close`` send the request to the parser. Values are read as the parser reads them: leading
spaces and tabs dropped, trailing ones kept.
"""

from __future__ import annotations

import sys
from typing import Final

__all__ = ["SimpleRequest", "header_key", "read_simple"]


class SimpleRequest:
    """A ``POST /`` request read whole from the received bytes: its headers (lower-case names), its body, whether
    the connection stays open after it, and where in the bytes the next request begins."""

    __slots__ = ("headers", "body", "keep_alive", "end")

    def __init__(self, headers: dict[str, str], body: bytes, keep_alive: bool, end: int) -> None:
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive
        self.end = end


# A header's name as received, to the lower-case text a request's headers are keyed by: clients send the same
# dozen names on every request, so each is decoded and lowered once, and its hash computed once for all the
# look-ups of it. The bytes form serves the parser's callback, the text form ``read_simple``: a name is in the
# text form only once the parser has accepted it. Bounded: the names of a client's own beyond the bound are
# decoded on every request, by the parser.
_NAMES: Final[dict[bytes, str]] = {}
_NAME_TEXTS: Final[dict[str, str]] = {}
_NAMES_MAX: Final = 256


def header_key(name: bytes) -> str:
    """The key of a header name the parser accepted."""
    key = _NAMES.get(name)
    if key is not None:
        return key
    key = sys.intern(name.decode("latin-1").lower())
    if len(_NAMES) < _NAMES_MAX:
        _NAMES[name] = key
        _NAME_TEXTS[name.decode("latin-1")] = key
    return key


_REQUEST_LINE: Final = b"POST / HTTP/1.1\r\n"
_HEAD_END: Final = b"\r\n\r\n"
# Control characters: the parser refuses them in a head (but for tab in a value, which sends a request to it).
_CONTROLS: Final = bytes(range(32)) + b"\x7f"
_SPECIAL: Final = frozenset({"content-length", "transfer-encoding", "expect", "upgrade", "connection"})


def read_simple(data: bytes, start: int, max_head: int, max_body: int) -> SimpleRequest | None:
    """The request at ``start`` in ``data`` if it has the common form and is complete there, its head at most
    ``max_head`` bytes and its body at most ``max_body``; None otherwise (the parser reads it instead, and refuses
    what must be refused)."""
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
            key = _NAME_TEXTS.get(name)
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
    return SimpleRequest(headers, body, keep_alive, body_end)
