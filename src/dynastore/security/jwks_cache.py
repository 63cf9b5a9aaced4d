"""The keys of OpenID Connect providers added with ``--jwks-url``, fetched and cached by the server itself, so a
provider that rotates its keys keeps its users signing in (docs/security.md "Web identity federation").

A request never waits on a provider: AssumeRoleWithWebIdentity verifies against the keys at hand, and a fetch runs
on a thread of its own (bounded by ``JWKS_FETCH_TIMEOUT_SECONDS``) when the keys expire (the JWKS answer's
``Cache-Control: max-age``, within bounds; an hour without one) or when a token names a ``kid`` the keys lack (at
most one fetch per provider per ``JWKS_REFETCH_MIN_SECONDS``, so a stream of bad tokens cannot make the server
hammer the provider). Such a token is refused now; once the fetch lands the same token is accepted, as AWS STS
behaves when a provider rotates its keys (the client retries). What a fetch brings is written to the credentials
store where ``dynastore oidc add`` puts it, so a restart starts from the last keys; a failed fetch keeps the keys
held, is logged and counted, and is tried again later.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynastore import limits
from dynastore.security import users
from dynastore.util.clock import Clock

__all__ = ["Fetched", "JwksCache", "fetch_jwks", "max_age"]

log = logging.getLogger(__name__)

_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*\"?(\d+)\"?", re.IGNORECASE)


@dataclass(frozen=True)
class Fetched:
    """A provider's JWKS and how long its answer said to keep it (None: it did not say)."""

    jwks: dict[str, Any]
    max_age: float | None


def max_age(cache_control: str | None) -> float | None:
    """The ``max-age`` of a Cache-Control header (None: absent or unreadable)."""
    if not cache_control:
        return None
    found = _MAX_AGE.search(cache_control)
    return float(found.group(1)) if found else None


def fetch_jwks(url: str, timeout: float = limits.JWKS_FETCH_TIMEOUT_SECONDS) -> Fetched:
    """GET a JWKS; raises users.UsersError (or OSError) when the URL does not answer one."""
    if not url.startswith(("https://", "http://")):
        raise users.UsersError(f"{url!r} is not an http(s) URL")
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 (http(s) only)
        loaded = json.loads(answer.read())
        cache_control = answer.headers.get("Cache-Control")
    keys = loaded.get("keys") if isinstance(loaded, dict) else None
    if not isinstance(keys, list) or not keys:
        raise users.UsersError(f"{url} did not answer a JWKS (a JSON object with a non-empty keys list)")
    return Fetched(loaded, max_age(cache_control))


@dataclass
class _State:
    """What the cache knows of one provider's keys."""

    url: str
    expires: float = 0.0  # on the server's clock; 0: never fetched by this server (due now)
    last_attempt: float | None = None
    fetching: bool = False
    jwks: dict[str, Any] | None = None  # the last keys fetched (None: the store's are the latest)


