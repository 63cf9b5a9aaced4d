"""Identity policies attached programmatically, as a test suite does: ``Dynastore.put_policy`` and
``InProcess.put_policy``."""

from __future__ import annotations

from pathlib import Path

import pytest
from botocore.exceptions import ClientError

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
        policies = dyn.app.services.policies
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


DENY_LIST_TABLES = {"Statement": [{"Effect": "Deny", "Action": "dynamodb:ListTables", "Resource": "*"}]}


def test_a_policy_change_reaches_a_remembered_region_without_tables() -> None:
    key = {"aws_access_key_id": "AKIAREMEMBEREDREGION", "aws_secret_access_key": "remembered-region-secret"}
    with InProcess(in_memory=True, auth="sigv4", admin_access_key_id=key["aws_access_key_id"],
                   admin_secret_access_key=key["aws_secret_access_key"], hook_clients=False) as dyn:  # fmt: skip
        elsewhere = dyn.client(region_name="ap-south-2")  # no table there: its context is only remembered
        assert elsewhere.list_tables()["TableNames"] == []
        dyn.put_policy("NoListing", DENY_LIST_TABLES, user="admin")
        with pytest.raises(ClientError) as refused:
            elsewhere.list_tables()
        assert refused.value.response["Error"] == {
            "Code": "AccessDeniedException",
            "Message": "User: arn:aws:iam::000000000000:user/admin is not authorized to perform: dynamodb:ListTables "
            "on resource: * with an explicit deny in an identity-based policy",
        }
