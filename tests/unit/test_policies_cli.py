"""``dynastore policies put|list|remove`` against a data directory."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from dynastore.cli import main
from dynastore.security.caller import Caller
from dynastore.security.identity_policies import IdentityPolicies

DOC = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}]}


def run(*argv: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(["policies", *argv])
    return int(info.value.code or 0)


def test_put_list_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(DOC, indent=2))
    data = str(tmp_path / "data")
    assert run("put", "--data-dir", data, "--account-id", "111122223333", "--group", "staff", "--name", "Read",
               "--file", str(doc)) == 0  # fmt: skip
    path = tmp_path / "data" / "policies.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    alice = Caller("111122223333", "us-east-1", user_name="alice", groups=("staff",), authenticated=True)
    assert len(IdentityPolicies(path).for_caller(alice)) == 1
    assert run("list", "--data-dir", data, "--account-id", "111122223333") == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert listed == [{"account": "111122223333", "group": "staff", "name": "Read", "document": DOC}]
    assert run("remove", "--data-dir", data, "--account-id", "111122223333", "--group", "staff", "--name", "Read") == 0
    assert IdentityPolicies(path).for_caller(alice) == ()
    assert run("remove", "--data-dir", data, "--group", "staff", "--name", "Read") == 1
    assert capsys.readouterr().err == "dynastore: group staff has no policy Read\n"


def test_invalid_document_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({**DOC, "Statement": [{**DOC["Statement"][0], "Principal": "*"}]}))  # type: ignore[dict-item]
    policies = tmp_path / "p.json"
    assert run("put", "--policies-file", str(policies), "--user", "alice", "--name", "X", "--file", str(doc)) == 1
    assert (
        capsys.readouterr().err
        == "dynastore: Invalid policy document: Policy document should not specify a principal.\n"
    )
    assert not policies.exists()


def test_serve_takes_the_policies_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dynastore.cli import serve_config
    from dynastore.config import policies_path

    assert serve_config(["--policies-file", str(tmp_path / "p.json")]).policies_file == tmp_path / "p.json"
    monkeypatch.setenv("DYNASTORE_POLICIES_FILE", str(tmp_path / "env.json"))
    assert serve_config([]).policies_file == tmp_path / "env.json"
    monkeypatch.delenv("DYNASTORE_POLICIES_FILE")
    assert policies_path(serve_config(["--data-dir", str(tmp_path)])) == tmp_path / "policies.json"
    assert policies_path(serve_config(["--in-memory"])) is None


def test_put_warns_about_a_single_valued_operator_on_a_multivalued_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    statements = [
        {"Sid": "OwnItems", "Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*",
         "Condition": {"StringEquals": {"dynamodb:LeadingKeys": "${aws:userid}"},
                       "ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "v"]}}},
        {"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*",
         "Condition": {"StringLikeIfExists": {"dynamodb:Attributes": "secret*"},
                       "Null": {"dynamodb:LeadingKeys": "true"}, "StringEquals": {"dynamodb:Select": "COUNT"}}},
    ]  # fmt: skip
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"Version": "2012-10-17", "Statement": statements}))
    policies = tmp_path / "p.json"
    assert run("put", "--policies-file", str(policies), "--user", "alice", "--name", "X", "--file", str(doc)) == 0
    assert capsys.readouterr().err == (
        'dynastore: warning: statement "OwnItems": dynamodb:LeadingKeys is a multivalued condition key: StringEquals '
        "needs a set operator (ForAllValues:StringEquals or ForAnyValue:StringEquals); as written it holds in an "
        "Allow only when every value of the request satisfies it, and in a Deny when any value does\n"
        "dynastore: warning: statement 2: dynamodb:Attributes is a multivalued condition key: StringLikeIfExists "
        "needs a set operator (ForAllValues:StringLikeIfExists or ForAnyValue:StringLikeIfExists); as written it "
        "holds in an Allow only when every value of the request satisfies it, and in a Deny when any value does\n"
    )
    alice = Caller("000000000000", "us-east-1", user_name="alice", authenticated=True)
    assert len(IdentityPolicies(policies).for_caller(alice)) == 1  # attached all the same, as IAM attaches it
    doc.write_text(json.dumps(DOC))
    assert run("put", "--policies-file", str(policies), "--user", "alice", "--name", "Y", "--file", str(doc)) == 0
    assert capsys.readouterr().err == ""
