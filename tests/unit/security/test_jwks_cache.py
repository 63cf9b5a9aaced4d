"""The server's cache of URL providers' keys (security/jwks_cache.py): expiry, fetches started by unknown keys and
their rate limit, failures, and what is written to the credentials store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dynastore import limits
from dynastore.security import roles, users
from dynastore.security.jwks_cache import Fetched, JwksCache, max_age
from dynastore.util.clock import ManualClock

ISSUER = "https://login.example.com"
URL = "https://login.example.com/jwks.json"
OLD = {"keys": [{"kty": "oct", "kid": "old"}]}
NEW = {"keys": [{"kty": "oct", "kid": "new"}]}


class Provider:
    """A fake provider's JWKS endpoint: what it answers, and the fetches it saw."""

    def __init__(self) -> None:
        self.jwks: dict[str, Any] = NEW
        self.max_age: float | None = None
        self.down = False
        self.fetched: list[str] = []

    def fetch(self, url: str) -> Fetched:
        self.fetched.append(url)
        if self.down:
            raise OSError("connection refused")
        return Fetched(self.jwks, self.max_age)


class Held:
    """Runs the cache's background work only when told to (as a thread would, later)."""

    def __init__(self) -> None:
        self.work: list[Callable[[], None]] = []

    def __call__(self, work: Callable[[], None]) -> None:
        self.work.append(work)

    def land(self) -> None:
        work, self.work = self.work, []
        for item in work:
            item()


def _stored(url: str = URL) -> dict[str, Any]:
    return {ISSUER: {"account": "111122223333", "audiences": ["app"], "jwks": OLD, "jwks_url": url}}


def _cache(clock: ManualClock, provider: Provider, store: Path | None = None) -> tuple[JwksCache, Held]:
    held = Held()
    return JwksCache(clock, store, provider.fetch, held), held


def _kids(providers: dict[str, Any]) -> list[str]:
    return [key["kid"] for key in providers[ISSUER]["jwks"]["keys"]]


def _fetched_once(cache: JwksCache, held: Held, clock: ManualClock) -> None:
    cache.providers(_stored())
    held.land()


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("", None),
        ("no-cache", None),
        ("max-age=600", 600.0),
        ("public, max-age=120, must-revalidate", 120.0),
        ('max-age="900"', 900.0),
        ("s-maxage=50", None),
    ],
)
def test_max_age_of_cache_control(header: str | None, seconds: float | None) -> None:
    assert max_age(header) == seconds


def test_keys_held_serve_at_once_while_the_first_fetch_runs() -> None:
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider)
    assert _kids(cache.providers(_stored())) == ["old"]  # the store's keys: nothing waits for the provider
    assert provider.fetched == [] and len(held.work) == 1  # never fetched by this server: one fetch started
    assert _kids(cache.providers(_stored())) == ["old"] and len(held.work) == 1  # not a second one
    held.land()
    assert provider.fetched == [URL]
    assert _kids(cache.providers(_stored())) == ["new"] and held.work == [] and cache.fetches == 1


@pytest.mark.parametrize(
    ("answered", "kept"),
    [
        (None, limits.JWKS_CACHE_DEFAULT_SECONDS),
        (600.0, 600),
        (10.0, limits.JWKS_CACHE_MIN_SECONDS),
        (10 * 86400.0, limits.JWKS_CACHE_MAX_SECONDS),
    ],
)
def test_keys_expire_after_the_answers_max_age_within_bounds(answered: float | None, kept: float) -> None:
    clock, provider = ManualClock(), Provider()
    provider.max_age = answered
    cache, held = _cache(clock, provider)
    _fetched_once(cache, held, clock)
    clock.advance(kept - 1)
    cache.providers(_stored())
    assert held.work == []  # still fresh
    clock.advance(1)
    cache.providers(_stored())
    assert len(held.work) == 1  # expired: fetched again in the background
    held.land()
    assert provider.fetched == [URL, URL]


