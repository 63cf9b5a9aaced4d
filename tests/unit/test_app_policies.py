"""Identity policies attached programmatically, as a test suite does: ``Dynastore.put_policy`` and
``InProcess.put_policy``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynastore.security.caller import Caller
from dynastore.security.identity_policies import IdentityPolicies, IdentityPolicyError
from dynastore.testing import InProcess

DOC = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}]}


def alice(account: str = "000000000000", groups: tuple[str, ...] = ()) -> Caller:
    return Caller(account, "us-east-1", user_name="alice", groups=groups, authenticated=True)


def test_in_process_put_policy() -> None:
    with InProcess(in_memory=True, hook_clients=False) as dyn:
        dyn.put_policy("All", DOC, user="alice")
        dyn.put_policy("Group", '{"Statement": {"Effect": "Deny", "Action": "*", "Resource": "*"}}', group="staff",
                       account_id="111122223333")  # fmt: skip
        assert dyn.app is not None
        policies = dyn.app.engine.policies
        assert len(policies.for_caller(alice())) == 1
        assert len(policies.for_caller(alice("111122223333", ("staff",)))) == 1
        with pytest.raises(IdentityPolicyError):
            dyn.put_policy("Bad", {"Statement": []}, user="alice")
        with pytest.raises(ValueError):
            dyn.put_policy("Both", DOC, user="alice", group="staff")


def test_policies_file_of_a_server_on_disk(tmp_path: Path) -> None:
    with InProcess(data_dir=tmp_path / "data", hook_clients=False) as dyn:
        dyn.put_policy("All", DOC, user="alice")
    assert len(IdentityPolicies(tmp_path / "data" / "policies.json").for_caller(alice())) == 1
