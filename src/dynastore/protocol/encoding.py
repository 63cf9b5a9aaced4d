"""Content codings as DynamoDB has them: compressed request bodies in, gzip or deflate responses out.

Requests: ``Content-Encoding`` gzip (several concatenated members are one body) or deflate. A body that does not
decompress, or a coding DynamoDB does not know, is answered with 500 InternalServerError, as DynamoDB answers it;
bytes after the last complete gzip member are ignored, as DynamoDB ignores them.

Responses: a body of ``COMPRESSION_MIN_BYTES`` or more is compressed when ``Accept-Encoding`` accepts gzip or
deflate. The choice follows DynamoDB's reading of the header: the highest quality wins (a quality over 1 counts as
1, a negative one as 0, an unreadable one as 1, the first ``q`` of an entry counts, and a coding listed twice gets
its best quality); at equal quality a coding named outright beats one accepted through ``*``, the one named first
beats a later one, and through ``*`` gzip beats deflate. ``identity`` and unknown codings are ignored.
"""

from __future__ import annotations

import zlib

from dynastore.errors import InternalServerError, RequestEntityTooLargeException
from dynastore.limits import MAX_REQUEST_BYTES

COMPRESSION_MIN_BYTES = 4096  # DynamoDB leaves smaller responses uncompressed
_CODINGS = ("gzip", "deflate")
_REQUEST_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}


def decompress(encoding: str, body: bytes) -> bytes:
    """Undo a request's Content-Encoding; the result is held to the 16 MB request limit."""
    coding = encoding.strip().lower()
    if not coding or coding == "identity":
        return body
    wbits = _REQUEST_WBITS.get(coding)
    if wbits is None or not body:
        raise InternalServerError()
    try:
        out = _gunzip(body) if wbits == 31 else _inflate(body)
    except zlib.error:
        raise InternalServerError() from None
    if len(out) > MAX_REQUEST_BYTES:
        raise RequestEntityTooLargeException()
    return out


def _gunzip(body: bytes) -> bytes:
    """Every gzip member of the body, joined. What follows a complete member is ignored unless it starts as
    another member does; a member cut short is an error."""
    parts: list[bytes] = []
    total = 0
    rest = body
    while True:
        decompressor = zlib.decompressobj(31)
        part = decompressor.decompress(rest, MAX_REQUEST_BYTES + 1 - total)
        parts.append(part)
        total += len(part)
        if total > MAX_REQUEST_BYTES:
            return b"".join(parts)  # too large: the caller refuses it
        if not decompressor.eof:
            raise zlib.error("truncated gzip member")
        rest = decompressor.unused_data
        if not rest.startswith(b"\x1f\x8b"):
            return part if len(parts) == 1 else b"".join(parts)


def _inflate(body: bytes) -> bytes:
    """A zlib stream, or a raw deflate stream (some clients send one without the zlib header)."""
    for wbits in (15, -15):
        decompressor = zlib.decompressobj(wbits)
        try:
            out = decompressor.decompress(body, MAX_REQUEST_BYTES + 1)
        except zlib.error:
            continue
        if decompressor.eof or len(out) > MAX_REQUEST_BYTES:
            return out
    raise zlib.error("not a deflate stream")


def response_coding(accept_encoding: str) -> str | None:
    """The coding to compress a response with for this Accept-Encoding, or None."""
    named: dict[str, tuple[float, int]] = {}  # coding -> (best quality, position of its first entry)
    wildcard = -1.0
    for position, entry in enumerate(accept_encoding.split(",")):
        token, _, params = entry.partition(";")
        coding = token.strip().lower()
        quality = _quality(params)
        if coding == "*":
            wildcard = max(wildcard, quality)
        elif coding in _CODINGS:
            best, first = named.get(coding, (-1.0, position))
            named[coding] = (max(best, quality), first)
    best_coding: str | None = None
    best_rank: tuple[float, int, int] = (0.0, 0, 0)
    for preference, coding in enumerate(_CODINGS):
        if coding in named:
            quality, position = named[coding]
            rank = (quality, 1, -position)
        else:
            rank = (wildcard, 0, -preference)
        if rank[0] > 0 and (best_coding is None or rank > best_rank):
            best_coding, best_rank = coding, rank
    return best_coding


def _quality(params: str) -> float:
    for param in params.split(";"):
        name, equals, value = param.partition("=")
        if equals and name.strip().lower() == "q":
            try:
                quality = float(value.strip())
            except ValueError:
                return 1.0
            if quality != quality:  # NaN
                return 1.0
            return min(1.0, max(0.0, quality))
    return 1.0


def compress(coding: str, body: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31 if coding == "gzip" else 15)
    return compressor.compress(body) + compressor.flush()
