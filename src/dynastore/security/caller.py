"""The identity a request runs as, made once per request by the protocol layer and handed to the operation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dynastore.model.namespace import Origin
from dynastore.security.sigv4 import REGION_NAME

if TYPE_CHECKING:
    from dynastore.security.policy_documents import Policy

# Anonymous callers of regions other than the configured one kept before that cache starts over (a client may
# name any region).
_ANONYMOUS_KEPT = 256


class Caller:
    """An authenticated principal (or, with authentication off, the one anonymous caller of the server).

    ``account_id`` and ``region`` say which namespace the request addresses; ``arn`` is the principal as AWS
    names it in policies and error messages (``arn:aws:iam::<account>:user/<name>``); ``user_id`` is the value of
    ``${aws:userid}``; ``groups`` are the user's groups (their policies apply too); ``admin`` allows dynastore's
    own endpoints when authentication is on; ``authenticated`` is False only for the anonymous caller.
    ``origin``: the caller as the engine knows it (model/namespace.py), given with every engine call it makes.

    A role session (credentials from STS AssumeRole or AssumeRoleWithWebIdentity) is the other principal kind:
    ``role_name`` names the role whose policies apply (not a user's), ``arn`` is the assumed-role ARN
    (``arn:aws:sts::<account>:assumed-role/<role>/<session>``), ``user_id`` is ``<role id>:<session>``,
    ``session_policies`` limit it further (the intersection), and ``claims`` are its web identity's policy
    variables (``accounts.google.com:sub`` -> the token's subject; lower-case names)."""

    __slots__ = ("account_id", "region", "user_name", "user_id", "arn", "access_key_id", "groups", "admin",
                 "authenticated", "temporary", "origin", "role_name", "session_policies", "claims")  # fmt: skip

    def __init__(
        self,
        account_id: str,
        region: str,
        *,
        user_name: str = "",
        user_id: str = "",
        arn: str = "",
        access_key_id: str = "",
        groups: tuple[str, ...] = (),
        admin: bool = False,
        authenticated: bool = False,
        temporary: bool = False,
        role_name: str = "",
        session_policies: tuple[Policy, ...] = (),
        claims: dict[str, str] | None = None,
    ) -> None:
        self.account_id = account_id
        self.region = region
        self.user_name = user_name
        self.user_id = user_id
        self.arn = arn
        self.access_key_id = access_key_id
        self.groups = groups
        self.admin = admin
        self.authenticated = authenticated
        self.temporary = temporary
        self.origin = Origin(arn, user_id, account_id)
        self.role_name = role_name
        self.session_policies = session_policies
        self.claims = claims

    def in_region(self, region: str) -> Caller:
        """The same principal, addressing another region's tables."""
        return Caller(self.account_id, region, user_name=self.user_name, user_id=self.user_id, arn=self.arn,
                      access_key_id=self.access_key_id, groups=self.groups, admin=self.admin,
                      authenticated=self.authenticated, temporary=self.temporary, role_name=self.role_name,
                      session_policies=self.session_policies, claims=self.claims)  # fmt: skip


def anonymous(account_id: str, region: str) -> Caller:
    """The caller of a server without authentication: every request is it, and it may do everything."""
    return Caller(account_id, region, user_name="anonymous", arn=f"arn:aws:iam::{account_id}:root", admin=True)


class AnonymousCallers:
    """The callers of a server without authentication (``--auth none``): every request is the anonymous caller of
    the configured account, in the region its Authorization header's credential scope names, so its tables are
    that region's as on DynamoDB (and DynamoDB Local). A scope that names no AWS region (a stand-in header, as the
    console's ``console/20000101/local/...``) is the configured region's. ``shared`` (``--shared-namespace``): every
    request is in the configured region."""

    __slots__ = ("default", "_shared", "_by_region")

    def __init__(self, account_id: str, region: str, *, shared: bool = False) -> None:
        self.default = anonymous(account_id, region)
        self._shared = shared
        self._by_region: dict[str, Caller] = {}

    def of(self, authorization: str) -> Caller:
        """The caller of a request whose Authorization header is ``authorization``."""
        return self.in_region(scope_region(authorization))

    def in_region(self, region: str) -> Caller:
        """The caller of a request whose credential scope names ``region`` (``scope_region`` of its Authorization
        header, which security/authenticator.py ``check_form`` returns)."""
        if self._shared:
            return self.default
        if region == self.default.region or not region:
            return self.default
        found = self._by_region.get(region)
        if found is None:
            if not REGION_NAME.fullmatch(region):
                return self.default
            if len(self._by_region) >= _ANONYMOUS_KEPT:
                self._by_region.clear()
            found = self._by_region[region] = anonymous(self.default.account_id, region)
        return found


def scope_region(authorization: str) -> str:
    """The region of ``Credential=<key>/<date>/<region>/<service>/<terminator>`` in an Authorization header; "" if
    the credential is not five parts."""
    start = authorization.find("Credential=")
    if start < 0:
        return ""
    start += 11
    end = authorization.find(",", start)
    parts = (authorization[start:] if end < 0 else authorization[start:end]).strip().split("/")
    return parts[2] if len(parts) == 5 else ""
