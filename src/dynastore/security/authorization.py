"""Authorization of a request (authentication on): its checks, each evaluated against the caller's identity
policies and the resource's own policy (security/policy_evaluation.py), in order; the first one denied raises
AccessDeniedException with IAM's text.

What a request must be allowed is the API layer's business (api/authorization.py maps each operation's request
to its checks); what allows it is this module's: the caller's identity-based policies (the store of
security/identity_policies.py), the resource-based policy on the table (which also governs its indexes) or on its
stream, and the account that owns the resource (another than the caller's: cross-account access, which both
must allow).

PutResourcePolicy is refused (AccessDeniedException) when the new policy would explicitly deny its writer
PutResourcePolicy on the resource, unless the request confirms it (ConfirmRemoveSelfResourceAccess), as
DynamoDB refuses to lock the writer out.
"""

from __future__ import annotations

from collections.abc import Iterable

from dynastore import messages
from dynastore.errors import AccessDeniedException
from dynastore.model.table_schema import TableDef
from dynastore.security.caller import Caller
from dynastore.security.conditions import ConditionValue
from dynastore.security.identity_policies import IdentityPolicies
from dynastore.security.policy_documents import STREAM, TABLE, Policy, PolicyDocumentError, compiled, parse_policy
from dynastore.security.policy_evaluation import DENY, RequestContext, decide, resource_decision
from dynastore.util.arn import account_of
from dynastore.util.clock import Clock

__all__ = ["Check", "Values", "authorize", "authorize_by", "reads_request", "refuse_self_lockout", "resource_policy"]

# A check's condition keys, by lower-case name (``dynamodb:leadingkeys``).
Values = dict[str, ConditionValue]


class Check:
    """One authorization question: may the caller perform ``action`` (``dynamodb:GetItem``) on ``resource`` (an
    ARN, or ``*``), given the condition keys ``values``? ``table`` is the table whose resource policy applies (None:
    none does; no such table), ``stream_label`` the label of its stream when the resource is the stream."""

    __slots__ = ("action", "resource", "values", "table", "stream_label")

    def __init__(
        self,
        action: str,
        resource: str,
        values: Values,
        table: TableDef | None = None,
        stream_label: str | None = None,
    ) -> None:
        self.action = action
        self.resource = resource
        self.values = values
        self.table = table
        self.stream_label = stream_label


def authorize(
    checks: Iterable[Check], caller: Caller, policies: IdentityPolicies, account_id: str, clock: Clock | None
) -> None:
    """Raise AccessDeniedException unless ``caller`` is allowed every check. ``account_id`` owns the resources
    that name no other account (the namespace the request runs in); ``clock`` gives ``aws:CurrentTime``."""
    authorize_by(checks, caller, policies.for_caller(caller), account_id, clock)


def authorize_by(
    checks: Iterable[Check], caller: Caller, identity: tuple[Policy, ...], account_id: str, clock: Clock | None
) -> None:
    """``authorize`` with the caller's identity policies already looked up (``IdentityPolicies.for_caller``)."""
    plain = not reads_request(caller, identity)
    for check in checks:
        owner = account_of(check.resource) or account_id
        policy = resource_policy(check)
        if plain and (policy is None or not policy.reads_request):
            denied = _remembered_decision(caller, check, identity, policy, owner)
        else:
            denied = decide(caller, check.action, check.resource, check.values, identity, policy, owner, clock)
        if denied is not None:
            raise AccessDeniedException(denied)


def reads_request(caller: Caller, identity: tuple[Policy, ...]) -> bool:
    """Whether the caller's identity policies (and a role session's session policies) read anything of a request
    but its action and resource: a condition, or a resource with policy variables (``Policy.reads_request``).
    When none does, a check's condition keys are never looked at."""
    for policy in identity:
        if policy.reads_request:
            return True
    for policy in caller.session_policies:  # noqa: SIM110
        if policy.reads_request:
            return True
    return False


# Decisions of checks whose policies read nothing of the request (neither the caller's nor the resource's): the
# decision is then a function of the caller, its policies, the action, the resource and the resource's account,
# so the last one made for those is kept. An entry serves only while the caller, its identity policies and the
# resource policy are the very objects it was made with: a change of any of them (a policy put or removed, the
# credentials reloaded) makes new ones, and the entry is made again.
_DECISIONS: dict[tuple[str, str, str, str], tuple[Caller, tuple[Policy, ...], Policy | None, str | None]] = {}
_DECISIONS_LIMIT = 4096


def _remembered_decision(
    caller: Caller, check: Check, identity: tuple[Policy, ...], policy: Policy | None, owner: str
) -> str | None:
    key = (caller.arn, check.action, check.resource, owner)
    found = _DECISIONS.get(key)
    if found is not None and found[0] is caller and found[1] is identity and found[2] is policy:
        return found[3]
    # No clock: a policy that reads nothing of the request reads no time either.
    denied = decide(caller, check.action, check.resource, check.values, identity, policy, owner)
    if len(_DECISIONS) >= _DECISIONS_LIMIT:
        _DECISIONS.clear()
    _DECISIONS[key] = (caller, identity, policy, denied)
    return denied


def resource_policy(check: Check) -> Policy | None:
    """The resource-based policy that applies to the check: its stream's, or its table's (also its indexes')."""
    td = check.table
    if td is None:
        return None
    if check.stream_label is not None:
        sp = td.stream_policy
        return compiled(sp[1], STREAM) if sp is not None and sp[0] == check.stream_label else None
    rp = td.resource_policy
    return compiled(rp[0], TABLE) if rp is not None else None


def refuse_self_lockout(arn: str, text: str, caller: Caller) -> None:
    """Raise AccessDeniedException if the policy ``text`` for ``arn`` explicitly denies ``caller``
    PutResourcePolicy. A document that does not parse is left to the operation, which refuses it."""
    try:
        new = parse_policy(text, STREAM if "/stream/" in arn else TABLE, arn)
    except PolicyDocumentError:
        return
    action = "dynamodb:putresourcepolicy"
    if resource_decision(new, action, arn, RequestContext(caller, {}))[0] == DENY:
        raise AccessDeniedException(messages.RESOURCE_POLICY_LOCKOUT)
