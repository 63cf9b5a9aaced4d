"""SigV4's hashing: hash states kept between requests (``sha256``), and a request's signature from its body and
three of them (``request_signature``).

This is the pure-Python form. The compiled build replaces this module by sigv4_hashing.c (setup.py builds it
under this module's name, and Python imports an extension module before a .py of the same name), which does the
same without an object per step: tests/unit/security/test_sigv4_hashing.py holds the two to the same results.
"""

from __future__ import annotations

import hashlib
from typing import Protocol


class HashState(Protocol):
    """A SHA-256 hash state: hashlib.sha256's objects, or the compiled module's."""

    def update(self, data: bytes, /) -> None: ...

    def copy(self) -> HashState: ...

    def digest(self) -> bytes: ...

    def hexdigest(self) -> str: ...


def sha256(data: bytes = b"") -> HashState:
    """A hash state that has taken in ``data``."""
    return hashlib.sha256(data)


def request_signature(body: bytes, start: HashState, dated: HashState, outer: HashState) -> bytes:
    """The hex signature (ASCII bytes) of a request: the HMAC-SHA256 of its string to sign, whose last line is the
    hash of its canonical request, whose last line is the hash of ``body``. ``start``: the canonical request's
    state up to that last line; ``dated``: the HMAC's inner state (the signing key's inner pad) with the string to
    sign up to its last line taken in; ``outer``: the HMAC's outer state (the key's outer pad)."""
    payload_hash = hashlib.sha256(body).hexdigest()
    canonical = start.copy()
    canonical.update(payload_hash.encode())
    inner = dated.copy()
    inner.update(canonical.hexdigest().encode())
    final = outer.copy()
    final.update(inner.digest())
    return final.hexdigest().encode()
