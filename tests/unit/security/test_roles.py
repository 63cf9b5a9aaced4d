"""Roles and OpenID Connect providers in the credentials store, the web identity's policy variables, trust
policies and the session policies that narrow a role session."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynastore.security import roles
from dynastore.security.caller import Caller
from dynastore.security.credentials import session_caller
from dynastore.security.policy_documents import IDENTITY, TRUST, PolicyDocumentError, parse_policy
from dynastore.security.policy_evaluation import ALLOW, DENY, NONE, RequestContext, decide, trust_decision
from dynastore.security.users import UsersError

ACCOUNT = "111111111111"
PROVIDER = f"arn:aws:iam::{ACCOUNT}:oidc-provider/id.example.com/tenant"
TABLE = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/"


def _trust(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def test_a_providers_name_in_keys_is_its_issuer_without_the_scheme() -> None:
    assert roles.provider_key("https://id.example.com/tenant/") == "id.example.com/tenant"
    assert roles.provider_arn(ACCOUNT, "https://accounts.google.com") == (
        f"arn:aws:iam::{ACCOUNT}:oidc-provider/accounts.google.com"
    )


@pytest.mark.parametrize(
    ("issuer", "expected"),
    [
        ("https://id.example.com", {"id.example.com:sub": "u", "id.example.com:aud": "a"}),
        ("https://accounts.google.com", {"accounts.google.com:sub": "u", "accounts.google.com:aud": "a",
                                         "accounts.google.com:oaud": "a"}),
        ("https://www.amazon.com", {"www.amazon.com:sub": "u", "www.amazon.com:aud": "a",
                                    "www.amazon.com:user_id": "u", "www.amazon.com:app_id": "a"}),
        ("https://graph.facebook.com", {"graph.facebook.com:sub": "u", "graph.facebook.com:aud": "a",
                                        "graph.facebook.com:id": "u", "graph.facebook.com:app_id": "a"}),
        ("https://cognito-identity.amazonaws.com", {"cognito-identity.amazonaws.com:sub": "u",
                                                    "cognito-identity.amazonaws.com:aud": "a"}),
    ],
)  # fmt: skip
def test_policy_variables_of_each_provider(issuer: str, expected: dict[str, str]) -> None:
    assert roles.claim_keys(issuer, "u", "a") == expected


def test_roles_and_providers_are_checked_when_added() -> None:
    document: dict[str, Any] = {}
    trust = _trust({"Effect": "Allow", "Principal": {"Federated": PROVIDER}, "Action": "sts:AssumeRoleWithWebIdentity"})
    shown = roles.add_role(document, "App", ACCOUNT, trust, 3600)
    assert shown["Arn"] == f"arn:aws:iam::{ACCOUNT}:role/App" and shown["RoleId"].startswith("AROA")
    with pytest.raises(UsersError, match="exists already"):
        roles.add_role(document, "App", ACCOUNT, trust, 3600)
    with pytest.raises(UsersError, match="not a role name"):
        roles.add_role(document, "no spaces", ACCOUNT, trust, 3600)
    with pytest.raises(UsersError, match="Invalid policy document: This policy contains invalid Json"):
        roles.add_role(document, "Other", ACCOUNT, "{", 3600)
    with pytest.raises(UsersError, match="--max-session-duration"):
        roles.add_role(document, "Other", ACCOUNT, trust, 50_000)
    with pytest.raises(UsersError, match="https://"):
        roles.add_provider(document, "id.example.com", ACCOUNT, ["a"], {"keys": [{}]}, "")
    with pytest.raises(UsersError, match="no keys"):
        roles.add_provider(document, "https://id.example.com", ACCOUNT, ["a"], {"keys": []}, "")
    document["temporary"] = [{"role": "App", "id": "ASIA1"}, {"user": "u", "id": "ASIA2"}]
    roles.remove_role(document, "App")
    assert document["temporary"] == [{"user": "u", "id": "ASIA2"}]


def test_a_trust_policy_names_providers_and_conditions_on_their_claims() -> None:
    policy = parse_policy(_trust(
        {"Effect": "Allow", "Principal": {"Federated": [PROVIDER, "accounts.google.com"]},
         "Action": "sts:AssumeRoleWithWebIdentity",
         "Condition": {"StringEquals": {"id.example.com/tenant:aud": "app"}}},
        {"Effect": "Deny", "Principal": {"Federated": PROVIDER}, "Action": "sts:AssumeRoleWithWebIdentity",
         "Condition": {"StringEquals": {"id.example.com/tenant:sub": "banned"}}},
    ), TRUST)  # fmt: skip
    action = "sts:assumerolewithwebidentity"

    def decision(claims: dict[str, str], names: tuple[str, ...] = (PROVIDER,)) -> int:
        return trust_decision(policy, action, names, RequestContext(Caller(ACCOUNT, ""), dict(claims)))

    allowed = {"id.example.com/tenant:aud": "app", "id.example.com/tenant:sub": "u"}
    assert decision(allowed) == ALLOW
    assert decision({**allowed, "id.example.com/tenant:aud": "other"}) == NONE
    assert decision({**allowed, "id.example.com/tenant:sub": "banned"}) == DENY
    assert decision(allowed, (f"arn:aws:iam::{ACCOUNT}:oidc-provider/else.example.com",)) == NONE
    assert (
        trust_decision(policy, "sts:assumerole", (PROVIDER,), RequestContext(Caller(ACCOUNT, ""), dict(allowed)))
        == NONE
    )


def test_a_trust_policy_is_refused_where_a_policy_of_another_kind_goes() -> None:
    text = _trust({"Effect": "Allow", "Principal": {"Federated": PROVIDER}, "Action": "sts:AssumeRole"})
    with pytest.raises(PolicyDocumentError):
        parse_policy(text, IDENTITY)  # identity policies name no principal


def _session(policy: str | None = None) -> Caller:
    return session_caller(
        {"id": "ASIA1", "role": "App", "role_id": "AROAEXAMPLE", "account": ACCOUNT, "session": "s",
         "claims": {"id.example.com:sub": "u-1"}, "policy": policy},
        "us-east-1",
    )  # fmt: skip


def _policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def test_a_role_sessions_policy_variables_name_its_own_resources() -> None:
    role = parse_policy(_policy({"Effect": "Allow", "Action": "dynamodb:GetItem",
                                 "Resource": TABLE + "user-${id.example.com:sub}"}), IDENTITY)  # fmt: skip
    caller = _session()
    assert caller.user_id == "AROAEXAMPLE:s"
    assert caller.arn == f"arn:aws:sts::{ACCOUNT}:assumed-role/App/s"
    assert decide(caller, "dynamodb:GetItem", TABLE + "user-u-1", {}, [role], None, ACCOUNT) is None
    assert decide(caller, "dynamodb:GetItem", TABLE + "user-u-2", {}, [role], None, ACCOUNT) == (
        f"User: {caller.arn} is not authorized to perform: dynamodb:GetItem on resource: {TABLE}user-u-2 because "
        "no identity-based policy allows the dynamodb:GetItem action"
    )
    principal = parse_policy(_policy({"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*",
                                      "Condition": {"StringEquals": {"aws:PrincipalType": "AssumedRole"}}}),
                             IDENTITY)  # fmt: skip
    assert decide(caller, "dynamodb:GetItem", TABLE + "t", {}, [principal], None, ACCOUNT) is None


def test_session_policies_narrow_the_roles_permissions() -> None:
    role = parse_policy(_policy({"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}), IDENTITY)
    session = _session(_policy(
        {"Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:Query"], "Resource": "*"},
        {"Effect": "Deny", "Action": "dynamodb:Query", "Resource": TABLE + "secret"},
    ))  # fmt: skip
    assert decide(session, "dynamodb:GetItem", TABLE + "t", {}, [role], None, ACCOUNT) is None
    assert decide(session, "dynamodb:PutItem", TABLE + "t", {}, [role], None, ACCOUNT) == (
        f"User: {session.arn} is not authorized to perform: dynamodb:PutItem on resource: {TABLE}t because no "
        "session policy allows the dynamodb:PutItem action"
    )
    assert decide(session, "dynamodb:Query", TABLE + "secret", {}, [role], None, ACCOUNT) == (
        f"User: {session.arn} is not authorized to perform: dynamodb:Query on resource: {TABLE}secret with an "
        "explicit deny in a session policy"
    )
    # a session policy grants nothing the role does not
    assert "no identity-based policy" in str(decide(session, "dynamodb:GetItem", TABLE + "t", {}, [], None, ACCOUNT))


def test_a_role_session_in_another_region_is_the_same_principal() -> None:
    caller = _session(_policy({"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}))
    moved = caller.in_region("eu-west-1")
    assert (moved.region, moved.arn, moved.user_id, moved.role_name) == ("eu-west-1", caller.arn, caller.user_id, "App")
    assert moved.session_policies == caller.session_policies and moved.claims == caller.claims
