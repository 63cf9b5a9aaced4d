"""The evaluation of a request's checks: identity policies from the store, the resource policy of the check's
table or stream, the resource's owner read from its ARN, and the self-lockout refusal of PutResourcePolicy.
(Which checks an operation makes is the API's mapping: tests/unit/api/test_authorization.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynastore.errors import AccessDeniedException
from dynastore.model.table_schema import KeyAttr, KeySchema, TableDef
from dynastore.security.authorization import Check, authorize, reads_request, refuse_self_lockout, resource_policy
from dynastore.security.caller import Caller
from dynastore.security.identity_policies import USER, IdentityPolicies
from dynastore.security.policy_documents import IDENTITY, compiled
from dynastore.util.clock import ManualClock

ACCOUNT = "111122223333"
OTHER = "444455556666"
MUSIC = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/Music"
STREAM = f"{MUSIC}/stream/2026-01-01T00:00:00.000"
ALICE = Caller(
    ACCOUNT,
    "us-east-1",
    user_name="alice",
    user_id="AIDAALICE",
    arn=f"arn:aws:iam::{ACCOUNT}:user/alice",
    authenticated=True,
)
BOB = Caller(OTHER, "us-east-1", user_name="bob", arn=f"arn:aws:iam::{OTHER}:user/bob", authenticated=True)


def document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def statement(effect: str, action: str, resource: str, principal: str | None = None) -> dict[str, Any]:
    st: dict[str, Any] = {"Effect": effect, "Action": action, "Resource": resource}
    if principal is not None:
        st["Principal"] = {"AWS": principal}
    return st


def table(policy: str | None = None, stream_policy: tuple[str, str] | None = None) -> TableDef:
    return TableDef(
        "Music",
        1,
        "uuid",
        KeySchema(KeyAttr("pk", "S")),
        (KeyAttr("pk", "S"),),
        0.0,
        resource_policy=None if policy is None else (policy, "1"),
        stream_policy=None if stream_policy is None else (stream_policy[0], stream_policy[1], "1"),
    )


def policies(**by_user: str) -> IdentityPolicies:
    store = IdentityPolicies(None)
    for user, text in by_user.items():
        store.put(ACCOUNT, USER, user, "P", text)
    return store


def refusal(checks: list[Check], caller: Caller = ALICE, store: IdentityPolicies | None = None) -> str | None:
    try:
        authorize(checks, caller, store or policies(), ACCOUNT, None)
    except AccessDeniedException as exc:
        return str(exc.message)
    return None


def test_an_identity_allow_allows_and_its_absence_denies_with_iams_text() -> None:
    check = Check("dynamodb:GetItem", MUSIC, {})
    assert refusal([check]) == (
        f"User: {ALICE.arn} is not authorized to perform: dynamodb:GetItem on resource: {MUSIC} "
        "because no identity-based policy allows the dynamodb:GetItem action"
    )
    allowed = policies(alice=document(statement("Allow", "dynamodb:GetItem", MUSIC)))
    assert refusal([check], store=allowed) is None


def test_the_first_denied_check_refuses_the_request() -> None:
    allowed = policies(alice=document(statement("Allow", "dynamodb:GetItem", MUSIC)))
    checks = [Check("dynamodb:GetItem", MUSIC, {}), Check("dynamodb:PutItem", MUSIC, {})]
    assert refusal(checks, store=allowed) == (
        f"User: {ALICE.arn} is not authorized to perform: dynamodb:PutItem on resource: {MUSIC} "
        "because no identity-based policy allows the dynamodb:PutItem action"
    )


def test_the_tables_resource_policy_applies() -> None:
    granted = table(document(statement("Allow", "dynamodb:GetItem", MUSIC, ALICE.arn)))
    assert refusal([Check("dynamodb:GetItem", MUSIC, {}, granted)]) is None
    denied = table(document(statement("Deny", "dynamodb:GetItem", MUSIC, "*")))
    everything = policies(alice=document(statement("Allow", "dynamodb:*", "*")))
    assert refusal([Check("dynamodb:GetItem", MUSIC, {}, denied)], store=everything) == (
        f"User: {ALICE.arn} is not authorized to perform: dynamodb:GetItem on resource: {MUSIC} "
        "with an explicit deny in a resource-based policy"
    )


def test_a_streams_policy_applies_to_its_own_stream_only() -> None:
    text = document(statement("Allow", "dynamodb:DescribeStream", STREAM, ALICE.arn))
    td = table(stream_policy=("2026-01-01T00:00:00.000", text))
    assert resource_policy(Check("dynamodb:DescribeStream", STREAM, {}, td, "2026-01-01T00:00:00.000")) is not None
    assert resource_policy(Check("dynamodb:DescribeStream", STREAM, {}, td, "2025-01-01T00:00:00.000")) is None
    assert resource_policy(Check("dynamodb:GetItem", MUSIC, {}, td)) is None  # the table has none of its own


def test_another_accounts_resource_needs_its_resource_policy_too() -> None:
    """BOB's own identity policy allows everything, but the table is ALICE's account's (read from its ARN)."""
    store = IdentityPolicies(None)
    store.put(OTHER, USER, "bob", "P", document(statement("Allow", "dynamodb:*", "*")))
    check = Check("dynamodb:GetItem", MUSIC, {})
    assert refusal([check], BOB, store) == (
        f"User: {BOB.arn} is not authorized to perform: dynamodb:GetItem on resource: {MUSIC} "
        "because no resource-based policy allows the dynamodb:GetItem action"
    )
    shared = table(document(statement("Allow", "dynamodb:GetItem", MUSIC, OTHER)))
    assert refusal([Check("dynamodb:GetItem", MUSIC, {}, shared)], BOB, store) is None


