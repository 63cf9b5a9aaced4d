"""The policy evaluator against a table of cases: one identity policy (or a resource policy), one request."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynastore.security.caller import Caller
from dynastore.security.conditions import UNKNOWN, ConditionValue
from dynastore.security.policy_documents import IDENTITY, TABLE, Policy, parse_policy
from dynastore.security.policy_evaluation import decide

ACCOUNT = "111122223333"
OTHER = "444455556666"
MUSIC = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/Music"
ALICE = Caller(
    ACCOUNT,
    "us-east-1",
    user_name="alice",
    user_id="AIDAALICE",
    arn=f"arn:aws:iam::{ACCOUNT}:user/alice",
    groups=("readers",),
    authenticated=True,
)
BOB_ELSEWHERE = Caller(
    OTHER, "us-east-1", user_name="bob", user_id="AIDABOB", arn=f"arn:aws:iam::{OTHER}:user/bob", authenticated=True
)


def policy(*statements: dict[str, Any], kind: str = IDENTITY) -> Policy:
    return parse_policy(json.dumps({"Version": "2012-10-17", "Statement": list(statements)}), kind)


def allow(action: Any = "dynamodb:*", resource: Any = MUSIC, **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def deny(action: Any = "dynamodb:GetItem", resource: Any = MUSIC, **extra: Any) -> dict[str, Any]:
    return {"Effect": "Deny", "Action": action, "Resource": resource, **extra}


def when(operator: str, key: str, value: Any) -> dict[str, Any]:
    return {"Condition": {operator: {key: value}}}


def allowed(
    statements: list[dict[str, Any]],
    action: str = "dynamodb:GetItem",
    resource: str = MUSIC,
    values: dict[str, ConditionValue] | None = None,
    caller: Caller = ALICE,
) -> bool:
    return decide(caller, action, resource, values or {}, [policy(*statements)], None, ACCOUNT) is None


LEAD = "dynamodb:leadingkeys"
ATTRS = "dynamodb:attributes"

# (id, statements, action, resource, condition values, expected)
CASES: list[tuple[str, list[dict[str, Any]], str, str, dict[str, ConditionValue], bool]] = [
    ("plain allow", [allow()], "dynamodb:GetItem", MUSIC, {}, True),
    ("no statement names the action", [allow("dynamodb:PutItem")], "dynamodb:GetItem", MUSIC, {}, False),
    ("explicit deny wins over allow", [allow("dynamodb:*"), deny()], "dynamodb:GetItem", MUSIC, {}, False),
    (
        "deny of another action leaves the allow",
        [allow("dynamodb:*"), deny("dynamodb:PutItem")],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    ("action wildcard, any case", [allow("DynamoDB:get*")], "dynamodb:GetItem", MUSIC, {}, True),
    ("action ? wildcard", [allow("dynamodb:?etItem")], "dynamodb:GetItem", MUSIC, {}, True),
    ("star action", [allow("*")], "dynamodb:DeleteTable", MUSIC, {}, True),
    ("action list", [allow(["dynamodb:PutItem", "dynamodb:GetItem"])], "dynamodb:GetItem", MUSIC, {}, True),
    (
        "NotAction allows the others",
        [{"Effect": "Allow", "NotAction": "dynamodb:DeleteTable", "Resource": "*"}],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "NotAction excludes the named",
        [{"Effect": "Allow", "NotAction": "dynamodb:Delete*", "Resource": "*"}],
        "dynamodb:DeleteTable",
        MUSIC,
        {},
        False,
    ),
    (
        "resource wildcard in region and account",
        [allow(resource="arn:aws:dynamodb:*:*:table/Music")],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "table ARN does not cover its index",
        [allow(resource=MUSIC)],
        "dynamodb:Query",
        MUSIC + "/index/ByArtist",
        {},
        False,
    ),
    (
        "index ARN pattern",
        [allow("dynamodb:Query", MUSIC + "/index/*")],
        "dynamodb:Query",
        MUSIC + "/index/ByArtist",
        {},
        True,
    ),
    (
        "table* covers indexes and streams",
        [allow("dynamodb:*", MUSIC + "*")],
        "dynamodb:GetRecords",
        MUSIC + "/stream/2026-01-01T00:00:00.000",
        {},
        True,
    ),
    (
        "? in a resource",
        [allow(resource="arn:aws:dynamodb:us-east-1:111122223333:table/Musi?")],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "NotResource",
        [{"Effect": "Allow", "Action": "dynamodb:*", "NotResource": MUSIC}],
        "dynamodb:GetItem",
        MUSIC.replace("Music", "Books"),
        {},
        True,
    ),
    (
        "NotResource excludes",
        [{"Effect": "Allow", "Action": "dynamodb:*", "NotResource": MUSIC}],
        "dynamodb:GetItem",
        MUSIC,
        {},
        False,
    ),
    (
        "deny with NotResource",
        [allow("dynamodb:*", "*"), deny("dynamodb:*", "*")],
        "dynamodb:GetItem",
        MUSIC,
        {},
        False,
    ),
    # LeadingKeys, as DynamoDB's fine-grained access control uses it
    (
        "LeadingKeys = userid",
        [allow(**when("ForAllValues:StringEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:GetItem",
        MUSIC,
        {LEAD: ("AIDAALICE",)},
        True,
    ),
    (
        "LeadingKeys another user",
        [allow(**when("ForAllValues:StringEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:GetItem",
        MUSIC,
        {LEAD: ("AIDABOB",)},
        False,
    ),
    (
        "LeadingKeys userid prefix",
        [allow(**when("ForAllValues:StringLike", "dynamodb:LeadingKeys", "${aws:userid}#*"))],
        "dynamodb:GetItem",
        MUSIC,
        {LEAD: ("AIDAALICE#2024",)},
        True,
    ),
    (
        "LeadingKeys one of two keys foreign",
        [allow(**when("ForAllValues:StringLike", "dynamodb:LeadingKeys", "${aws:userid}#*"))],
        "dynamodb:BatchGetItem",
        MUSIC,
        {LEAD: ("AIDAALICE#1", "AIDABOB#1")},
        False,
    ),
    (
        "ForAllValues holds with no keys (a Scan)",
        [allow(**when("ForAllValues:StringEquals", "dynamodb:LeadingKeys", "x"))],
        "dynamodb:Scan",
        MUSIC,
        {},
        True,
    ),
    (
        "ForAllValues holds with an empty set",
        [allow(**when("ForAllValues:StringEquals", "dynamodb:LeadingKeys", "x"))],
        "dynamodb:Scan",
        MUSIC,
        {LEAD: ()},
        True,
    ),
    (
        "ForAnyValue fails with no keys",
        [allow(**when("ForAnyValue:StringEquals", "dynamodb:LeadingKeys", "x"))],
        "dynamodb:Scan",
        MUSIC,
        {},
        False,
    ),
    (
        "ForAnyValue fails with an empty set",
        [allow(**when("ForAnyValue:StringEquals", "dynamodb:LeadingKeys", "x"))],
        "dynamodb:Scan",
        MUSIC,
        {LEAD: ()},
        False,
    ),
    (
        "ForAnyValue one matches",
        [allow(**when("ForAnyValue:StringEquals", "dynamodb:LeadingKeys", "x"))],
        "dynamodb:GetItem",
        MUSIC,
        {LEAD: ("y", "x")},
        True,
    ),
    (
        "ForAllValues:StringNotLike",
        [allow(**when("ForAllValues:StringNotLike", ATTRS, ["secret*"]))],
        "dynamodb:UpdateItem",
        MUSIC,
        {ATTRS: ("pk", "title")},
        True,
    ),
    (
        "ForAllValues:StringNotLike refuses",
        [allow(**when("ForAllValues:StringNotLike", ATTRS, ["secret*"]))],
        "dynamodb:UpdateItem",
        MUSIC,
        {ATTRS: ("pk", "secretNote")},
        False,
    ),
    # A single-valued operator on a multivalued key: IAM requires a set operator; it fails closed, by effect.
    (
        "plain StringEquals in an Allow: every key must be allowed",
        [allow(**when("StringEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:BatchGetItem",
        MUSIC,
        {LEAD: ("AIDAALICE", "AIDABOB")},
        False,
    ),
    (
        "plain StringEquals in an Allow: the user's own keys",
        [allow(**when("StringEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:BatchGetItem",
        MUSIC,
        {LEAD: ("AIDAALICE", "AIDAALICE")},
        True,
    ),
    (
        "plain StringEquals in an Allow: no keys",
        [allow(**when("StringEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:Scan",
        MUSIC,
        {LEAD: ()},
        False,
    ),
    (
        "plain StringNotEquals in an Allow: one forbidden key refuses",
        [allow(**when("StringNotEquals", "dynamodb:LeadingKeys", "AIDABOB"))],
        "dynamodb:BatchWriteItem",
        MUSIC,
        {LEAD: ("AIDAALICE", "AIDABOB")},
        False,
    ),
    (
        "plain StringNotEquals in an Allow: none forbidden",
        [allow(**when("StringNotEquals", "dynamodb:LeadingKeys", "AIDABOB"))],
        "dynamodb:BatchWriteItem",
        MUSIC,
        {LEAD: ("AIDAALICE", "AIDACAROL")},
        True,
    ),
    (
        "plain StringEquals in a Deny: any forbidden key denies",
        [allow(), deny("dynamodb:BatchGetItem", **when("StringEquals", "dynamodb:LeadingKeys", "AIDABOB"))],
        "dynamodb:BatchGetItem",
        MUSIC,
        {LEAD: ("AIDAALICE", "AIDABOB")},
        False,
    ),
    (
        "plain StringNotEquals in a Deny: any key outside the list denies",
        [allow(), deny("dynamodb:BatchGetItem", **when("StringNotEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:BatchGetItem",
        MUSIC,
        {LEAD: ("AIDAALICE", "AIDABOB")},
        False,
    ),
    (
        "plain StringNotEquals in a Deny: all keys in the list",
        [allow(), deny("dynamodb:BatchGetItem", **when("StringNotEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:BatchGetItem",
        MUSIC,
        {LEAD: ("AIDAALICE",)},
        True,
    ),
    (
        "plain StringLike on Attributes in an Allow",
        [allow(**when("StringLike", ATTRS, ["pk", "public*"]))],
        "dynamodb:GetItem",
        MUSIC,
        {ATTRS: ("pk", "publicName", "secret")},
        False,
    ),
    # UNKNOWN: keys a request cannot state (a PartiQL SELECT that scans): every condition on them fails closed
    (
        "UNKNOWN leading keys under ForAllValues",
        [allow(**when("ForAllValues:StringEquals", "dynamodb:LeadingKeys", "${aws:userid}"))],
        "dynamodb:PartiQLSelect",
        MUSIC,
        {LEAD: UNKNOWN},
        False,
    ),
    (
        "UNKNOWN leading keys under IfExists",
        [allow(**when("ForAllValues:StringLikeIfExists", "dynamodb:LeadingKeys", "*"))],
        "dynamodb:PartiQLSelect",
        MUSIC,
        {LEAD: UNKNOWN},
        False,
    ),
    (
        "UNKNOWN leading keys under ForAnyValue:StringNotEquals",
        [allow(**when("ForAnyValue:StringNotEquals", "dynamodb:LeadingKeys", "AIDABOB"))],
        "dynamodb:PartiQLSelect",
        MUSIC,
        {LEAD: UNKNOWN},
        False,
    ),
    (
        "UNKNOWN leading keys meet a Deny",
        [allow(), deny("dynamodb:PartiQLSelect", **when("ForAnyValue:StringEquals", "dynamodb:LeadingKeys", "x"))],
        "dynamodb:PartiQLSelect",
        MUSIC,
        {LEAD: UNKNOWN},
        False,
    ),
    (
        "UNKNOWN leading keys, no condition on them",
        [allow(**when("ForAllValues:StringEquals", ATTRS, ["pk", "v"]))],
        "dynamodb:PartiQLSelect",
        MUSIC,
        {LEAD: UNKNOWN, ATTRS: ("pk",)},
        True,
    ),
    # Attributes and Select, as the Developer Guide's projection policy
    (
        "Attributes within the list",
        [allow(**when("ForAllValues:StringEquals", ATTRS, ["pk", "title"]))],
        "dynamodb:GetItem",
        MUSIC,
        {ATTRS: ("pk", "title")},
        True,
    ),
    (
        "Attributes outside the list",
        [allow(**when("ForAllValues:StringEquals", ATTRS, ["pk", "title"]))],
        "dynamodb:GetItem",
        MUSIC,
        {ATTRS: ("pk", "price")},
        False,
    ),
    (
        "Select SPECIFIC_ATTRIBUTES required",
        [allow(**when("StringEqualsIfExists", "dynamodb:Select", "SPECIFIC_ATTRIBUTES"))],
        "dynamodb:Query",
        MUSIC,
        {"dynamodb:select": "ALL_ATTRIBUTES"},
        False,
    ),
    (
        "Select SPECIFIC_ATTRIBUTES given",
        [allow(**when("StringEqualsIfExists", "dynamodb:Select", "SPECIFIC_ATTRIBUTES"))],
        "dynamodb:Query",
        MUSIC,
        {"dynamodb:select": "SPECIFIC_ATTRIBUTES"},
        True,
    ),
    (
        "IfExists with the key absent",
        [allow(**when("StringEqualsIfExists", "dynamodb:ReturnValues", "NONE"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "ReturnValues list",
        [allow(**when("StringEquals", "dynamodb:ReturnValues", ["NONE", "UPDATED_NEW"]))],
        "dynamodb:UpdateItem",
        MUSIC,
        {"dynamodb:returnvalues": "ALL_OLD"},
        False,
    ),
    # operators on absent keys
    (
        "StringEquals on an absent key",
        [allow(**when("StringEquals", "dynamodb:Select", "COUNT"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        False,
    ),
    (
        "StringNotEquals on an absent key",
        [allow(**when("StringNotEquals", "dynamodb:Select", "COUNT"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "StringNotEquals none of the values",
        [allow(**when("StringNotEquals", "dynamodb:Select", ["COUNT", "X"]))],
        "dynamodb:Query",
        MUSIC,
        {"dynamodb:select": "COUNT"},
        False,
    ),
    (
        "StringEqualsIgnoreCase",
        [allow(**when("StringEqualsIgnoreCase", "aws:username", "ALICE"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "StringEquals is case-sensitive",
        [allow(**when("StringEquals", "aws:username", "ALICE"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        False,
    ),
    (
        "StringEquals treats * literally",
        [allow(**when("StringEquals", "aws:username", "al*"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        False,
    ),
    ("StringLike", [allow(**when("StringLike", "aws:username", "al*"))], "dynamodb:GetItem", MUSIC, {}, True),
    ("StringNotLike", [allow(**when("StringNotLike", "aws:username", "al*"))], "dynamodb:GetItem", MUSIC, {}, False),
    (
        "condition keys are case-insensitive",
        [allow(**when("StringEquals", "AWS:UserName", "alice"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "NumericLessThan",
        [allow(**when("NumericLessThan", "test:n", "10"))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:n": "9.5"},
        True,
    ),
    (
        "NumericLessThan fails",
        [allow(**when("NumericLessThan", "test:n", 10))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:n": "10"},
        False,
    ),
    (
        "NumericGreaterThanEquals",
        [allow(**when("NumericGreaterThanEquals", "test:n", 10))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:n": "10"},
        True,
    ),
    (
        "NumericEquals non-numeric",
        [allow(**when("NumericEquals", "test:n", 1))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:n": "one"},
        False,
    ),
    (
        "NumericNotEquals",
        [allow(**when("NumericNotEquals", "test:n", 1))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:n": "2"},
        True,
    ),
    (
        "DateLessThan",
        [allow(**when("DateLessThan", "test:t", "2030-01-01T00:00:00Z"))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:t": "2026-11-24T00:00:00Z"},
        True,
    ),
    ("Bool true", [allow(**when("Bool", "test:b", True))], "dynamodb:GetItem", MUSIC, {"test:b": "true"}, True),
    ("Bool false", [allow(**when("Bool", "test:b", "true"))], "dynamodb:GetItem", MUSIC, {"test:b": "false"}, False),
    ("Null true: key absent", [allow(**when("Null", "dynamodb:Select", "true"))], "dynamodb:PutItem", MUSIC, {}, True),
    (
        "Null true: key present",
        [allow(**when("Null", "dynamodb:Select", "true"))],
        "dynamodb:GetItem",
        MUSIC,
        {"dynamodb:select": "ALL_ATTRIBUTES"},
        False,
    ),
    (
        "Null false: empty set is absent",
        [allow(**when("Null", LEAD, "false"))],
        "dynamodb:Scan",
        MUSIC,
        {LEAD: ()},
        False,
    ),
    (
        "ArnLike",
        [allow(**when("ArnLike", "aws:PrincipalArn", "arn:aws:iam::*:user/al*"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "ArnEquals takes wildcards too",
        [allow(**when("ArnEquals", "aws:PrincipalArn", "arn:aws:iam::*:user/*"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "ArnNotLike",
        [allow(**when("ArnNotLike", "aws:PrincipalArn", "arn:aws:iam::*:user/al*"))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        False,
    ),
    (
        "PrincipalAccount",
        [allow(**when("StringEquals", "aws:PrincipalAccount", ACCOUNT))],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "EnclosingOperation",
        [allow(**when("ForAnyValue:StringEquals", "dynamodb:EnclosingOperation", ["TransactWriteItems"]))],
        "dynamodb:PutItem",
        MUSIC,
        {"dynamodb:enclosingoperation": "TransactWriteItems"},
        True,
    ),
    (
        "EnclosingOperation absent",
        [allow(**when("ForAnyValue:StringEquals", "dynamodb:EnclosingOperation", ["TransactWriteItems"]))],
        "dynamodb:PutItem",
        MUSIC,
        {},
        False,
    ),
    (
        "all conditions must hold",
        [allow(Condition={"StringEquals": {"aws:username": "alice"}, "StringLike": {"dynamodb:Select": "COUNT"}})],
        "dynamodb:Query",
        MUSIC,
        {"dynamodb:select": "ALL"},
        False,
    ),
    # policy variables
    (
        "${aws:username} in a resource",
        [allow(resource="arn:aws:dynamodb:*:*:table/${aws:username}-*")],
        "dynamodb:GetItem",
        MUSIC.replace("Music", "alice-notes"),
        {},
        True,
    ),
    (
        "${aws:username} in a resource, another user",
        [allow(resource="arn:aws:dynamodb:*:*:table/${aws:username}-*")],
        "dynamodb:GetItem",
        MUSIC.replace("Music", "bob-notes"),
        {},
        False,
    ),
    (
        "${aws:PrincipalAccount}",
        [allow(resource="arn:aws:dynamodb:*:${aws:PrincipalAccount}:table/*")],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
    (
        "${aws:PrincipalArn} in a condition",
        [allow(**when("StringEquals", "test:owner", "${aws:PrincipalArn}"))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:owner": ALICE.arn},
        True,
    ),
    (
        "${*} is a literal star",
        [allow(**when("StringLike", "test:k", "a${*}"))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:k": "abc"},
        False,
    ),
    (
        "${*} matches a star",
        [allow(**when("StringLike", "test:k", "a${*}"))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:k": "a*"},
        True,
    ),
    (
        "${?} and ${$}",
        [allow(**when("StringEquals", "test:k", "${?}${$}"))],
        "dynamodb:GetItem",
        MUSIC,
        {"test:k": "?$"},
        True,
    ),
    (
        "unknown variable matches nothing",
        [allow(resource="arn:aws:dynamodb:*:*:table/${aws:nothing}")],
        "dynamodb:GetItem",
        MUSIC,
        {},
        False,
    ),
    (
        "variable with a default",
        [allow(resource="arn:aws:dynamodb:*:*:table/${aws:nothing, 'Music'}")],
        "dynamodb:GetItem",
        MUSIC,
        {},
        True,
    ),
]


@pytest.mark.parametrize(
    ("statements", "action", "resource", "values", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_identity_policy(
    statements: list[dict[str, Any]], action: str, resource: str, values: dict[str, ConditionValue], expected: bool
) -> None:
    assert allowed(statements, action, resource, values) is expected


def test_no_policies_denies_implicitly() -> None:
    message = decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [], None, ACCOUNT)
    assert message == (
        "User: arn:aws:iam::111122223333:user/alice is not authorized to perform: dynamodb:GetItem on resource: "
        "arn:aws:dynamodb:us-east-1:111122223333:table/Music because no identity-based policy allows the "
        "dynamodb:GetItem action"
    )


def test_explicit_identity_deny_message() -> None:
    message = decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [policy(allow(), deny())], None, ACCOUNT)
    assert message == (
        "User: arn:aws:iam::111122223333:user/alice is not authorized to perform: dynamodb:GetItem on resource: "
        "arn:aws:dynamodb:us-east-1:111122223333:table/Music with an explicit deny in an identity-based policy"
    )


def test_deny_in_one_policy_beats_allow_in_another() -> None:
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [policy(allow()), policy(deny())], None, ACCOUNT)


def test_root_user_is_allowed_in_its_account() -> None:
    root = Caller(ACCOUNT, "us-east-1", user_name="root", arn=f"arn:aws:iam::{ACCOUNT}:root", authenticated=True)
    assert decide(root, "dynamodb:DeleteTable", MUSIC, {}, [], None, ACCOUNT) is None


# ---- resource-based policies --------------------------------------------------------------------------------


def resource_policy(*statements: dict[str, Any]) -> Policy:
    return policy(*statements, kind=TABLE)


def test_same_account_resource_policy_naming_the_user_suffices() -> None:
    rp = resource_policy(allow(Principal={"AWS": ALICE.arn}))
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [], rp, ACCOUNT) is None


def test_same_account_resource_policy_naming_the_account_delegates_to_identity() -> None:
    rp = resource_policy(allow(Principal={"AWS": ACCOUNT}))
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [], rp, ACCOUNT) is not None
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [policy(allow())], rp, ACCOUNT) is None


def test_resource_policy_for_another_principal_does_not_apply() -> None:
    rp = resource_policy(deny(Principal={"AWS": f"arn:aws:iam::{ACCOUNT}:user/carol"}))
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [policy(allow())], rp, ACCOUNT) is None


def test_resource_policy_deny_wins_over_identity_allow() -> None:
    rp = resource_policy(deny(Principal={"AWS": f"arn:aws:iam::{ACCOUNT}:root"}))
    message = decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [policy(allow())], rp, ACCOUNT)
    assert message == (
        "User: arn:aws:iam::111122223333:user/alice is not authorized to perform: dynamodb:GetItem on resource: "
        "arn:aws:dynamodb:us-east-1:111122223333:table/Music with an explicit deny in a resource-based policy"
    )


def test_not_principal_deny_applies_to_everyone_else() -> None:
    rp = resource_policy(deny(NotPrincipal={"AWS": f"arn:aws:iam::{ACCOUNT}:user/carol"}))
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [policy(allow())], rp, ACCOUNT) is not None


def test_cross_account_needs_both_allows() -> None:
    grant = resource_policy(allow(Principal={"AWS": BOB_ELSEWHERE.arn}))
    bob_identity = [policy(allow())]
    assert decide(BOB_ELSEWHERE, "dynamodb:GetItem", MUSIC, {}, bob_identity, grant, ACCOUNT) is None
    no_identity = decide(BOB_ELSEWHERE, "dynamodb:GetItem", MUSIC, {}, [], grant, ACCOUNT)
    assert no_identity is not None and no_identity.endswith(
        "because no identity-based policy allows the dynamodb:GetItem action"
    )
    no_resource = decide(BOB_ELSEWHERE, "dynamodb:GetItem", MUSIC, {}, bob_identity, None, ACCOUNT)
    assert no_resource == (
        "User: arn:aws:iam::444455556666:user/bob is not authorized to perform: dynamodb:GetItem on resource: "
        "arn:aws:dynamodb:us-east-1:111122223333:table/Music because no resource-based policy allows the "
        "dynamodb:GetItem action"
    )


def test_cross_account_grant_to_the_account() -> None:
    grant = resource_policy(allow(Principal={"AWS": f"arn:aws:iam::{OTHER}:root"}))
    assert decide(BOB_ELSEWHERE, "dynamodb:GetItem", MUSIC, {}, [policy(allow())], grant, ACCOUNT) is None


def test_public_grant_with_a_condition() -> None:
    grant = resource_policy(allow(Principal="*", **when("StringEquals", "aws:PrincipalAccount", OTHER)))
    assert decide(BOB_ELSEWHERE, "dynamodb:GetItem", MUSIC, {}, [policy(allow())], grant, ACCOUNT) is None
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {}, [], grant, ACCOUNT) is not None


def test_an_assumed_role_session_matches_its_role() -> None:
    session = Caller(ACCOUNT, "us-east-1", arn=f"arn:aws:sts::{ACCOUNT}:assumed-role/Reader/s1", authenticated=True,
                     temporary=True)  # fmt: skip
    grant = resource_policy(allow(Principal={"AWS": f"arn:aws:iam::{ACCOUNT}:role/Reader"}))
    assert decide(session, "dynamodb:GetItem", MUSIC, {}, [], grant, ACCOUNT) is None
    other = resource_policy(allow(Principal={"AWS": f"arn:aws:iam::{ACCOUNT}:role/Writer"}))
    assert decide(session, "dynamodb:GetItem", MUSIC, {}, [], other, ACCOUNT) is not None


def test_variables_are_text_in_the_2008_language() -> None:
    old = parse_policy(
        json.dumps(
            {"Version": "2008-10-17", "Statement": [allow(resource="arn:aws:dynamodb:*:*:table/${aws:username}")]}
        ),
        IDENTITY,
    )
    literal = MUSIC.replace("Music", "${aws:username}")
    assert decide(ALICE, "dynamodb:GetItem", literal, {}, [old], None, ACCOUNT) is None
    assert decide(ALICE, "dynamodb:GetItem", MUSIC.replace("Music", "alice"), {}, [old], None, ACCOUNT) is not None
    unversioned = parse_policy(json.dumps({"Statement": [allow(**when("StringEquals", "test:k", "a*"))]}), IDENTITY)
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {"test:k": "a*"}, [unversioned], None, ACCOUNT) is None
    assert decide(ALICE, "dynamodb:GetItem", MUSIC, {"test:k": "ab"}, [unversioned], None, ACCOUNT) is not None
