"""A provider added with ``--jwks-url`` rotates its keys: the server fetches them itself (no ``dynastore oidc
refresh``). The test serves the provider's JWKS over HTTP on 127.0.0.1; a token signed with a new key is refused
at first (InvalidIdentityToken, as for any unknown key) and accepted once the server's background fetch landed,
as AWS STS behaves when a provider rotates its keys.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from dynastore import limits, messages
from tests.e2e.conftest import sign_for
from tests.e2e.test_auth import admin
from tests.e2e.test_web_identity import OWNER, World, _refused

ISSUER = "https://rotating.example.com"
AUDIENCE = "rotating-app"
ROLE = f"arn:aws:iam::{OWNER}:role/RotatingUsers"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Federated": f"arn:aws:iam::{OWNER}:oidc-provider/rotating.example.com"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {"rotating.example.com:aud": AUDIENCE}},
        }
    ],
}
REFUSED = (400, "InvalidIdentityToken", messages.STS_TOKEN_NOT_VALIDATED)


class JwksEndpoint:
    """The provider's JWKS URL: what it publishes now, and how many times it was fetched."""

    def __init__(self) -> None:
        self.keys: list[RSAKey] = []
        self.served = 0
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                with endpoint._lock:
                    body = json.dumps({"keys": [key.as_dict(private=False) for key in endpoint.keys]}).encode()
                    endpoint.served += 1  # counted once its answer is fixed: what this fetch brings is known
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "public, max-age=600")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/jwks.json"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    def publish(self, key: RSAKey) -> None:
        with self._lock:
            self.keys = [key]

    def fetches(self) -> int:
        with self._lock:
            return self.served

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def endpoint() -> Iterator[JwksEndpoint]:
    made = JwksEndpoint()
    try:
        yield made
    finally:
        made.stop()


def _token(key: RSAKey, now: float) -> str:
    payload = {"iss": ISSUER, "sub": "carol", "aud": AUDIENCE, "iat": int(now), "exp": int(now) + 3600}
    return jwt.encode({"alg": "RS256", "kid": key.kid}, payload, key)


def _wait_for(condition: Any, what: str) -> None:
    """Poll ``condition`` a bounded number of times (the server's fetch runs in its own thread)."""
    for _ in range(200):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _fetch_metrics(world: World) -> list[str]:
    """The server's dynastore_oidc_key_fetches_total samples (GET /metrics, signed by its admin)."""
    server = world.server
    headers = sign_for(world.builder, "GET", "/metrics", {"Host": f"{server.host}:{server.port}"}, b"")
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        connection.request("GET", "/metrics", headers=headers)
        page = connection.getresponse().read().decode()
    finally:
        connection.close()
    return [line for line in page.splitlines() if line.startswith("dynastore_oidc_key_fetches_total")]


def _accepted(world: World, token: str) -> bool:
    try:
        world.assume(token, role=ROLE)
    except Exception:
        return False
    return True


def test_the_server_fetches_a_rotated_key_itself(tmp_path: Path, endpoint: JwksEndpoint) -> None:
    first = RSAKey.generate_key(2048, parameters={"kid": "key-1"})
    second = RSAKey.generate_key(2048, parameters={"kid": "key-2"})
    endpoint.publish(first)
    world = World(tmp_path)
    try:
        world._cli("oidc", "add", ISSUER, "--audience", AUDIENCE, "--jwks-url", endpoint.url, "--account", OWNER)
        world._role("RotatingUsers", TRUST)
        assert endpoint.fetches() == 1  # the command's fetch
        now = world.now()
        answer = world.assume(_token(first, now), role=ROLE)
        assert answer["SubjectFromWebIdentityToken"] == "carol"
        # The server had never fetched these keys: it does so now, in the background.
        _wait_for(lambda: endpoint.fetches() == 2, "the server's first fetch")

        endpoint.publish(second)  # the provider rotates its keys and signs with the new one
        rotated = _token(second, now)
        for _ in range(3):  # keys fetched moments ago: the unknown key is refused, and fetches nothing more
            assert _refused(lambda: world.assume(rotated, role=ROLE)) == REFUSED
        assert endpoint.fetches() == 2

        clock = {"advance": limits.JWKS_REFETCH_MIN_SECONDS}
        assert admin(world.server, world.builder, "POST", "/dynastore/clock", clock)[0] == 200
        # Refused now (nothing waits for the provider), but its keys are fetched again...
        assert _refused(lambda: world.assume(rotated, role=ROLE)) == REFUSED
        # ... and once they landed the same token is accepted.
        _wait_for(lambda: _accepted(world, rotated), "the rotated key to be accepted")
        assert endpoint.fetches() == 3  # one fetch for every refused token of the stream
        stored = json.loads(world.store.read_text())["oidc_providers"][ISSUER]
        assert [key["kid"] for key in stored["jwks"]["keys"]] == ["key-2"]  # a restart starts from these
        counted = [
            'dynastore_oidc_key_fetches_total{result="failed"} 0',
            'dynastore_oidc_key_fetches_total{result="ok"} 2',
        ]  # the fetch thread counts just after it wrote the keys
        _wait_for(lambda: _fetch_metrics(world) == counted, "the fetches counted on GET /metrics")
    finally:
        world.server.stop()
