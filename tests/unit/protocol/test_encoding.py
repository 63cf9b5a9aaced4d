"""Accept-Encoding as DynamoDB reads it (answers observed on DynamoDB), and request bodies' codings."""

from __future__ import annotations

import gzip
import zlib

import pytest

from dynastore.errors import InternalServerError, RequestEntityTooLargeException
from dynastore.protocol.encoding import decompress, response_coding


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        ("gzip", "gzip"),
        ("deflate", "deflate"),
        ("identity", None),
        ("", None),
        ("br", None),
        ("zstd", None),
        ("compress", None),
        ("x-gzip", None),
        ("gzip, deflate", "gzip"),
        ("br, identity, deflate, gzip", "deflate"),
        ("GZIP, identity", "gzip"),
        ("dog, gzip ,, cat", "gzip"),
        ("gzip;q=0.8, deflate;q=0.5", "gzip"),
        ("br, gzip;q=0, deflate; q = 0.5 , identity;q=0", "deflate"),
        ("*", "gzip"),
        ("*, deflate;q=0.5", "gzip"),
        ("*, deflate", "deflate"),
        ("*, identity", "gzip"),
        ("*, gzip;q=0.5", "deflate"),
        ("gzip ;q=0", None),
        ("identity;q=0", None),
        ("*;q=0", None),
        ("*;q=0.5,identity", "gzip"),
        ("gzip;q=0.5,identity;q=0.8", "gzip"),
        ("br;q=0.8,identity;q=0.5,*;q=0", None),
        ('"gzip"', None),
        ("gzip br", None),
        ("gzip:q=1", None),
        ("deflate;q=0.5, gzip;q=31", "gzip"),
        ("gzip;q=31,deflate;q=51", "gzip"),
        ("deflate;q=0.5, gzip;q=0.2", "deflate"),
        ("deflate;q=0.5, gzip;q=1;q=0.2", "gzip"),
        ("deflate;q=0.5,gzip;q=0.", "deflate"),
        ("deflate;q=0.5,gzip;q=0.x", "gzip"),
        ("deflate;q=-0.5,gzip;q=0.2", "gzip"),
        ("gzip;nq=1;q=0 ", None),
        ("gzip;q=0, gzip;q=1, gzip;q=0", "gzip"),
        ("br,identity;q=0.5,gzip;q=0.0001", "gzip"),
    ],
)
def test_response_coding_follows_dynamodb(accept: str, chosen: str | None) -> None:
    assert response_coding(accept) == chosen


def test_request_codings() -> None:
    assert decompress("gzip", gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"
    assert decompress("gzip", gzip.compress(b"ab") + b"junk") == b"ab"
    assert decompress("deflate", zlib.compress(b"zl")) == b"zl"
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    assert decompress("Deflate", raw.compress(b"raw") + raw.flush()) == b"raw"
    assert decompress("identity", b"as is") == b"as is"


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", b""),
        ("gzip", b"plain"),
        # mtime 0: the bytes, and so the test ids, the same in every worker process (pytest-xdist compares them)
        ("gzip", gzip.compress(b"ab", mtime=0)[:-2]),
        ("gzip", gzip.compress(b"ab", mtime=0) + gzip.compress(b"cd", mtime=0)[:-2]),
        ("deflate", b"plain"),
        ("br", b"x"),
    ],
)
def test_what_does_not_decompress_is_an_internal_error(coding: str, body: bytes) -> None:
    with pytest.raises(InternalServerError):
        decompress(coding, body)


def test_the_16_mb_limit_holds_after_decompression() -> None:
    with pytest.raises(RequestEntityTooLargeException):
        decompress("gzip", gzip.compress(b" " * (16 * 1024 * 1024 + 1)))
    with pytest.raises(RequestEntityTooLargeException):
        decompress("deflate", zlib.compress(b" " * (16 * 1024 * 1024 + 1)))
