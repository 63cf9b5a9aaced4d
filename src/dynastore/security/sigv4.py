"""AWS Signature Version 4: the canonical request, the string to sign and the signing key, shared by the server's
verification (authenticator.py) and the clients dynastore itself signs for (the ``partitions`` command, tests).

A request's canonical form follows the SigV4 specification as AWS SDKs produce it for JSON services: the path with
dot segments and repeated slashes removed and each segment percent-encoded once more, the query string's pairs
sorted (as sent, already encoded; for a presigned request without ``X-Amz-Signature``), each signed header as
``name:value`` with the value's runs of white space made one space, and the payload's SHA-256.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Final
from urllib.parse import quote

from dynastore.security import sigv4_hashing
from dynastore.security.sigv4_hashing import HashState

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
request_signature: Final = sigv4_hashing.request_signature
sha256: Final = sigv4_hashing.sha256
ALGORITHM: Final = "AWS4-HMAC-SHA256"
TERMINATOR: Final = "aws4_request"
SERVICE: Final = "dynamodb"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
# The shape of AWS's region names (us-east-1, eu-central-2, us-gov-west-1, cn-north-1): the regions a credential
# scope may name, each its own namespace of tables.
REGION_NAME: Final = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    """HMAC chain of the secret over the scope: the key that signs every request of that day, region and service."""
    key = hmac.digest(("AWS4" + secret).encode(), date.encode(), "sha256")
    key = hmac.digest(key, region.encode(), "sha256")
    key = hmac.digest(key, service.encode(), "sha256")
    return hmac.digest(key, TERMINATOR.encode(), "sha256")


def signature(key: bytes, amz_date: str, scope: str, canonical_request: str) -> str:
    digest = hashlib.sha256(canonical_request.encode("latin-1", "replace")).hexdigest()
    return hmac.digest(key, f"{ALGORITHM}\n{amz_date}\n{scope}\n{digest}".encode(), "sha256").hex()


class KeyedHash:
    """HMAC-SHA256 under one signing key, for the strings to sign of its requests. The key's inner and outer pads
    are hashed once, and so is the start of a string to sign (algorithm, request time and scope: the same for every
    request of one second), so signing a request hashes the inner hash's last two blocks (the canonical request's
    digest and the padding) and the outer hash's one, from copied states (sigv4_hashing.py)."""

    __slots__ = ("_inner", "_outer", "_dated")

    def __init__(self, key: bytes) -> None:
        padded = key.ljust(64, b"\0")  # a SHA-256 signing key is 32 bytes, shorter than the block
        self._inner = sha256(bytes(b ^ 0x36 for b in padded))
        self._outer = sha256(bytes(b ^ 0x5C for b in padded))
        # Request time -> (scope, the inner hash with "AWS4-HMAC-SHA256\n<time>\n<scope>\n" taken in). A signing
        # key signs for one scope, so the time tells the entries apart (the scope is compared all the same).
        # Clients sign within the same few seconds (a load generator that signs ahead interleaves several), so a
        # handful of entries serve.
        self._dated: dict[str, tuple[str, HashState]] = {}

    def sign_request(self, amz_date: str, scope: str, start: HashState, body: bytes) -> bytes:
        """The hex signature (ASCII bytes) of a request of that time and scope whose canonical request, up to its
        payload's hash, is the state ``start`` (RequestDigests.start), and whose body is ``body``."""
        return request_signature(body, start, self._dated_state(amz_date, scope), self._outer)

    def _dated_state(self, amz_date: str, scope: str) -> HashState:
        found = self._dated.get(amz_date)
        if found is not None and found[0] == scope:
            return found[1]
        if len(self._dated) >= _DATED_LIMIT:
            self._dated.clear()
        dated = self._inner.copy()
        dated.update(f"{ALGORITHM}\n{amz_date}\n{scope}\n".encode())
        self._dated[amz_date] = (scope, dated)
        return dated


_DATED_LIMIT: Final = 16  # request times kept per signing key before that cache starts over


class RequestDigests:
    """The SHA-256 of requests' canonical forms, for one verifier. Between one second and the next a client's
    requests differ only in their payload's hash, the canonical request's last line: the hash state of everything
    before it (method, path, query, the signed headers' names and values, the request time among them) is kept per
    those parts, so a request hashes one or two blocks instead of four or more, and builds no canonical text. A
    kept state is only ever copied, never changed: each digest is of exactly the request's canonical bytes."""

    __slots__ = ("_starts",)

    def __init__(self) -> None:
        self._starts: dict[tuple[str, str, str, str, tuple[str | None, ...]], HashState] = {}

    def start(self, method: str, path: str, query: str, headers: dict[str, str], signed_headers: str) -> HashState:
        """The hash state of a request's canonical form up to its last line (the payload's hash); kept, so the
        caller copies it before taking more in (sigv4_hashing.request_signature does)."""
        # A signed header the request lacks is None here and signs as empty: the key still tells it apart.
        parts = (method, path, query, signed_headers, tuple([headers.get(name) for name in _names(signed_headers)]))
        start = self._starts.get(parts)
        if start is None:
            text = canonical_start(method, path, query, headers, signed_headers)
            start = sha256(text.encode("latin-1", "replace"))
            if len(text) <= _START_BYTES:  # bounded: at most 256 starts of 2 KB held
                if len(self._starts) >= _STARTS_LIMIT:
                    self._starts.clear()
                self._starts[parts] = start
        return start


