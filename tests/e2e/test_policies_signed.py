"""IAM-style policies enforced end to end: a server with ``--auth sigv4``, users made with ``dynastore users``,
identity policies attached with ``dynastore policies``, and boto3 clients signing with each user's own key.

The cases are a table: who calls, what, and the answer (allowed, or AccessDeniedException with AWS's message).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import BOTO_CONFIG
from tests.e2e.server_process import ServerProcess

OWNER = "111111111111"
OTHER = "222222222222"
REGION = "us-east-1"
MUSIC = f"arn:aws:dynamodb:{REGION}:{OWNER}:table/Music"
TENANTS = f"arn:aws:dynamodb:{REGION}:{OWNER}:table/Tenants"
SHARED = f"arn:aws:dynamodb:{REGION}:{OWNER}:table/Shared"


def _document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _allow(actions: Any, resources: Any, **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": actions, "Resource": resources, **extra}


# Each user's identity policy (attached with `dynastore policies put`).
POLICIES: dict[str, str] = {
    "builder": _document(_allow("dynamodb:*", "*")),
    "reader": _document(_allow(["dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan"], f"{MUSIC}*")),
    "careful": _document(
        _allow("dynamodb:*", MUSIC),
        {"Effect": "Deny", "Action": "dynamodb:Delete*", "Resource": MUSIC},
    ),
    "wild": _document(_allow("dynamodb:Get?tem", "arn:aws:dynamodb:*:*:table/Mu*")),
    "tenant": _document(
        _allow(
            ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"],
            TENANTS,
            Condition={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["${aws:userid}#*"]}},
        )
    ),
    "projector": _document(
        _allow(
            ["dynamodb:GetItem", "dynamodb:UpdateItem"],
            MUSIC,
            Condition={
                "ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "artist", "song", "plays"]},
                "StringEqualsIfExists": {"dynamodb:Select": "SPECIFIC_ATTRIBUTES"},
            },
        )
    ),
    # AWS's usual fine-grained form, granting PartiQL too: every statement must name the user's own items only.
    "partiql_tenant": _document(
        _allow(
            [
                "dynamodb:GetItem",
                "dynamodb:PartiQLSelect",
                "dynamodb:PartiQLInsert",
                "dynamodb:PartiQLUpdate",
                "dynamodb:PartiQLDelete",
            ],
            TENANTS,
            Condition={"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:userid}"]}},
        )  # fmt: skip
    ),
    # A single-valued operator on the multivalued key (IAM requires a set operator): fails closed.
    "plain_tenant": _document(
        _allow(
            ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem"],
            TENANTS,
            Condition={"StringEquals": {"dynamodb:LeadingKeys": "${aws:userid}"}},
        )
    ),
    "outsider": _document(_allow("dynamodb:GetItem", SHARED)),
    "stranger": _document(_allow("dynamodb:*", "*")),  # everything, in its own account (OTHER)
}
IN_OTHER_ACCOUNT = {"outsider", "stranger"}


class Users:
    """Each user's access key, made with the users CLI on the server's credentials store."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.keys: dict[str, dict[str, str]] = {}

    def add(self, name: str, account: str) -> None:
        shown = _cli("users", "add", name, "--account", account, "--users-file", str(self.store), "--json")
        self.keys[name] = json.loads(shown)


