"""Roles and OpenID Connect providers, kept in the credentials store beside users (``dynastore roles``, ``dynastore
oidc``), and the role sessions STS issues from them.

In the store's document::

    "roles": {"AppUsers": {"account": "111122223333", "role_id": "AROA...", "trust_policy": {...},
                           "max_session_duration": 3600, "created": "..."}},
    "oidc_providers": {"https://login.example.com": {"account": "111122223333", "audiences": ["my-app"],
                                                     "jwks": {"keys": [...]}, "jwks_url": "..."}},
    "temporary": [..., {"id": "ASIA...", "role": "AppUsers", "role_id": "AROA...", "account": "...",
                        "session": "alice", "claims": {"login.example.com:sub": "..."}, "policy": "...", ...}]

A role's permissions are its identity policies (``dynastore policies put --role``, security/identity_policies.py).
Role names are unique in the store (whatever their account), as users' are.
"""

from __future__ import annotations

import re
import time
from typing import Any

import orjson

from dynastore import limits, messages
from dynastore.security.credentials import assumed_role_arn, role_arn
from dynastore.security.policy_documents import TRUST, PolicyDocumentError, parse_policy
from dynastore.security.users import UsersError, check_account, new_id, new_secret, new_session_token

__all__ = [
    "MANAGED_POLICIES",
    "WELL_KNOWN_PROVIDERS",
    "add_provider",
    "add_role",
    "claim_keys",
    "new_session",
    "provider_arn",
    "provider_key",
    "provider_listing",
    "remove_provider",
    "remove_role",
    "role_listing",
]

_ROLE_NAME = re.compile(r"[\w+=,.@-]{1,64}", re.ASCII)

# Providers IAM names by their host in trust policies (``"Federated": "accounts.google.com"``) and whose policy
# variables have names of their own beside ``sub`` and ``aud``.
WELL_KNOWN_PROVIDERS = frozenset(
    {"accounts.google.com", "graph.facebook.com", "www.amazon.com", "cognito-identity.amazonaws.com"}
)
# Those names: a provider's subject and audience under the keys IAM gives them.
_ALIASES: dict[str, tuple[str, str]] = {
    "www.amazon.com": ("user_id", "app_id"),
    "graph.facebook.com": ("id", "app_id"),
}


# The AWS managed policies a session may name in PolicyArns (dynastore keeps no managed policies of its own):
# their DynamoDB part.
MANAGED_POLICIES: dict[str, dict[str, Any]] = {
    "arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess": {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}],
    },
    "arn:aws:iam::aws:policy/AmazonDynamoDBReadOnlyAccess": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:Describe*", "dynamodb:Get*",
                    "dynamodb:List*", "dynamodb:PartiQLSelect", "dynamodb:Query", "dynamodb:Scan",
                ],
                "Resource": "*",
            }
        ],
    },
}  # fmt: skip


def provider_key(issuer: str) -> str:
    """IAM's name of a provider in condition keys and policy variables: its issuer URL without ``https://`` (and
    without a trailing ``/``), e.g. ``accounts.google.com`` or ``login.example.com/tenant``."""
    key = issuer[8:] if issuer.startswith("https://") else issuer
    return key.rstrip("/")


def provider_arn(account: str, issuer: str) -> str:
    return f"arn:aws:iam::{account}:oidc-provider/{provider_key(issuer)}"


def claim_keys(issuer: str, subject: str, audience: str) -> dict[str, str]:
    """The policy variables and trust-policy condition keys of a web identity (lower-case names)."""
    key = provider_key(issuer)
    out = {f"{key}:sub": subject, f"{key}:aud": audience}
    if key == "accounts.google.com":
        out[f"{key}:oaud"] = audience
    alias = _ALIASES.get(key)
    if alias is not None:
        out[f"{key}:{alias[0]}"] = subject
        out[f"{key}:{alias[1]}"] = audience
    return {name.lower(): value for name, value in out.items()}


