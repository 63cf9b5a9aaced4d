"""The identity a request runs as, made once per request by the protocol layer and handed to the operation."""

from __future__ import annotations

from dynastore.model.namespace import Origin
from dynastore.security.sigv4 import REGION_NAME

# Anonymous callers of regions other than the configured one kept before that cache starts over (a client may
# name any region).
_ANONYMOUS_KEPT = 256


class Caller:
    """An authenticated principal (or, with authentication off, the one anonymous caller of the server).

    ``account_id`` and ``region`` say which namespace the request addresses; ``arn`` is the principal as AWS
    names it in policies and error messages (``arn:aws:iam::<account>:user/<name>``); ``user_id`` is the value of
    ``${aws:userid}``; ``groups`` are the user's groups (their policies apply too); ``admin`` allows dynastore's
    own endpoints when authentication is on; ``authenticated`` is False only for the anonymous caller.
    ``origin``: the caller as the engine knows it (model/namespace.py), given with every engine call it makes."""

    __slots__ = ("account_id", "region", "user_name", "user_id", "arn", "access_key_id", "groups", "admin",
                 "authenticated", "temporary", "origin")  # fmt: skip

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
        """The caller of a request whose Authorization header (checked by protocol/auth.py) is ``authorization``."""
        if self._shared:
            return self.default
        region = _scope_region(authorization)
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


def _scope_region(authorization: str) -> str:
    """The region of ``Credential=<key>/<date>/<region>/<service>/<terminator>`` in an Authorization header; "" if
    the credential is not five parts."""
    start = authorization.find("Credential=")
    if start < 0:
        return ""
    start += 11
    end = authorization.find(",", start)
    parts = (authorization[start:] if end < 0 else authorization[start:end]).strip().split("/")
    return parts[2] if len(parts) == 5 else ""
