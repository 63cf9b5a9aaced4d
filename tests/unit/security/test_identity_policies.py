"""The identity policy store: users' and groups' policies, the file (0600) and its reload."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from dynastore.security.caller import Caller
from dynastore.security.identity_policies import GROUP, USER, IdentityPolicies, IdentityPolicyError

ACCOUNT = "111122223333"
ALICE = Caller(ACCOUNT, "us-east-1", user_name="alice", groups=("readers",), authenticated=True)
READ = json.dumps(
    {"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "dynamodb:Get*", "Resource": "*"}}
)


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_user_and_group_policies_apply_to_the_caller(tmp_path: Path) -> None:
    store = IdentityPolicies(tmp_path / "policies.json")
    store.put(ACCOUNT, USER, "alice", "Own", READ)
    store.put(ACCOUNT, GROUP, "readers", "Group", READ.replace("Get*", "Query"))
    store.put(ACCOUNT, GROUP, "writers", "Other", READ.replace("Get*", "PutItem"))
    store.put("999999999999", USER, "alice", "Elsewhere", READ)
    policies = store.for_caller(ALICE)
    assert sorted(p.statements[0].exact_actions or {"pattern"} for p in policies) == sorted(
        [{"pattern"}, {"dynamodb:query"}]
    )


def test_file_is_private_and_survives(tmp_path: Path) -> None:
    path = tmp_path / "policies.json"
    IdentityPolicies(path).put(ACCOUNT, USER, "alice", "Own", READ)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(IdentityPolicies(path).for_caller(ALICE)) == 1
    assert [e[:4] for e in IdentityPolicies(path).entries()] == [(ACCOUNT, USER, "alice", "Own")]


def test_changes_by_another_writer_are_seen_after_the_interval(tmp_path: Path) -> None:
    path = tmp_path / "policies.json"
    ticks = Ticks()
    server = IdentityPolicies(path, monotonic=ticks)
    assert server.for_caller(ALICE) == ()
    IdentityPolicies(path).put(ACCOUNT, USER, "alice", "Own", READ)  # e.g. `dynastore policies put`
    assert server.for_caller(ALICE) == ()  # the file is looked at no more than once a second
    ticks.now = 1.5
    assert len(server.for_caller(ALICE)) == 1
    assert IdentityPolicies(path).remove(ACCOUNT, USER, "alice", "Own")
    ticks.now = 3.0
    assert server.for_caller(ALICE) == ()


def test_remove_of_an_unknown_policy(tmp_path: Path) -> None:
    assert not IdentityPolicies(tmp_path / "p.json").remove(ACCOUNT, USER, "alice", "Nope")


def test_in_memory_store_without_a_file() -> None:
    store = IdentityPolicies(None)
    store.put(ACCOUNT, USER, "alice", "Own", READ)
    assert len(store.for_caller(ALICE)) == 1


def test_invalid_document_refused() -> None:
    with pytest.raises(IdentityPolicyError) as info:
        IdentityPolicies(None).put(ACCOUNT, USER, "alice", "Bad", '{"Statement": []}')
    assert str(info.value) == "Invalid policy document: Could not parse the policy: Statement is empty!"


def test_size_quota_of_a_user_counts_all_its_policies_without_whitespace() -> None:
    store = IdentityPolicies(None)
    actions = [f"dynamodb:Action{i:04d}" for i in range(60)]  # about 1,400 characters each without whitespace
    big = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]},
                     indent=8)  # fmt: skip
    store.put(ACCOUNT, USER, "alice", "One", big)
    with pytest.raises(IdentityPolicyError) as info:
        store.put(ACCOUNT, USER, "alice", "Two", big)
    assert str(info.value) == "Maximum policy size of 2048 bytes exceeded for user alice"
    store.put(ACCOUNT, GROUP, "readers", "One", big)
    store.put(ACCOUNT, GROUP, "readers", "Two", big)  # a group's quota is 5,120


def test_unreadable_file_keeps_the_policies_last_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "policies.json"
    ticks = Ticks()
    store = IdentityPolicies(path, monotonic=ticks)
    store.put(ACCOUNT, USER, "alice", "Own", READ)
    path.write_text("{broken")
    ticks.now = 2.0
    assert len(store.for_caller(ALICE)) == 1
    assert "not loaded" in capsys.readouterr().err


def test_policy_names_as_iam_takes_them() -> None:
    store = IdentityPolicies(None)
    store.put(ACCOUNT, USER, "alice", "Read.Music-2026@team_a", READ)
    with pytest.raises(IdentityPolicyError) as info:
        store.put(ACCOUNT, USER, "alice", "read music", READ)
    assert str(info.value) == (
        "1 validation error detected: Value 'read music' at 'policyName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [\\w+=,.@-]+"
    )
