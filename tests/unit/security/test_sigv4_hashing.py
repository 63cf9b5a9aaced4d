"""SigV4's hashing in its two forms, the Python module and its C twin (security/sigv4_hashing.c), held to hashlib's
and hmac's results: every length around SHA-256's block and padding boundaries, states continued after copies,
and whole request signatures. The C file is compiled here from the source tree, so the pure-Python checkout tests
it too; the compiled install's own module is one of the forms when it is the C one."""

from __future__ import annotations

import hashlib
import hmac
import random
import sys
import sysconfig
from collections.abc import Iterator
from types import ModuleType

import pytest

from dynastore.security import sigv4_hashing as installed
from tests.unit import c_twins


@pytest.fixture(scope="module")
def compiled_here(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """sigv4_hashing.c built with the compiler Python was built with, as setup.py builds it."""
    return c_twins.compiled_here("security/sigv4_hashing", tmp_path_factory.mktemp("c"))


@pytest.fixture(scope="module")
def in_python() -> ModuleType:
    return c_twins.in_python("security/sigv4_hashing")


@pytest.fixture(params=["c with openssl's blocks", "c with its own blocks", "python", "installed"])
def hashing(request: pytest.FixtureRequest) -> Iterator[ModuleType]:
    if request.param == "installed":
        yield installed
    elif request.param == "python":
        yield request.getfixturevalue("in_python")
    else:
        module: ModuleType = request.getfixturevalue("compiled_here")
        with_openssl = "openssl" in request.param
        chosen = module._compression(with_openssl)
        # On Linux Python's hashlib loads libcrypto, whose block function the C twin then uses.
        assert chosen == ("openssl" if with_openssl and sys.platform == "linux" else "portable")
        yield module
        module._compression(True)


def _public(module: ModuleType) -> set[str]:
    return {name for name in dir(module) if not name.startswith("_")} - {"annotations", "hashlib", "Protocol"}


def test_the_c_twin_has_the_names_of_the_module_it_replaces(compiled_here: ModuleType, in_python: ModuleType) -> None:
    assert str(compiled_here.__file__).endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    assert _public(compiled_here) == _public(in_python) == {"HashState", "sha256", "request_signature"}
    assert isinstance(compiled_here.sha256(), compiled_here.HashState)


# Lengths at and around the block (64 bytes) and the padding's limit (55 bytes fit one block, 56 need two).
LENGTHS = [0, 1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096 + 7]


def test_a_state_digests_what_it_took_in_as_hashlib_does(hashing: ModuleType) -> None:
    rng = random.Random(7)
    for length in LENGTHS:
        data = rng.randbytes(length)
        assert hashing.sha256(data).digest() == hashlib.sha256(data).digest()
        assert hashing.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        # The same bytes in pieces of every size, through copies that leave the copied state as it was.
        for cut in {0, 1, length // 3, length // 2, max(length - 1, 0), length}:
            state = hashing.sha256(data[:cut])
            before = state.hexdigest()
            copy = state.copy()
            copy.update(data[cut:])
            assert copy.hexdigest() == hashlib.sha256(data).hexdigest()
            assert state.hexdigest() == before == hashlib.sha256(data[:cut]).hexdigest()
    assert hashing.sha256().hexdigest() == hashlib.sha256(b"").hexdigest()


def test_a_state_takes_in_any_bytes_like_object(hashing: ModuleType) -> None:
    state = hashing.sha256(bytearray(b"ab"))
    state.update(memoryview(b"cd"))
    assert state.hexdigest() == hashlib.sha256(b"abcd").hexdigest()
    with pytest.raises(TypeError):
        state.update("text")


def _expected_signature(key: bytes, body: bytes, start_text: bytes, string_head: bytes) -> bytes:
    canonical = start_text + hashlib.sha256(body).hexdigest().encode()
    string_to_sign = string_head + hashlib.sha256(canonical).hexdigest().encode()
    return hmac.new(key, string_to_sign, "sha256").hexdigest().encode()


def test_a_request_signature_is_the_hmac_of_its_string_to_sign(hashing: ModuleType) -> None:
    rng = random.Random(11)
    for _ in range(200):
        key = rng.randbytes(32)
        padded = key.ljust(64, b"\0")
        body = rng.randbytes(rng.choice(LENGTHS))
        start_text = rng.randbytes(rng.randrange(0, 400))
        string_head = b"AWS4-HMAC-SHA256\n20261128T170000Z\n20261128/us-east-1/dynamodb/aws4_request\n"
        string_head = string_head[: rng.randrange(len(string_head) + 1)]
        start = hashing.sha256(start_text)
        dated = hashing.sha256(bytes(b ^ 0x36 for b in padded))
        dated.update(string_head)
        outer = hashing.sha256(bytes(b ^ 0x5C for b in padded))
        expected = _expected_signature(key, body, start_text, string_head)
        assert hashing.request_signature(body, start, dated, outer) == expected
        # The kept states are left as they were: the next request of the same client signs the same way.
        assert hashing.request_signature(body, start, dated, outer) == expected
        assert start.hexdigest() == hashlib.sha256(start_text).hexdigest()


def test_the_c_twin_refuses_states_that_are_not_its_own(compiled_here: ModuleType) -> None:
    own = compiled_here.sha256(b"x")
    with pytest.raises(TypeError, match="expected a sigv4_hashing.sha256 state, not _hashlib.HASH"):
        compiled_here.request_signature(b"{}", hashlib.sha256(), own, own)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        compiled_here.request_signature(b"{}", own, own)
    with pytest.raises(TypeError):
        compiled_here.request_signature("text", own, own, own)
