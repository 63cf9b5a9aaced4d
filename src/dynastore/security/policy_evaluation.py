"""Whether a caller may perform one action on one resource: IAM's evaluation logic.

1. An explicit Deny in any applicable statement (identity-based or resource-based) denies.
2. Within the resource's own account, an Allow from the identity-based policies, or from a resource-based
   statement that names the caller itself (its ARN, or ``*``), allows. A resource-based statement that names
   only the caller's account delegates to that account: its identity policies must allow.
3. Across accounts both must allow: the caller's identity policies, and the resource's policy (naming the caller
   or its account).
4. Otherwise the request is denied implicitly.

The account's root user (``arn:aws:iam::<account>:root``) is allowed by identity everything in its own account.

A role session's identity decision is the role's policies intersected with its session policies (those passed to
AssumeRole / AssumeRoleWithWebIdentity): both must allow, a Deny in either denies. That is the one check the
request path adds for role sessions (``caller.session_policies`` is empty for users).

``decide`` returns None when the request is allowed, else the AccessDeniedException message, as IAM words it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from dynastore import messages
from dynastore.security.caller import Caller
from dynastore.security.conditions import ConditionValue
from dynastore.security.policy_documents import Policy, Statement
from dynastore.util.clock import Clock

__all__ = [
    "ALLOW", "DENY", "NONE", "RequestContext", "decide", "identity_decision", "resource_decision", "trust_decision",
]  # fmt: skip

NONE, ALLOW, DENY = 0, 1, 2

# Global condition keys (and policy variables) that describe the caller, by lower-case name.
_PRINCIPAL_KEYS: dict[str, Callable[[Caller], str]] = {
    "aws:username": lambda c: c.user_name,
    "aws:userid": lambda c: c.user_id,
    "aws:principalaccount": lambda c: c.account_id,
    "aws:principalarn": lambda c: c.arn,
    "aws:principaltype": lambda c: "AssumedRole" if c.role_name else "Account" if c.arn.endswith(":root") else "User",
    "aws:requestedregion": lambda c: c.region,
}


class RequestContext:
    """The condition keys of one check: the request's own (``values``, lower-case names), the caller's, and the
    time of the request (``aws:CurrentTime``, ``aws:EpochTime``) by the server's clock, read only if asked for."""

    __slots__ = ("caller", "values", "clock")

    def __init__(self, caller: Caller, values: dict[str, ConditionValue], clock: Clock | None = None) -> None:
        self.caller = caller
        self.values = values
        self.clock = clock

    def get(self, key: str) -> ConditionValue:
        value = self.values.get(key)
        if value is not None:
            return value
        principal = _PRINCIPAL_KEYS.get(key)
        if principal is None:
            claims = self.caller.claims  # a web identity's keys (``accounts.google.com:sub``): role sessions only
            if claims is not None and key in claims:
                return claims[key]
            return self._time(key) if self.clock is not None else None
        text = principal(self.caller)
        return text or None

    def _time(self, key: str) -> str | None:
        assert self.clock is not None
        if key == "aws:epochtime":
            return str(int(self.clock.now()))
        if key == "aws:currenttime":
            moment = datetime.fromtimestamp(int(self.clock.now()), tz=UTC)
            return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        return None

    def variable(self, name: str) -> str | None:
        value = self.get(name)
        return value if isinstance(value, str) else None


def _applies(st: Statement, action: str, resource: str, ctx: RequestContext) -> bool:
    if st.names_action(action) == st.not_action:
        return False
    lookup = ctx.variable
    named = False
    for pattern in st.resources:  # loops, not generators: this runs for every statement a request meets
        if pattern.matches(resource, lookup):
            named = True
            break
    if named == st.not_resource:
        return False
    for condition in st.conditions:  # noqa: SIM110
        if not condition.holds(ctx.get(condition.key), lookup):
            return False
    return True


def identity_decision(policies: Sequence[Policy], action: str, resource: str, ctx: RequestContext) -> int:
    """DENY, ALLOW or NONE from identity-based policies (``action`` in lower case)."""
    allowed = False
    for policy in policies:
        for st in policy.statements:
            if (st.deny or not allowed) and _applies(st, action, resource, ctx):
                if st.deny:
                    return DENY
                allowed = True
    return ALLOW if allowed else NONE


def _session_refusal(
    by_role: int, session: Sequence[Policy], action: str, resource: str, ctx: RequestContext
) -> str | None:
    """The refusal's template when a role session's policies refuse what its role's allow (None: they do not;
    the role's own decision stands)."""
    if by_role == DENY:
        return None
    by_session = identity_decision(session, action, resource, ctx)
    if by_session == DENY:
        return messages.ACCESS_DENIED_SESSION_DENY
    if by_role == ALLOW and by_session != ALLOW:
        return messages.ACCESS_DENIED_NO_SESSION_ALLOW
    return None