@pytest.mark.parametrize("resource", ["*", "arn:aws:dynamodb:x", f"arn:aws:s3:us-east-1:{OTHER}:table/Music"])
def test_a_resource_naming_no_account_is_the_namespaces(resource: str) -> None:
    everything = policies(alice=document(statement("Allow", "dynamodb:*", "*")))
    assert refusal([Check("dynamodb:GetItem", resource, {})], store=everything) is None


def test_a_policy_denying_its_writer_put_resource_policy_is_refused() -> None:
    locking = document(statement("Deny", "dynamodb:PutResourcePolicy", MUSIC, ALICE.arn))
    with pytest.raises(AccessDeniedException) as info:
        refuse_self_lockout(MUSIC, locking, ALICE)
    assert info.value.message == (
        "The new resource policy will not allow you to update the resource policy in the future."
    )
    refuse_self_lockout(MUSIC, document(statement("Deny", "dynamodb:GetItem", MUSIC, ALICE.arn)), ALICE)
    refuse_self_lockout(MUSIC, "not a policy", ALICE)  # refused by the operation, with the document's error


@pytest.mark.parametrize(
    ("condition", "resource", "reads"),
    [
        (None, "*", False),
        (None, MUSIC, False),
        (None, "arn:aws:dynamodb:us-east-1:111122223333:table/${aws:username}", True),
        ({"StringEquals": {"dynamodb:Select": "ALL_ATTRIBUTES"}}, "*", True),
        ({"DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}}, MUSIC, True),
    ],
)
def test_a_policy_reads_the_request_only_by_conditions_and_variables(
    condition: dict[str, Any] | None, resource: str, reads: bool
) -> None:
    st = statement("Allow", "dynamodb:GetItem", resource)
    if condition is not None:
        st["Condition"] = condition
    policy = compiled(document(st), IDENTITY)
    assert policy.reads_request is reads
    assert reads_request(ALICE, (policy,)) is reads


def test_a_time_condition_is_evaluated_on_every_request() -> None:
    # aws:CurrentTime is read from the clock: a decision by such a policy is never remembered.
    clock = ManualClock(1_900_000_000.0)  # 2030-03-17
    st = statement("Allow", "dynamodb:GetItem", MUSIC)
    st["Condition"] = {"DateLessThan": {"aws:CurrentTime": "2030-03-18T00:00:00Z"}}
    store = policies(alice=document(st))
    check = Check("dynamodb:GetItem", MUSIC, {})
    authorize([check], ALICE, store, ACCOUNT, clock)
    clock.advance(86_400)
    with pytest.raises(AccessDeniedException):
        authorize([check], ALICE, store, ACCOUNT, clock)
