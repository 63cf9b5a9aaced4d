"""The STS endpoint's query protocol: form parsing, validation, STS's XML answers and errors, and the sessions it
issues (their callers: the assumed-role principal, the role's policies, the session's own)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from dynastore import limits, messages
from dynastore.security import roles, users
from dynastore.security.authenticator import Authenticator
from dynastore.security.credentials import CredentialStore
from dynastore.security.identity_policies import ROLE, IdentityPolicies
from dynastore.security.jwks_cache import Fetched, JwksCache
from dynastore.security.sts import StsService
from dynastore.util.clock import ManualClock
from tests.unit.security.signing import NOW, REGION, sign

ACCOUNT = "111111111111"
ISSUER = "https://id.example.com"
NS = "{https://sts.amazonaws.com/doc/2011-06-15/}"
KEY = RSAKey.generate_key(2048, parameters={"kid": "k"})
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/App"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Federated": f"arn:aws:iam::{ACCOUNT}:oidc-provider/id.example.com"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {"id.example.com:aud": "app"}},
        },
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/ops"}, "Action": "sts:AssumeRole"},
    ],
}


class Setup:
    def __init__(self, folder: Path) -> None:
        self.path = folder / "credentials.json"
        self.key = users.change(self.path, lambda d: users.add_user(d, "ops", ACCOUNT, False, []))
        jwks = {"keys": [KEY.as_dict(private=False)]}
        users.change(self.path, lambda d: roles.add_provider(d, ISSUER, ACCOUNT, ["app"], jwks, ""))
        users.change(self.path, lambda d: roles.add_role(d, "App", ACCOUNT, json.dumps(TRUST), 3600))
        self.clock = ManualClock(NOW)
        self.store = CredentialStore(self.path, REGION)
        self.policies = IdentityPolicies(None)
        self.policies.put(ACCOUNT, ROLE, "App", "main", json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}]}))  # fmt: skip
        self.authenticator = Authenticator(self.store, REGION, self.clock)
        self.sts = StsService(self.authenticator, self.store, self.policies, self.clock)

    def call(self, signed: bool = False, **params: str) -> tuple[int, ET.Element]:
        body = urlencode({"Version": "2011-06-15", **params}).encode()
        headers: dict[str, str] = {"content-type": "application/x-www-form-urlencoded"}
        if signed:
            request = sign(body, "", key_id=self.key["AccessKeyId"], secret=self.key["SecretAccessKey"],
                           service="sts")  # fmt: skip
            headers = request.headers
        status, answer = self.sts.handle(headers, body, "/")
        return status, ET.fromstring(answer)

    def token(self, **claims: Any) -> str:
        payload = {"iss": ISSUER, "sub": "user-1", "aud": "app", "exp": int(NOW) + 300, **claims}
        return jwt.encode({"alg": "RS256", "kid": "k"}, payload, KEY)


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def error(element: ET.Element) -> tuple[str, str]:
    assert element.tag == f"{NS}ErrorResponse"
    return element.findtext(f"{NS}Error/{NS}Code") or "", element.findtext(f"{NS}Error/{NS}Message") or ""


def test_a_web_identity_becomes_a_role_session(setup: Setup) -> None:
    status, answer = setup.call(Action="AssumeRoleWithWebIdentity", RoleArn=ROLE_ARN, RoleSessionName="s1",
                                WebIdentityToken=setup.token())  # fmt: skip
    assert status == 200
    result = answer.find(f"{NS}AssumeRoleWithWebIdentityResult")
    assert result is not None
    assert result.findtext(f"{NS}SubjectFromWebIdentityToken") == "user-1"
    assert result.findtext(f"{NS}Provider") == "id.example.com"
    assert result.findtext(f"{NS}AssumedRoleUser/{NS}Arn") == f"arn:aws:sts::{ACCOUNT}:assumed-role/App/s1"
    assert result.findtext(f"{NS}Credentials/{NS}Expiration") == "2026-11-24T02:25:00Z"  # NOW + 3600
    key_id = result.findtext(f"{NS}Credentials/{NS}AccessKeyId") or ""
    identity = setup.store.find(key_id)
    assert identity is not None
    caller = identity.caller
    assert (caller.role_name, caller.arn, caller.temporary) == ("App", f"arn:aws:sts::{ACCOUNT}:assumed-role/App/s1",
                                                                True)  # fmt: skip
    assert caller.claims == {"id.example.com:sub": "user-1", "id.example.com:aud": "app"}
    assert identity.expiration == NOW + 3600
    assert [p.text for p in setup.policies.for_caller(caller)] == [
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:GetItem","Resource":"*"}]}'
    ]


def test_a_user_named_by_the_trust_policy_assumes_the_role_signed(setup: Setup) -> None:
    status, answer = setup.call(signed=True, Action="AssumeRole", RoleArn=ROLE_ARN, RoleSessionName="ops")
    assert status == 200
    assert answer.findtext(f"{NS}AssumeRoleResult/{NS}AssumedRoleUser/{NS}Arn") == (
        f"arn:aws:sts::{ACCOUNT}:assumed-role/App/ops"
    )
    status, answer = setup.call(signed=True, Action="GetCallerIdentity")
    assert answer.findtext(f"{NS}GetCallerIdentityResult/{NS}Arn") == f"arn:aws:iam::{ACCOUNT}:user/ops"
    status, answer = setup.call(Action="AssumeRole", RoleArn=ROLE_ARN, RoleSessionName="ops")
    assert (status, error(answer)) == (403, ("MissingAuthenticationToken", "Request is missing Authentication Token"))


def test_request_faults(setup: Setup) -> None:
    assert error(setup.call(Action="Nope")[1]) == ("InvalidAction", "Could not find operation Nope for version "
                                                   "2011-06-15")  # fmt: skip
    status, answer = setup.sts.handle({}, b"Version=2011-06-15", "/")
    assert (status, error(ET.fromstring(answer))) == (400, ("MissingAction", "Missing Action"))
    assert error(setup.call(Action="AssumeRoleWithWebIdentity")[1]) == (
        "ValidationError",
        "3 validation errors detected: Value null at 'roleArn' failed to satisfy constraint: Member must not be "
        "null; Value null at 'roleSessionName' failed to satisfy constraint: Member must not be null; Value null "
        "at 'webIdentityToken' failed to satisfy constraint: Member must not be null",
    )
    assert error(setup.call(Action="AssumeRoleWithWebIdentity", RoleArn=ROLE_ARN, RoleSessionName="s",
                            WebIdentityToken=setup.token(), DurationSeconds="60")[1]) == (
        "ValidationError",
        "2 validation errors detected: Value 's' at 'roleSessionName' failed to satisfy constraint: Member must "
        "have length greater than or equal to 2; Value '60' at 'durationSeconds' failed to satisfy constraint: "
        "Member must have value greater than or equal to 900",
    )  # fmt: skip
    assert error(setup.call(Action="AssumeRoleWithWebIdentity", RoleArn="arn:aws:s3:::not-a-role-arn",
                            RoleSessionName="s1", WebIdentityToken=setup.token())[1]) == (
        "ValidationError", "arn:aws:s3:::not-a-role-arn is invalid",
    )  # fmt: skip


def test_session_policies(setup: Setup) -> None:
    base: dict[str, Any] = {"Action": "AssumeRoleWithWebIdentity", "RoleArn": ROLE_ARN, "RoleSessionName": "s1",
            "WebIdentityToken": setup.token()}  # fmt: skip
    assert error(setup.call(**base, Policy="{not json")[1]) == (
        "MalformedPolicyDocument", "Syntax errors in policy. This policy contains invalid Json",
    )  # fmt: skip
    unknown: Any = "arn:aws:iam::111111111111:policy/Mine"
    assert error(setup.call(**base, **dict.fromkeys(["PolicyArns.member.1.arn"], unknown))[1]) == (
        "MalformedPolicyDocument", f"Policy {unknown} does not exist or is not attachable.",
    )  # fmt: skip
    statement = {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "arn:aws:dynamodb:*:*:table/" + "t" * 40}
    many = [dict(statement, Sid=f"s{n}") for n in range(14)]
    large = json.dumps({"Version": "2012-10-17", "Statement": many}, separators=(",", ":"))
    assert 1900 < len(large) <= 2048  # the most the Policy member takes; with the managed ARNs, over 100% packed
    managed: dict[str, Any] = {
        f"PolicyArns.member.{n}.arn": "arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess" for n in range(1, 4)
    }
    assert error(setup.call(**base, Policy=large, **managed)[1])[0] == "PackedPolicyTooLarge"
    status, answer = setup.call(**base, Policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))
    assert status == 200
    packed = answer.findtext(f"{NS}AssumeRoleWithWebIdentityResult/{NS}PackedPolicySize")
    assert packed is not None and 0 < int(packed) <= 100


def test_a_token_naming_a_key_its_url_provider_lacks_has_the_keys_fetched_again(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    old = {"keys": [KEY.as_dict(private=False)]}
    users.change(path, lambda d: roles.add_provider(d, ISSUER, ACCOUNT, ["app"], old, "https://id.example.com/keys"))
    users.change(path, lambda d: roles.add_role(d, "App", ACCOUNT, json.dumps(TRUST), 3600))
    rotated = RSAKey.generate_key(2048, parameters={"kid": "k2"})
    published = [old]
    queued: list[Callable[[], None]] = []
    clock = ManualClock(NOW)
    cache = JwksCache(clock, path, lambda url: Fetched(published[-1], None), queued.append)
    store = CredentialStore(path, REGION)
    sts = StsService(Authenticator(store, REGION, clock), store, IdentityPolicies(None), clock, cache)

    def assume(token: str) -> tuple[int, bytes]:
        body = urlencode({"Version": "2011-06-15", "Action": "AssumeRoleWithWebIdentity", "RoleArn": ROLE_ARN,
                          "RoleSessionName": "s1", "WebIdentityToken": token}).encode()  # fmt: skip
        return sts.handle({"content-type": "application/x-www-form-urlencoded"}, body, "/")

    def land() -> None:
        while queued:
            queued.pop(0)()

    payload = {"iss": ISSUER, "sub": "user-1", "aud": "app", "exp": int(NOW) + 300}
    assert assume(jwt.encode({"alg": "RS256", "kid": "k"}, payload, KEY))[0] == 200
    land()  # the server's first fetch of these keys
    published.append({"keys": [rotated.as_dict(private=False)]})
    token = jwt.encode({"alg": "RS256", "kid": "k2"}, payload, rotated)
    forged = jwt.encode({"alg": "RS256", "kid": "k"}, payload, rotated)  # a key it has, a wrong signature
    clock.advance(limits.JWKS_REFETCH_MIN_SECONDS)
    status, answer = assume(forged)
    assert (status, error(ET.fromstring(answer))) == (400, ("InvalidIdentityToken", messages.STS_TOKEN_NOT_VALIDATED))
    assert queued == []  # the key it names is known: nothing to fetch
    status, answer = assume(token)
    assert (status, error(ET.fromstring(answer))) == (400, ("InvalidIdentityToken", messages.STS_TOKEN_NOT_VALIDATED))
    assert len(queued) == 1
    land()
    assert assume(token)[0] == 200
