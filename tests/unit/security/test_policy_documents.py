"""Policy documents refused with DynamoDB's (and IAM's) texts, and accepted ones compiled."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynastore.security.policy_documents import IDENTITY, STREAM, TABLE, PolicyDocumentError, compiled, parse_policy

TABLE_ARN = "arn:aws:dynamodb:us-east-1:111122223333:table/Music"
STREAM_ARN = TABLE_ARN + "/stream/2026-01-01T00:00:00.000"
ALICE = "arn:aws:iam::111122223333:user/alice"


def doc(*statements: Any, **top: Any) -> str:
    return json.dumps({"Version": "2012-10-17", **top, "Statement": list(statements)})


def statement(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": TABLE_ARN}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def granted(**fields: Any) -> dict[str, Any]:
    return statement(Principal={"AWS": ALICE}, **fields)


def refusal(text: str, kind: str = TABLE) -> str:
    with pytest.raises(PolicyDocumentError) as info:
        parse_policy(text, kind, TABLE_ARN)
    return info.value.detail


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("{not json", "This policy contains invalid Json"),
        ("", "This policy contains invalid Json"),
        ("[]", "This policy contains invalid Json"),
        ("null", "This text appears not to be a policy"),
        ("{}", "Missing required field Statement"),
        (doc(), "Could not parse the policy: Statement is empty!"),
        (doc({}), "Missing required field Effect"),
        (doc(granted(Resource=None)), "Missing required field Resource"),
        (doc(granted(Action=None)), "Missing required field Action"),
        (doc(granted(), Version="2013-01-01"), "The policy must contain a valid version string"),
        (
            doc(granted(Sid="a"), granted(Sid="a", Action="dynamodb:PutItem")),
            "The Statement Ids in the policy are not unique",
        ),
        (doc(granted(Effect="Permit")), "Invalid effect: Permit"),
        (doc(granted(NotAction="dynamodb:PutItem")), "Statement cannot contain both Action and NotAction"),
        (
            doc(granted(Action=["dynamodb:GetRecords", "dynamodb:DescribeStream"])),
            'The following action names are invalid: "dynamodb:GetRecords", "dynamodb:DescribeStream"',
        ),
        (doc(granted(Action="s3:GetObject")), 'The following action names are invalid: "s3:GetObject"'),
        (doc(granted(Action="GetItem")), 'Action GetItem must be in the form service:action or "*"'),
        (
            doc(granted(Resource=STREAM_ARN)),
            f'The relative-id "table/Music/stream/2026-01-01T00:00:00.000" is invalid for ARN "{TABLE_ARN}"',
        ),
        (doc(granted(Resource="Music")), 'Resource Music must be in ARN format or "*".'),
        (doc(statement()), "Missing required field Principal"),
        (doc(statement(Principal="111122223333")), "Invalid principal in policy document."),
        (doc(statement(Principal={"AWS": "alice"})), "Invalid principal in policy document."),
        (doc(granted(Condition={"StringEqualz": {"aws:username": "a"}})), "Invalid Condition type : StringEqualz"),
        (
            doc(granted(Condition={"StringEquals": {"aws:username": {"a": 1}}})),
            "Invalid value for condition StringEquals on key aws:username",
        ),
        (doc(granted(Extra=1)), "Policy statement contains an unsupported element: Extra"),
    ],
)
def test_table_policy_refusals(text: str, detail: str) -> None:
    assert refusal(text) == detail


def test_unbounded_public_grant_is_refused_whole() -> None:
    with pytest.raises(PolicyDocumentError) as info:
        parse_policy(doc(statement(Principal="*")), TABLE)
    assert info.value.whole
    assert info.value.detail == (
        "Resource-based policy grants unbounded access in one or more elements. "
        "Please revise the policy to ensure least-privilege form of access"
    )
    with pytest.raises(PolicyDocumentError):
        parse_policy(doc(statement(Principal={"AWS": "*"})), TABLE)


def test_public_statements_that_are_bounded_pass() -> None:
    (denial,) = parse_policy(doc(statement(Principal="*", Effect="Deny")), TABLE).statements
    assert denial.deny
    assert denial.principals is not None and denial.principals.anyone
    bounded = statement(Principal="*", Condition={"StringEquals": {"aws:PrincipalAccount": "1"}})
    (grant,) = parse_policy(doc(bounded), TABLE).statements
    assert not grant.deny
    assert grant.principals is not None and grant.principals.anyone
    assert [c.key for c in grant.conditions] == ["aws:principalaccount"]


def test_stream_policy_takes_stream_actions_and_arns() -> None:
    parse_policy(doc(granted(Action=["dynamodb:GetRecords", "dynamodb:DescribeStream"], Resource=STREAM_ARN)), STREAM)
    assert (
        refusal(doc(granted(Resource=STREAM_ARN)), STREAM)
        == 'The following action names are invalid: "dynamodb:GetItem"'
    )
    assert refusal(doc(granted(Action="dynamodb:GetRecords")), STREAM).startswith('The relative-id "table/Music" is')


def test_identity_policy_has_no_principal_and_takes_any_service() -> None:
    assert refusal(doc(granted()), IDENTITY) == "Policy document should not specify a principal."
    parse_policy(doc(statement(Action="s3:GetObject", Resource="*")), IDENTITY)


def test_statement_object_and_old_version_accepted() -> None:
    text = json.dumps({"Version": "2008-10-17", "Statement": statement()})
    policy = parse_policy(text, IDENTITY)
    assert len(policy.statements) == 1
    assert policy.text == json.dumps(json.loads(text), separators=(",", ":"))


def test_compiled_documents_are_shared() -> None:
    text = doc(statement(Resource="*"))
    assert compiled(text, IDENTITY) is compiled(text, IDENTITY)