def trust_decision(policy: Policy, action: str, providers: tuple[str, ...], ctx: RequestContext) -> int:
    """DENY, ALLOW or NONE from a role's trust policy for a web identity of a provider named by any of
    ``providers`` (its OIDC provider ARN, and a well-known provider's name such as ``accounts.google.com``)
    asking ``action`` (lower case); the token's claims are the condition keys of ``ctx``."""
    allowed = False
    for st in policy.statements:
        principals = st.principals
        if principals is None:
            continue
        named = principals.anyone or any(name in principals.federated for name in providers)
        if named == st.not_principal or not _applies(st, action, "*", ctx):
            continue
        if st.deny:
            return DENY
        allowed = True
    return ALLOW if allowed else NONE


def _principal_match(st: Statement, caller: Caller) -> int:
    """0: the statement does not name the caller; 1: it names the caller's account; 2: the caller itself."""
    principals = st.principals
    if principals is None:
        return 0
    if principals.anyone or caller.arn in principals.arns or _role_of(caller.arn) in principals.arns:
        found = 2
    elif caller.account_id in principals.accounts:
        found = 1
    else:
        found = 0
    if st.not_principal:
        return 0 if found else 2
    return found


def _role_of(arn: str) -> str:
    """The role ARN of an assumed-role session ARN (``arn:aws:sts::<account>:assumed-role/<role>/<session>``):
    a resource policy names the role, and the role's sessions match it; "" for other principals."""
    if not arn.startswith("arn:aws:sts::") or ":assumed-role/" not in arn:
        return ""
    head, _, path = arn.partition(":assumed-role/")
    return f"arn:aws:iam::{head[len('arn:aws:sts::') :]}:role/{path.split('/', 1)[0]}"


def resource_decision(policy: Policy, action: str, resource: str, ctx: RequestContext) -> tuple[int, bool]:
    """(DENY, ALLOW or NONE, whether an Allow names the caller itself) from a resource-based policy."""
    allowed, direct = False, False
    for st in policy.statements:
        named = _principal_match(st, ctx.caller)
        if not named or not _applies(st, action, resource, ctx):
            continue
        if st.deny:
            return DENY, False
        allowed = True
        direct = direct or named == 2
    return (ALLOW if allowed else NONE), direct


_LOWER: dict[str, str] = {}


def decide(
    caller: Caller,
    action: str,
    resource: str,
    values: dict[str, ConditionValue],
    identity: Sequence[Policy],
    resource_policy: Policy | None,
    resource_account: str,
    clock: Clock | None = None,
) -> str | None:
    """None if ``caller`` may perform ``action`` (``dynamodb:GetItem``) on ``resource``, else the message of
    the AccessDeniedException to raise."""
    ctx = RequestContext(caller, values, clock)
    lowered = _LOWER.get(action)
    if lowered is None:
        lowered = _LOWER[action] = action.lower()  # DynamoDB's few actions: bounded
    if caller.arn.endswith(":root") and caller.arn == f"arn:aws:iam::{caller.account_id}:root":
        by_identity = ALLOW
    else:
        by_identity = identity_decision(identity, lowered, resource, ctx)
        if caller.session_policies:  # a role session with session policies: the intersection
            session_refusal = _session_refusal(by_identity, caller.session_policies, lowered, resource, ctx)
            if session_refusal is not None:
                return session_refusal.format(principal=caller.arn, action=action, resource=resource)
    template: str | None = None
    if by_identity == DENY:
        template = messages.ACCESS_DENIED_IDENTITY_DENY
    else:
        by_resource, direct = (NONE, False)
        if resource_policy is not None:
            by_resource, direct = resource_decision(resource_policy, lowered, resource, ctx)
        if by_resource == DENY:
            template = messages.ACCESS_DENIED_RESOURCE_DENY
        elif caller.account_id == resource_account:
            if by_identity != ALLOW and not (by_resource == ALLOW and direct):
                template = messages.ACCESS_DENIED_NO_IDENTITY_ALLOW
        elif by_identity != ALLOW:
            template = messages.ACCESS_DENIED_NO_IDENTITY_ALLOW
        elif by_resource != ALLOW:
            template = messages.ACCESS_DENIED_NO_RESOURCE_ALLOW
    if template is None:
        return None
    return template.format(principal=caller.arn, action=action, resource=resource)