class JwksCache:
    """The fetched keys of URL providers over the credentials store's providers.

    ``fetch`` gets a JWKS (``fetch_jwks``; tests pass a fake), ``run`` runs a fetch away from the caller (a thread
    by default; tests may run it at once or hold it), ``store`` is the credentials store file the keys are written
    to (None: kept in memory only).
    """

    def __init__(
        self,
        clock: Clock,
        store: Path | None,
        fetch: Callable[[str], Fetched] = fetch_jwks,
        run: Callable[[Callable[[], None]], object] | None = None,
    ) -> None:
        self._clock = clock
        self._store = store
        self._fetch = fetch
        self._run = run if run is not None else self._in_thread
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.RLock()  # reentrant: a ``run`` that works at once fetches from under it
        self._states: dict[str, _State] = {}
        self.fetches = 0  # fetches that brought keys
        self.failures = 0  # fetches that failed (the keys held were kept)

    # ---- what requests call (never blocking) -----------------------------------------------------------------
    def providers(self, stored: dict[str, Any]) -> dict[str, Any]:
        """The providers to verify tokens against: the store's, with the keys fetched since for URL providers.
        Providers whose keys expired get a fetch started."""
        now = self._clock.now()
        current: dict[str, Any] = {}
        with self._lock:
            for issuer in [i for i in self._states if i not in stored]:
                del self._states[issuer]  # removed from the store
            for issuer, provider in stored.items():
                url = str(provider.get("jwks_url") or "")
                state = self._state(issuer, url) if url else None
                if state is not None and state.jwks is not None:
                    provider = {**provider, "jwks": state.jwks}
                current[issuer] = provider
                if state is not None and now >= state.expires:
                    self._start(issuer, state, now)
        return current

    def key_missing(self, issuer: str) -> None:
        """A token of ``issuer`` names a key its keys lack: fetch them again, unless a fetch ran lately."""
        now = self._clock.now()
        with self._lock:
            state = self._states.get(issuer)
            if state is None:
                return
            last = state.last_attempt
            if last is None or now - last >= limits.JWKS_REFETCH_MIN_SECONDS:
                self._start(issuer, state, now)

    def counts(self) -> dict[str, int]:
        """Fetches so far, by result (GET /metrics)."""
        with self._lock:
            return {"ok": self.fetches, "failed": self.failures}

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    # ---- fetching --------------------------------------------------------------------------------------------
    def _state(self, issuer: str, url: str) -> _State:
        state = self._states.get(issuer)
        if state is None or state.url != url:  # new, or added again with another URL
            state = self._states[issuer] = _State(url)
        return state

    def _start(self, issuer: str, state: _State, now: float) -> None:
        """Start one fetch of ``issuer``'s keys (under the lock); none while one runs."""
        if state.fetching:
            return
        state.fetching = True
        state.last_attempt = now
        self._run(lambda: self._refresh(issuer, state))

    def _refresh(self, issuer: str, state: _State) -> None:
        try:
            fetched = self._fetch(state.url)
        except Exception as e:  # any failure of the provider: keep the keys held, try again later
            self._failed(issuer, state, e)
            return
        kept = self._save(issuer, state.url, fetched.jwks)
        with self._lock:
            # Written: the store holds them (and a later `dynastore oidc refresh` wins); else serve them from here.
            state.jwks = None if kept else fetched.jwks
            state.expires = self._clock.now() + _lifetime(fetched.max_age)
            state.fetching = False
            self.fetches += 1
        log.info("fetched the keys of OpenID Connect provider %s (%s)%s", issuer, state.url,
                 "" if kept else " (kept in memory only)")  # fmt: skip

    def _failed(self, issuer: str, state: _State, error: Exception) -> None:
        with self._lock:
            # Try again after the refetch interval, not at once: a provider that is down is not hammered.
            state.expires = self._clock.now() + limits.JWKS_REFETCH_MIN_SECONDS
            state.fetching = False
            self.failures += 1
        log.warning("cannot fetch the keys of OpenID Connect provider %s from %s (keeping the keys held): %s",
                    issuer, state.url, error)  # fmt: skip

    def _save(self, issuer: str, url: str, jwks: dict[str, Any]) -> bool:
        """Write the fetched keys to the store (if the provider is still the one fetched for); True if written."""
        if self._store is None:
            return False

        def edit(document: dict[str, Any]) -> None:
            provider = document.get("oidc_providers", {}).get(issuer)
            if provider is not None and provider.get("jwks_url") == url:
                provider["jwks"] = jwks

        try:
            users.change(self._store, edit, self._clock.now())
        except Exception as e:  # the thread's last word: whatever the fault, the keys are served from memory
            log.warning("cannot write the keys of OpenID Connect provider %s to %s: %s", issuer, self._store, e)
            return False
        return True

    def _in_thread(self, work: Callable[[], None]) -> object:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="jwks-fetch")
        return self._executor.submit(work)


def _lifetime(seconds: float | None) -> float:
    """How long fetched keys are kept: the answer's max-age within the bounds, else the default."""
    if seconds is None:
        return limits.JWKS_CACHE_DEFAULT_SECONDS
    return min(max(seconds, limits.JWKS_CACHE_MIN_SECONDS), limits.JWKS_CACHE_MAX_SECONDS)