def test_an_unknown_key_starts_one_fetch_per_interval() -> None:
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider)
    _fetched_once(cache, held, clock)
    provider.jwks = {"keys": [{"kty": "oct", "kid": "rotated"}]}
    clock.advance(limits.JWKS_REFETCH_MIN_SECONDS - 1)
    for _ in range(5):  # a stream of tokens naming keys the provider's lack, right after a fetch
        cache.key_missing(ISSUER)
    assert held.work == []
    clock.advance(1)
    for _ in range(5):
        cache.key_missing(ISSUER)
    assert len(held.work) == 1  # one fetch for the whole stream
    held.land()
    assert _kids(cache.providers(_stored())) == ["rotated"]
    assert provider.fetched == [URL, URL]
    cache.key_missing(ISSUER)
    assert held.work == []  # the fetch that just ran counts


def test_an_unknown_key_of_a_file_provider_fetches_nothing() -> None:
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider)
    cache.providers(_stored(url=""))
    cache.key_missing(ISSUER)
    cache.key_missing("https://unknown.example.com")
    assert held.work == [] and provider.fetched == []


def test_a_failed_fetch_keeps_the_keys_and_is_tried_again_later(caplog: pytest.LogCaptureFixture) -> None:
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider)
    _fetched_once(cache, held, clock)
    provider.down = True
    clock.advance(limits.JWKS_CACHE_DEFAULT_SECONDS)
    cache.providers(_stored())
    held.land()
    assert _kids(cache.providers(_stored())) == ["new"]  # the keys fetched before, not the store's older ones
    assert cache.failures == 1 and "connection refused" in caplog.text
    assert held.work == []  # not again at once
    clock.advance(limits.JWKS_REFETCH_MIN_SECONDS)
    provider.down = False
    provider.jwks = {"keys": [{"kty": "oct", "kid": "back"}]}
    cache.providers(_stored())
    held.land()
    assert _kids(cache.providers(_stored())) == ["back"]


def _store_with_provider(folder: Path, url: str = URL) -> Path:
    path = folder / "credentials.json"
    users.change(path, lambda d: roles.add_provider(d, ISSUER, "111122223333", ["app"], OLD, url))
    return path


def _read_stored(path: Path) -> dict[str, Any]:
    stored: dict[str, Any] = users.read(path)["oidc_providers"]
    return stored


def test_fetched_keys_are_written_to_the_credentials_store(tmp_path: Path) -> None:
    path = _store_with_provider(tmp_path)
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider, path)
    cache.providers(_read_stored(path))
    held.land()
    assert _read_stored(path)[ISSUER]["jwks"] == NEW  # where `dynastore oidc add` put the keys: a restart has them
    assert _kids(cache.providers(_read_stored(path))) == ["new"]


def test_keys_fetched_for_a_url_the_provider_no_longer_has_are_not_written(tmp_path: Path) -> None:
    path = _store_with_provider(tmp_path)
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider, path)
    cache.providers(_read_stored(path))
    _store_with_provider(tmp_path, url="https://login.example.com/other.json")  # added again meanwhile
    held.land()
    assert _read_stored(path)[ISSUER]["jwks"] == OLD


def test_keys_are_served_from_memory_when_the_store_cannot_be_written(tmp_path: Path) -> None:
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider, tmp_path / "not-a-dir" / "x" / "credentials.json")
    (tmp_path / "not-a-dir").write_text("")  # its parent is a file: the write fails
    cache.providers(_stored())
    held.land()
    assert _kids(cache.providers(_stored())) == ["new"] and cache.fetches == 1


def test_a_removed_provider_is_forgotten() -> None:
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider)
    _fetched_once(cache, held, clock)
    assert cache.providers({}) == {}
    assert _kids(cache.providers(_stored())) == ["old"] and len(held.work) == 1  # added again: fetched again


def test_a_fetch_run_at_once_by_the_caller() -> None:
    clock, provider = ManualClock(), Provider()
    cache = JwksCache(clock, None, provider.fetch, lambda work: work())
    assert _kids(cache.providers(_stored())) == ["old"]  # fetched while answering: this answer has the keys held
    assert _kids(cache.providers(_stored())) == ["new"] and provider.fetched == [URL]


def test_a_store_that_is_not_one_keeps_the_keys_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text("[]")  # not a credentials store: the write is refused
    clock, provider = ManualClock(), Provider()
    cache, held = _cache(clock, provider, path)
    cache.providers(_stored())
    held.land()
    assert _kids(cache.providers(_stored())) == ["new"] and path.read_text() == "[]"