# ---- roles -----------------------------------------------------------------------------------------------------
def add_role(document: dict[str, Any], name: str, account: str, trust_text: str, max_session: int) -> dict[str, Any]:
    if not _ROLE_NAME.fullmatch(name):
        raise UsersError(f"{name!r} is not a role name: 1 to 64 letters, digits and + = , . @ _ -")
    check_account(account)
    roles = document.setdefault("roles", {})
    if name in roles:
        raise UsersError(f"role {name} exists already")
    if not limits.ROLE_SESSION_SECONDS_DEFAULT <= max_session <= limits.ROLE_MAX_SESSION_SECONDS:
        raise UsersError(
            f"--max-session-duration must be {limits.ROLE_SESSION_SECONDS_DEFAULT} to "
            f"{limits.ROLE_MAX_SESSION_SECONDS} seconds"
        )
    try:
        trust = parse_policy(trust_text, TRUST)
    except PolicyDocumentError as exc:
        raise UsersError(messages.INVALID_POLICY_DOCUMENT.format(detail=exc.detail)) from None
    if sum(1 for ch in trust.text if not ch.isspace()) > limits.MAX_TRUST_POLICY_CHARS:
        raise UsersError(f"the trust policy is over IAM's {limits.MAX_TRUST_POLICY_CHARS} characters")
    roles[name] = {
        "account": account,
        "role_id": new_id("AROA", 21),
        "trust_policy": orjson.loads(trust.text),
        "max_session_duration": max_session,
        "created": _iso(time.time()),
    }
    return _role_shown(name, roles[name])


def remove_role(document: dict[str, Any], name: str) -> None:
    """The role and every session of it (their credentials stop working at once)."""
    roles = document.get("roles", {})
    if name not in roles:
        raise UsersError(f"no role {name}")
    del roles[name]
    document["temporary"] = [t for t in document.get("temporary", []) if t.get("role") != name]


def role_listing(document: dict[str, Any], now: float) -> list[dict[str, Any]]:
    sessions: dict[str, int] = {}
    for entry in document.get("temporary", []):
        if "role" in entry and entry["expiration"] > now:
            sessions[entry["role"]] = sessions.get(entry["role"], 0) + 1
    return [
        {**_role_shown(name, role), "TrustPolicy": role["trust_policy"], "Sessions": sessions.get(name, 0)}
        for name, role in sorted(document.get("roles", {}).items())
    ]


def _role_shown(name: str, role: dict[str, Any]) -> dict[str, Any]:
    return {
        "RoleName": name,
        "RoleId": role["role_id"],
        "Arn": role_arn(str(role["account"]), name),
        "MaxSessionDuration": role["max_session_duration"],
    }


# ---- OpenID Connect providers ----------------------------------------------------------------------------------
def add_provider(
    document: dict[str, Any], issuer: str, account: str, audiences: list[str], jwks: dict[str, Any], jwks_url: str
) -> dict[str, Any]:
    """Register (or replace) the provider whose tokens have ``iss`` = ``issuer``, with its keys (a JWKS)."""
    if not issuer.startswith("https://") or len(issuer) <= 8:
        raise UsersError(f"{issuer!r} is not an issuer: an https:// URL, as the tokens' iss claim has it")
    check_account(account)
    if not audiences:
        raise UsersError("a provider needs at least one --audience (its client ids)")
    keys = jwks.get("keys")
    if not isinstance(keys, list) or not keys:
        raise UsersError('the JWKS has no keys (a JSON object with a non-empty "keys" list)')
    document.setdefault("oidc_providers", {})[issuer] = {
        "account": account,
        "audiences": sorted(set(audiences)),
        "jwks": jwks,
        "jwks_url": jwks_url,
        "created": _iso(time.time()),
    }
    return {"Issuer": issuer, "Arn": provider_arn(account, issuer), "Audiences": sorted(set(audiences)),
            "Keys": len(keys)}  # fmt: skip


def remove_provider(document: dict[str, Any], issuer: str) -> None:
    providers = document.get("oidc_providers", {})
    if issuer not in providers:
        raise UsersError(f"no OpenID Connect provider {issuer}")
    del providers[issuer]


def provider_listing(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "Issuer": issuer,
            "Arn": provider_arn(str(p["account"]), issuer),
            "Audiences": p["audiences"],
            "Keys": len(p["jwks"].get("keys", [])),
            "JwksUrl": p.get("jwks_url", ""),
        }
        for issuer, p in sorted(document.get("oidc_providers", {}).items())
    ]


# ---- sessions --------------------------------------------------------------------------------------------------
def new_session(
    role_name: str,
    role: dict[str, Any],
    session: str,
    expiration: int,
    claims: dict[str, str] | None,
    policy: str | None,
) -> dict[str, Any]:
    """The credentials-store entry of a new role session (credentials.py makes its Caller)."""
    entry: dict[str, Any] = {
        "id": new_id("ASIA"),
        "secret": new_secret(),
        "token": new_session_token(),
        "role": role_name,
        "role_id": role["role_id"],
        "account": role["account"],
        "session": session,
        "expiration": expiration,
    }
    if claims:
        entry["claims"] = claims
    if policy:
        entry["policy"] = policy
    return entry


def session_arn(entry: dict[str, Any]) -> str:
    return assumed_role_arn(str(entry["account"]), str(entry["role"]), str(entry["session"]))


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
