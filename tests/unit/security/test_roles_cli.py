"""``dynastore roles`` and ``dynastore oidc`` against a credentials store file, and ``policies put --role``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from joserfc.jwk import RSAKey

from dynastore.cli import main
from dynastore.security.identity_policies import IdentityPolicies

ACCOUNT = "111122223333"
TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Federated": "accounts.google.com"},
                                                 "Action": "sts:AssumeRoleWithWebIdentity"}]}  # fmt: skip
JWKS = {"keys": [RSAKey.generate_key(2048, parameters={"kid": "k"}).as_dict(private=False)]}


def run(*argv: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    return int(info.value.code or 0)


def output(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def jwks_url() -> Iterator[str]:
    """A provider's key endpoint on 127.0.0.1."""

    class Keys(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the handler's name)
            body = json.dumps(JWKS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            pass

    server = HTTPServer(("127.0.0.1", 0), Keys)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/jwks.json"
    server.shutdown()
    server.server_close()


def test_roles_add_list_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "credentials.json")
    trust = tmp_path / "trust.json"
    trust.write_text(json.dumps(TRUST))
    assert run("roles", "add", "App", "--trust-policy", str(trust), "--account", ACCOUNT, "--users-file", store) == 0
    shown = output(capsys)
    assert shown["Arn"] == f"arn:aws:iam::{ACCOUNT}:role/App" and shown["MaxSessionDuration"] == 3600
    assert run("roles", "list", "--users-file", store) == 0
    assert [(r["RoleName"], r["TrustPolicy"], r["Sessions"]) for r in output(capsys)] == [("App", TRUST, 0)]
    assert run("roles", "add", "App", "--trust-policy", str(trust), "--users-file", store) == 1
    assert "role App exists already" in capsys.readouterr().err
    trust.write_text('{"Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]}')
    assert run("roles", "add", "Bad", "--trust-policy", str(trust), "--users-file", store) == 1
    assert "Invalid policy document: Missing required field Principal" in capsys.readouterr().err
    assert run("roles", "remove", "App", "--users-file", store) == 0
    assert run("roles", "remove", "App", "--users-file", store) == 1
    assert run("roles", "list", "--data-dir", str(tmp_path / "none")) == 1


def test_a_roles_policies(tmp_path: Path) -> None:
    document = tmp_path / "policy.json"
    document.write_text(json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}]}))  # fmt: skip
    policies = tmp_path / "policies.json"
    assert run("policies", "put", "--policies-file", str(policies), "--account-id", ACCOUNT, "--role", "App",
               "--name", "Main", "--file", str(document)) == 0  # fmt: skip
    assert len(IdentityPolicies(policies).for_role(ACCOUNT, "App")) == 1
    assert IdentityPolicies(policies).for_role(ACCOUNT, "Other") == ()


def test_providers_from_a_file_and_from_a_url(
    tmp_path: Path, jwks_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "credentials.json")
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(JWKS))
    issuer = "https://login.example.com"
    assert run("oidc", "add", issuer, "--audience", "app", "--jwks", str(jwks), "--account", ACCOUNT,
               "--users-file", store) == 0  # fmt: skip
    assert output(capsys) == {"Issuer": issuer, "Arn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/login.example.com",
                              "Audiences": ["app"], "Keys": 1}  # fmt: skip
    other = "https://keys.example.com"
    assert run("oidc", "add", other, "--audience", "a", "--jwks-url", jwks_url, "--users-file", store) == 0
    capsys.readouterr()
    assert run("oidc", "refresh", other, "--users-file", store) == 0
    assert run("oidc", "refresh", issuer, "--users-file", store) == 1  # added from a file: nothing to fetch
    capsys.readouterr()
    assert run("oidc", "list", "--users-file", store) == 0
    assert [(p["Issuer"], p["JwksUrl"]) for p in output(capsys)] == [(other, jwks_url), (issuer, "")]
    jwks.write_text('{"keys": []}')
    assert run("oidc", "add", issuer, "--audience", "app", "--jwks", str(jwks), "--users-file", store) == 1
    assert run("oidc", "remove", issuer, "--users-file", store) == 0
    assert run("oidc", "remove", issuer, "--users-file", store) == 1