_STARTS_LIMIT: Final = 256
_START_BYTES: Final = 2048


def canonical_uri(path: str) -> str:
    """The path part as SDKs sign it for non-S3 services: dot segments and empty segments removed, then quoted."""
    if path == "/" or not path:
        return "/"
    segments: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment and segment != ".":
            segments.append(segment)
    normalized = "/" + "/".join(segments)
    if path.endswith("/") and segments:
        normalized += "/"
    return quote(normalized, safe="/~")


def canonical_query(query: str, drop_signature: bool = False) -> str:
    """The query string's pairs sorted as sent (a presigned request leaves its X-Amz-Signature out)."""
    if not query:
        return ""
    pairs = []
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        if drop_signature and key == "X-Amz-Signature":
            continue
        pairs.append((key, value))
    pairs.sort()
    return "&".join(f"{key}={value}" for key, value in pairs)


def canonical_headers(signed_headers: str, headers: dict[str, str]) -> str:
    """``name:value\\n`` for each signed header (a header the request lacks signs as empty, and so mismatches)."""
    lines = []
    for name in _names(signed_headers):
        value = headers.get(name, "")
        trimmed = _TRIMMED.get(value)
        if trimmed is None:
            trimmed = _trimmed(value)
            if len(value) <= _TRIMMED_VALUE_BYTES:  # bounded: at most 256 x 256 characters held
                if len(_TRIMMED) >= _TRIMMED_LIMIT:
                    _TRIMMED.clear()
                _TRIMMED[value] = trimmed
        lines.append(f"{name}:{trimmed}\n")
    return "".join(lines)


def _names(signed_headers: str) -> tuple[str, ...]:
    """The names of a SignedHeaders list (a client signs the same list again and again: cached)."""
    names = _SIGNED_NAMES.get(signed_headers)
    if names is None:
        names = tuple(signed_headers.split(";"))
        if len(signed_headers) <= _TRIMMED_VALUE_BYTES:
            if len(_SIGNED_NAMES) >= _TRIMMED_LIMIT:
                _SIGNED_NAMES.clear()
            _SIGNED_NAMES[signed_headers] = names
    return names


_SIGNED_NAMES: Final[dict[str, tuple[str, ...]]] = {}


# Header values already trimmed: a client sends the same Content-Type, Host, User-Agent and target again and again,
# so a look-up replaces the scan on nearly every request.
_TRIMMED: Final[dict[str, str]] = {}
_TRIMMED_LIMIT: Final = 256
_TRIMMED_VALUE_BYTES: Final = 256


def _trimmed(value: str) -> str:
    """The value with its runs of white space made one space and its ends stripped (SigV4's Trimall). Only ASCII
    white space counts: the server holds header bytes decoded as Latin-1, where the UTF-8 of a client's character
    may contain 0x85 or 0xA0, which str.split would take for white space."""
    return _WHITE_RUNS.sub(" ", value).strip(" \t\n\r\x0b\x0c")


_WHITE_RUNS: Final = re.compile(r"[ \t\n\r\x0b\x0c]+")


def canonical_start(method: str, path: str, query: str, headers: dict[str, str], signed_headers: str) -> str:
    """A canonical request up to its last line, the payload's hash."""
    return f"{method}\n{canonical_uri(path)}\n{query}\n{canonical_headers(signed_headers, headers)}\n{signed_headers}\n"


def canonical_request(
    method: str, path: str, query: str, headers: dict[str, str], signed_headers: str, payload_hash: str
) -> str:
    return canonical_start(method, path, query, headers, signed_headers) + payload_hash


def sign_headers(
    method: str,
    url_path: str,
    headers: dict[str, str],
    body: bytes,
    *,
    access_key_id: str,
    secret: str,
    region: str,
    amz_date: str,
    session_token: str = "",
) -> dict[str, str]:
    """``headers`` plus X-Amz-Date, X-Amz-Security-Token (with a token) and Authorization, signed as an SDK signs
    (``headers`` must hold Host). ``url_path`` may carry a query string."""
    path, _, query = url_path.partition("?")
    signed = {name.lower(): value for name, value in headers.items()}
    signed["x-amz-date"] = amz_date
    if session_token:
        signed["x-amz-security-token"] = session_token
    names = ";".join(sorted(signed))
    scope = f"{amz_date[:8]}/{region}/{SERVICE}/{TERMINATOR}"
    request = canonical_request(method, path, canonical_query(query), signed, names, hashlib.sha256(body).hexdigest())
    key = signing_key(secret, amz_date[:8], region, SERVICE)
    out = dict(headers)
    out["X-Amz-Date"] = amz_date
    if session_token:
        out["X-Amz-Security-Token"] = session_token
    out["Authorization"] = (
        f"{ALGORITHM} Credential={access_key_id}/{scope}, SignedHeaders={names}, "
        f"Signature={signature(key, amz_date, scope, request)}"
    )
    return out