def _cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Users]]:
    folder = tmp_path_factory.mktemp("policies")
    users = Users(folder / "credentials.json")
    policies = folder / "policies.json"
    for name in POLICIES:
        account = OTHER if name in IN_OTHER_ACCOUNT else OWNER
        users.add(name, account)
        document = folder / f"{name}.json"
        document.write_text(POLICIES[name])
        _cli("policies", "put", "--policies-file", str(policies), "--account-id", account, "--user", name,
             "--name", "main", "--file", str(document))  # fmt: skip
    server = ServerProcess(
        "--auth", "sigv4", "--users-file", str(users.store), "--policies-file", str(policies),
        env={"DYNASTORE_ACCOUNT_ID": OWNER, "DYNASTORE_REGION": REGION},
    )  # fmt: skip
    try:
        builder = _client(server, users, "builder")
        for table in ("Music", "Tenants", "Shared"):
            builder.create_table(
                TableName=table,
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
        builder.put_item(TableName="Music", Item={"pk": {"S": "a"}, "artist": {"S": "x"}, "secret": {"S": "s"}})
        builder.put_item(TableName="Shared", Item={"pk": {"S": "s"}})
        yield server, users
    finally:
        server.stop()


def _client(server: ServerProcess, users: Users, name: str) -> Any:
    key = users.keys[name]
    return boto3.client(
        "dynamodb",
        endpoint_url=server.url,
        region_name=REGION,
        aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key=key["SecretAccessKey"],
        config=BOTO_CONFIG,
    )


def _denied(call: Any) -> str:
    with pytest.raises(ClientError) as refused:
        call()
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    return str(refused.value.response["Error"]["Message"])


def _user_arn(name: str, account: str = OWNER) -> str:
    return f"arn:aws:iam::{account}:user/{name}"


def test_an_allowed_action_runs_and_one_no_policy_allows_is_denied_with_awss_message(world: Any) -> None:
    server, users = world
    reader = _client(server, users, "reader")
    assert reader.get_item(TableName="Music", Key={"pk": {"S": "a"}})["Item"]["artist"] == {"S": "x"}
    message = _denied(lambda: reader.put_item(TableName="Music", Item={"pk": {"S": "b"}}))
    assert message == (
        f"User: {_user_arn('reader')} is not authorized to perform: dynamodb:PutItem on resource: {MUSIC} "
        "because no identity-based policy allows the dynamodb:PutItem action"
    )
    assert "Item" not in _client(server, users, "builder").get_item(TableName="Music", Key={"pk": {"S": "b"}})


def test_a_table_arn_cut_short_is_refused_by_the_operation_not_by_a_crash(world: Any) -> None:
    """A TableName that begins like a DynamoDB ARN but has no account field: authorized in the caller's own
    account (the resource names none), then refused by the operation with its ARN text."""
    server, users = world
    builder = _client(server, users, "builder")
    with pytest.raises(ClientError) as refused:
        builder.get_item(TableName="arn:aws:dynamodb:x", Key={"pk": {"S": "a"}})
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert refused.value.response["Error"]["Message"] == (
        "Invalid TableArn: Invalid ResourceArn provided as input arn:aws:dynamodb:x"
    )


def test_an_explicit_deny_wins_over_an_allow(world: Any) -> None:
    server, users = world
    careful = _client(server, users, "careful")
    careful.put_item(TableName="Music", Item={"pk": {"S": "c"}})
    message = _denied(lambda: careful.delete_item(TableName="Music", Key={"pk": {"S": "c"}}))
    assert message == (
        f"User: {_user_arn('careful')} is not authorized to perform: dynamodb:DeleteItem on resource: {MUSIC} "
        "with an explicit deny in an identity-based policy"
    )
    assert "Item" in careful.get_item(TableName="Music", Key={"pk": {"S": "c"}})


def test_wildcards_in_actions_and_resources(world: Any) -> None:
    server, users = world
    wild = _client(server, users, "wild")
    assert "Item" in wild.get_item(TableName="Music", Key={"pk": {"S": "a"}})
    _denied(lambda: wild.get_item(TableName="Tenants", Key={"pk": {"S": "a"}}))  # Mu* does not cover Tenants
    _denied(lambda: wild.query(  # Get?tem is not Query
        TableName="Music", KeyConditionExpression="pk = :a", ExpressionAttributeValues={":a": {"S": "a"}}
    ))  # fmt: skip


def test_leading_keys_keep_a_user_to_items_under_its_own_user_id(world: Any) -> None:
    server, users = world
    tenant = _client(server, users, "tenant")
    own = users.keys["tenant"]["UserId"] + "#profile"
    tenant.put_item(TableName="Tenants", Item={"pk": {"S": own}, "v": {"N": "1"}})
    assert tenant.get_item(TableName="Tenants", Key={"pk": {"S": own}})["Item"]["v"] == {"N": "1"}
    count = tenant.query(
        TableName="Tenants", KeyConditionExpression="pk = :k", ExpressionAttributeValues={":k": {"S": own}}
    )["Count"]
    assert count == 1
    other = users.keys["reader"]["UserId"] + "#profile"
    message = _denied(lambda: tenant.put_item(TableName="Tenants", Item={"pk": {"S": other}}))
    assert message == (
        f"User: {_user_arn('tenant')} is not authorized to perform: dynamodb:PutItem on resource: {TENANTS} "
        "because no identity-based policy allows the dynamodb:PutItem action"
    )
    _denied(lambda: tenant.get_item(TableName="Tenants", Key={"pk": {"S": other}}))


def test_attributes_limit_what_a_projection_and_an_update_may_name(world: Any) -> None:
    server, users = world
    projector = _client(server, users, "projector")
    got = (
        projector.get_item(
            TableName="Music", Key={"pk": {"S": "a"}}, ProjectionExpression="artist", Select="SPECIFIC_ATTRIBUTES"
        )
        if False
        else projector.get_item(TableName="Music", Key={"pk": {"S": "a"}}, ProjectionExpression="artist")
    )
    assert got["Item"] == {"artist": {"S": "x"}}
    _denied(lambda: projector.get_item(TableName="Music", Key={"pk": {"S": "a"}}))  # every attribute: not allowed
    _denied(lambda: projector.get_item(TableName="Music", Key={"pk": {"S": "a"}}, ProjectionExpression="secret"))
    projector.update_item(
        TableName="Music", Key={"pk": {"S": "a"}}, UpdateExpression="SET plays = :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )  # fmt: skip
    _denied(lambda: projector.update_item(
        TableName="Music", Key={"pk": {"S": "a"}}, UpdateExpression="SET secret = :s",
        ExpressionAttributeValues={":s": {"S": "changed"}},
    ))  # fmt: skip
    item = _client(server, users, "builder").get_item(TableName="Music", Key={"pk": {"S": "a"}})["Item"]
    assert item["plays"] == {"N": "1"} and item["secret"] == {"S": "s"}


def test_another_account_needs_the_tables_resource_policy_too(world: Any) -> None:
    server, users = world
    outsider = _client(server, users, "outsider")
    message = _denied(lambda: outsider.get_item(TableName=SHARED, Key={"pk": {"S": "s"}}))
    assert message.startswith(f"User: {_user_arn('outsider', OTHER)} is not authorized to perform: dynamodb:GetItem")
    builder = _client(server, users, "builder")
    builder.put_resource_policy(
        ResourceArn=SHARED,
        Policy=_document(
            {
                "Effect": "Allow",
                "Principal": {"AWS": _user_arn("outsider", OTHER)},
                "Action": "dynamodb:GetItem",
                "Resource": SHARED,
            }  # fmt: skip
        ),
    )
    assert outsider.get_item(TableName=SHARED, Key={"pk": {"S": "s"}})["Item"] == {"pk": {"S": "s"}}
    _denied(lambda: outsider.get_item(TableName=MUSIC, Key={"pk": {"S": "a"}}))  # no policy of Music's allows it
    # Its own account's namespace has no table of that name: the ARN, not the name, reaches the owner's table.
    with pytest.raises(ClientError) as missing:
        outsider.describe_table(TableName="Shared")
    assert missing.value.response["Error"]["Code"] in {"AccessDeniedException", "ResourceNotFoundException"}


def test_a_request_signed_with_a_wrong_secret_never_reaches_the_policies(world: Any) -> None:
    server, users = world
    key = users.keys["builder"]
    forged = boto3.client(
        "dynamodb", endpoint_url=server.url, region_name=REGION, aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key="x" * 40, config=BOTO_CONFIG,
    )  # fmt: skip
    with pytest.raises(ClientError) as refused:
        forged.list_tables()
    assert refused.value.response["Error"]["Code"] == "InvalidSignatureException"


def test_tables_live_per_account_and_region(world: Any) -> None:
    server, users = world
    stranger = _client(server, users, "stranger")
    assert stranger.list_tables()["TableNames"] == []  # the owner's tables are not the other account's
    stranger.create_table(
        TableName="Music",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    stranger.put_item(TableName="Music", Item={"pk": {"S": "a"}, "mine": {"S": "yes"}})
    own = stranger.describe_table(TableName="Music")["Table"]["TableArn"]
    assert own == f"arn:aws:dynamodb:{REGION}:{OTHER}:table/Music"
    builder = _client(server, users, "builder")
    assert "mine" not in builder.get_item(TableName="Music", Key={"pk": {"S": "a"}})["Item"]
    assert sorted(builder.list_tables()["TableNames"]) == ["Music", "Shared", "Tenants"]
    key = users.keys["builder"]
    elsewhere = boto3.client(
        "dynamodb", endpoint_url=server.url, region_name="eu-west-2", aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key=key["SecretAccessKey"], config=BOTO_CONFIG,
    )  # fmt: skip
    assert elsewhere.list_tables()["TableNames"] == []  # the same account in another region
    with pytest.raises(ClientError) as missing:
        elsewhere.describe_table(TableName="Music")
    assert missing.value.response["Error"] == {
        "Code": "ResourceNotFoundException",
        "Message": "Requested resource not found: Table: Music not found",
    }


def _partiql_denial(user: str, action: str) -> str:
    return (
        f"User: {_user_arn(user)} is not authorized to perform: {action} on resource: {TENANTS} "
        f"because no identity-based policy allows the {action} action"
    )


def _seed_tenants(server: ServerProcess, users: Users, *owners: str) -> dict[str, str]:
    """Each owner's item in Tenants (keyed by its user id), as the builder writes it; the owners' keys."""
    builder = _client(server, users, "builder")
    keys = {}
    for owner in owners:
        keys[owner] = users.keys[owner]["UserId"]
        builder.put_item(TableName="Tenants", Item={"pk": {"S": keys[owner]}, "v": {"S": f"{owner}'s"}})
    return keys


def _value(server: ServerProcess, users: Users, key: str) -> Any:
    item = _client(server, users, "builder").get_item(TableName="Tenants", Key={"pk": {"S": key}}).get("Item")
    return None if item is None else item["v"]["S"]


def test_partiql_statements_are_held_to_the_leading_keys_of_what_they_do(world: Any) -> None:
    server, users = world
    keys = _seed_tenants(server, users, "partiql_tenant", "reader")
    own, other = keys["partiql_tenant"], keys["reader"]
    tenant = _client(server, users, "partiql_tenant")
    _denied(lambda: tenant.get_item(TableName="Tenants", Key={"pk": {"S": other}}))
    select, update = "dynamodb:PartiQLSelect", "dynamodb:PartiQLUpdate"
    reads = [
        f"SELECT * FROM Tenants WHERE pk = '{other}'",
        f"SELECT v FROM Tenants WHERE pk IN ['{own}', '{other}']",
        f"SELECT * FROM Tenants WHERE pk = '{own}' OR pk = '{other}'",
        "SELECT * FROM Tenants",  # a scan: its keys cannot be stated
        f"SELECT * FROM Tenants WHERE v = '{own}'",
        f"SELECT * FROM Tenants WHERE pk <> '{own}'",
    ]
    for statement in reads:
        message = _denied(lambda statement=statement: tenant.execute_statement(Statement=statement))
        assert message == _partiql_denial("partiql_tenant", select), statement
    message = _denied(lambda: tenant.execute_statement(Statement="SELECT * FROM Tenants WHERE pk = ?",
                                                       Parameters=[{"S": other}]))  # fmt: skip
    assert message == _partiql_denial("partiql_tenant", select)
    writes = [
        (update, f"UPDATE Tenants SET v = 'overwritten' WHERE pk = '{other}'"),
        (update, f"UPDATE Tenants SET v = 'overwritten' WHERE pk = '{other}' AND v = 'reader''s'"),
        ("dynamodb:PartiQLDelete", f"DELETE FROM Tenants WHERE pk = '{other}'"),
        ("dynamodb:PartiQLInsert", f"INSERT INTO Tenants VALUE {{'pk': '{other}#2', 'v': 'planted'}}"),
    ]
    for action, statement in writes:
        message = _denied(lambda statement=statement: tenant.execute_statement(Statement=statement))
        assert message == _partiql_denial("partiql_tenant", action), statement
    message = _denied(lambda: tenant.batch_execute_statement(Statements=[
        {"Statement": f"SELECT * FROM Tenants WHERE pk = '{own}'"},
        {"Statement": f"SELECT * FROM Tenants WHERE pk = '{other}'"},
    ]))  # fmt: skip
    assert message == _partiql_denial("partiql_tenant", select)
    _denied(lambda: tenant.batch_execute_statement(Statements=[
        {"Statement": f"UPDATE Tenants SET v = 'overwritten' WHERE pk = '{own}'"},
        {"Statement": "UPDATE Tenants SET v = 'overwritten' WHERE pk = ?", "Parameters": [{"S": other}]},
    ]))  # fmt: skip
    message = _denied(lambda: tenant.execute_transaction(TransactStatements=[
        {"Statement": f"UPDATE Tenants SET v = 'overwritten' WHERE pk = '{own}'"},
        {"Statement": f"UPDATE Tenants SET v = 'overwritten' WHERE pk = '{other}'"},
    ]))  # fmt: skip
    assert message == _partiql_denial("partiql_tenant", update)
    _denied(lambda: tenant.execute_transaction(TransactStatements=[
        {"Statement": f"SELECT * FROM Tenants WHERE pk = '{other}'"},
    ]))  # fmt: skip
    assert _value(server, users, other) == "reader's"  # nothing of the other user's was read or changed
    assert _value(server, users, own) == "partiql_tenant's"


def test_partiql_statements_on_the_users_own_items_run(world: Any) -> None:
    server, users = world
    own = _seed_tenants(server, users, "partiql_tenant")["partiql_tenant"]
    tenant = _client(server, users, "partiql_tenant")
    found = tenant.execute_statement(Statement=f"SELECT v FROM Tenants WHERE pk = '{own}'")["Items"]
    assert found == [{"v": {"S": "partiql_tenant's"}}]
    tenant.execute_statement(Statement="UPDATE Tenants SET v = ? WHERE pk = ?",
                             Parameters=[{"S": "mine"}, {"S": own}])  # fmt: skip
    got = tenant.batch_execute_statement(Statements=[{"Statement": f"SELECT * FROM Tenants WHERE pk = '{own}'"}])
    assert got["Responses"][0]["Item"] == {"pk": {"S": own}, "v": {"S": "mine"}}
    tenant.execute_transaction(TransactStatements=[
        {"Statement": f"UPDATE Tenants SET v = 'again' WHERE pk = '{own}'"},
    ])  # fmt: skip
    assert _value(server, users, own) == "again"


def test_a_single_valued_operator_on_leading_keys_fails_closed_for_batches(world: Any) -> None:
    server, users = world
    keys = _seed_tenants(server, users, "plain_tenant", "careful")
    own, other = keys["plain_tenant"], keys["careful"]
    plain = _client(server, users, "plain_tenant")
    both = [{"pk": {"S": own}}, {"pk": {"S": other}}]
    message = _denied(lambda: plain.batch_get_item(RequestItems={"Tenants": {"Keys": both}}))
    assert message == _partiql_denial("plain_tenant", "dynamodb:BatchGetItem")
    message = _denied(lambda: plain.batch_write_item(RequestItems={"Tenants": [
        {"PutRequest": {"Item": {"pk": {"S": own}, "v": {"S": "overwritten"}}}},
        {"PutRequest": {"Item": {"pk": {"S": other}, "v": {"S": "overwritten"}}}},
    ]}))  # fmt: skip
    assert message == _partiql_denial("plain_tenant", "dynamodb:BatchWriteItem")
    _denied(lambda: plain.batch_write_item(RequestItems={"Tenants": [{"DeleteRequest": {"Key": both[1]}}]}))
    assert _value(server, users, other) == "careful's" and _value(server, users, own) == "plain_tenant's"
    got = plain.batch_get_item(RequestItems={"Tenants": {"Keys": both[:1]}})  # its own key alone: allowed
    assert got["Responses"]["Tenants"] == [{"pk": {"S": own}, "v": {"S": "plain_tenant's"}}]
    plain.batch_write_item(RequestItems={"Tenants": [{"PutRequest": {"Item": {"pk": {"S": own}, "v": {"S": "x"}}}}]})
    assert _value(server, users, own) == "x"
