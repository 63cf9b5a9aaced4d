"""Per-request authorization: the checks each operation maps its request to (api/authorization.py), evaluated by
security/authorization.py, driven through ``dispatch.bind`` with a server in ``auth sigv4`` mode and constructed
authenticated callers (the signature itself is authentication's business)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dynastore.api.authorization import checks_for
from dynastore.app import request_services
from dynastore.engine.context import Context
from dynastore.errors import AccessDeniedException, PolicyNotFoundException, ValidationException
from dynastore.protocol import dispatch
from dynastore.security.caller import Caller
from dynastore.security.identity_policies import GROUP, USER
from tests.unit.api.operations import ANYONE, make_ctx

ACCOUNT = "000000000000"
TABLE = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/"
ALICE = Caller(
    ACCOUNT,
    "us-east-1",
    user_name="alice",
    user_id="AIDAALICE",
    arn=f"arn:aws:iam::{ACCOUNT}:user/alice",
    groups=("staff",),
    authenticated=True,
)


def denial(action: str, resource: str, why: str = "because no identity-based policy allows the {action} action") -> str:
    return f"User: {ALICE.arn} is not authorized to perform: {action} on resource: {resource} " + why.format(
        action=action
    )


class Server:
    """A dynastore with authentication on: ``admin`` requests skip authorization (the anonymous caller), ``as_alice``
    ones are authorized."""

    def __init__(self, **config: Any) -> None:
        self.ctx: Context
        self.ctx, _, self.clock = make_ctx(auth="sigv4", **config)
        self.services = request_services(self.ctx.config)
        self.ops = dispatch.bind(self.ctx, self.services) | dispatch.bind_streams(self.ctx, self.services)

    def admin(self, op: str, **body: Any) -> Any:
        return _decoded(self.ops[op].run(body, ANYONE))

    def alice(self, op: str, **body: Any) -> Any:
        return _decoded(self.ops[op].run(body, ALICE))

    def refused(self, op: str, **body: Any) -> str:
        with pytest.raises(AccessDeniedException) as info:
            self.alice(op, **body)
        return str(info.value.message)

    def grant(self, *statements: dict[str, Any], name: str = "P", group: bool = False) -> None:
        doc = json.dumps({"Version": "2012-10-17", "Statement": list(statements)})
        self.services.policies.put(ACCOUNT, GROUP if group else USER, "staff" if group else "alice", name, doc)

    def table(self, name: str, *, sort: bool = False, stream: bool = False, **extra: Any) -> None:
        keys = [{"AttributeName": "pk", "KeyType": "HASH"}] + (
            [{"AttributeName": "sk", "KeyType": "RANGE"}] if sort else []
        )
        defs = [{"AttributeName": k["AttributeName"], "AttributeType": "S"} for k in keys]
        if stream:
            extra["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
        self.admin("CreateTable", TableName=name, KeySchema=keys, AttributeDefinitions=defs,
                   BillingMode="PAY_PER_REQUEST", **extra)  # fmt: skip


def _decoded(response: Any) -> Any:
    return json.loads(response) if isinstance(response, bytes) and response else response


def allow(action: Any, resource: Any = "*", **condition: Any) -> dict[str, Any]:
    st: dict[str, Any] = {"Effect": "Allow", "Action": action, "Resource": resource}
    if condition:
        st["Condition"] = condition
    return st


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


OWN_ITEMS = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["${aws:userid}#*"]}}


@pytest.fixture
def server() -> Server:
    srv = Server()
    srv.table("Music")
    return srv


def test_no_policy_denies_with_iams_text(server: Server) -> None:
    assert server.refused("GetItem", TableName="Music", Key=key("x")) == denial("dynamodb:GetItem", TABLE + "Music")


def test_the_anonymous_caller_is_not_authorized() -> None:
    srv = Server()
    srv.table("Music")  # by the anonymous caller, with no policy at all
    assert srv.admin("GetItem", TableName="Music", Key=key("x")) == {}


def test_auth_none_authorizes_nothing() -> None:
    srv = Server()
    srv.ctx, _, _ = make_ctx()  # auth "none"
    ops = dispatch.bind(srv.ctx, srv.services)
    ops["CreateTable"].run({"TableName": "Music", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                            "BillingMode": "PAY_PER_REQUEST"}, ALICE)  # fmt: skip
    assert ops["GetItem"].run({"TableName": "Music", "Key": key("x")}, ALICE) == {}


def test_leading_keys_limit_items_to_the_users_own(server: Server) -> None:
    server.grant(allow(["dynamodb:GetItem", "dynamodb:PutItem"], TABLE + "Music", **OWN_ITEMS))
    server.alice("PutItem", TableName="Music", Item={"pk": {"S": "AIDAALICE#1"}, "v": {"N": "1"}})
    assert server.alice("GetItem", TableName="Music", Key=key("AIDAALICE#1"))
    denied = server.refused("PutItem", TableName="Music", Item={"pk": {"S": "AIDABOB#1"}})
    assert denied == denial("dynamodb:PutItem", TABLE + "Music")
    assert server.admin("GetItem", TableName="Music", Key=key("AIDABOB#1")) == {}  # nothing was written


def test_group_policies_apply(server: Server) -> None:
    server.grant(allow("dynamodb:GetItem", TABLE + "Music"), group=True)
    assert server.alice("GetItem", TableName="Music", Key=key("x")) == {}


def test_explicit_deny_names_the_identity_policy(server: Server) -> None:
    server.grant(allow("dynamodb:*"), {"Effect": "Deny", "Action": "dynamodb:DeleteItem", "Resource": "*"})
    assert server.refused("DeleteItem", TableName="Music", Key=key("x")) == denial(
        "dynamodb:DeleteItem", TABLE + "Music", "with an explicit deny in an identity-based policy"
    )


def test_query_and_scan_on_an_index_check_the_index_arn() -> None:
    srv = Server()
    gsi = {"IndexName": "ByV", "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "ALL"}}  # fmt: skip
    srv.admin("CreateTable", TableName="Music", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
              AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                    {"AttributeName": "v", "AttributeType": "S"}],
              BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexes=[gsi])  # fmt: skip
    srv.grant(allow(["dynamodb:Query", "dynamodb:Scan"], TABLE + "Music"))
    query = {"TableName": "Music", "IndexName": "ByV", "KeyConditionExpression": "v = :v",
             "ExpressionAttributeValues": {":v": {"S": "a"}}}  # fmt: skip
    assert srv.refused("Query", **query) == denial("dynamodb:Query", TABLE + "Music/index/ByV")
    assert srv.refused("Scan", TableName="Music", IndexName="ByV") == denial("dynamodb:Scan", TABLE + "Music/index/ByV")
    srv.grant(allow("dynamodb:Query", TABLE + "Music/index/*"), name="Index")
    assert srv.alice("Query", **query)["Count"] == 0


def test_query_leading_keys_come_from_the_key_condition(server: Server) -> None:
    server.grant(allow("dynamodb:Query", TABLE + "Music", **OWN_ITEMS))
    mine = {":p": {"S": "AIDAALICE#7"}}
    names = {"#k": "pk"}
    by_expression = server.alice("Query", TableName="Music", KeyConditionExpression="#k = :p",
                                 ExpressionAttributeNames=names, ExpressionAttributeValues=mine)  # fmt: skip
    assert by_expression["Count"] == 0
    assert server.refused("Query", TableName="Music", KeyConditionExpression=":p = pk",
                          ExpressionAttributeValues={":p": {"S": "other"}})  # fmt: skip
    legacy = {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [mine[":p"]]}}
    assert server.alice("Query", TableName="Music", KeyConditions=legacy)["Count"] == 0
    # No partition-key equality read from the request: its keys are unknown, and a LeadingKeys condition fails
    # closed (the operation would refuse this one anyway; one the reading missed would not reach any partition).
    assert server.refused("Query", TableName="Music", KeyConditionExpression="pk > :p",
                          ExpressionAttributeValues=mine) == denial("dynamodb:Query", TABLE + "Music")  # fmt: skip
    server.grant(allow("dynamodb:Query", TABLE + "Music"), name="Unconditional")
    with pytest.raises(ValidationException):
        server.alice("Query", TableName="Music", KeyConditionExpression="pk > :p", ExpressionAttributeValues=mine)


PROJECTED_ONLY = {
    "ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "title"]},
    "StringEqualsIfExists": {
        "dynamodb:Select": "SPECIFIC_ATTRIBUTES",
        "dynamodb:ReturnValues": ["NONE", "UPDATED_NEW"],
    },
}


def test_attributes_limit_projections(server: Server) -> None:
    server.grant(
        allow(["dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"], TABLE + "Music", **PROJECTED_ONLY)
    )
    assert server.alice("GetItem", TableName="Music", Key=key("a"), ProjectionExpression="#t",
                        ExpressionAttributeNames={"#t": "title"}) == {}  # fmt: skip
    assert server.refused("GetItem", TableName="Music", Key=key("a"))  # no projection: Select is ALL_ATTRIBUTES
    assert server.refused("GetItem", TableName="Music", Key=key("a"), ProjectionExpression="title, price")
    assert server.alice("Query", TableName="Music", KeyConditionExpression="pk = :p", Select="SPECIFIC_ATTRIBUTES",
                        ProjectionExpression="title", ExpressionAttributeValues={":p": {"S": "a"}})  # fmt: skip
    assert server.refused("Query", TableName="Music", KeyConditionExpression="pk = :p",
                          ExpressionAttributeValues={":p": {"S": "a"}})  # fmt: skip


def test_attributes_limit_updates(server: Server) -> None:
    server.grant(allow("dynamodb:UpdateItem", TABLE + "Music", **PROJECTED_ONLY))
    server.alice("UpdateItem", TableName="Music", Key=key("a"), UpdateExpression="SET title = :t",
                 ExpressionAttributeValues={":t": {"S": "x"}})  # fmt: skip
    assert server.refused("UpdateItem", TableName="Music", Key=key("a"), UpdateExpression="SET price = :t",
                          ExpressionAttributeValues={":t": {"S": "x"}})  # fmt: skip
    assert server.refused("UpdateItem", TableName="Music", Key=key("a"), UpdateExpression="SET title = :t",
                          ConditionExpression="attribute_exists(secret)",
                          ExpressionAttributeValues={":t": {"S": "x"}})  # fmt: skip
    assert server.refused("UpdateItem", TableName="Music", Key=key("a"), UpdateExpression="SET title = :t",
                          ReturnValues="ALL_OLD", ExpressionAttributeValues={":t": {"S": "x"}})  # fmt: skip
    assert server.refused(
        "UpdateItem", TableName="Music", Key=key("a"), AttributeUpdates={"price": {"Action": "DELETE"}}
    )


def test_batch_operations_check_each_table_with_all_its_keys(server: Server) -> None:
    server.table("Books")
    server.grant(allow(["dynamodb:BatchGetItem", "dynamodb:BatchWriteItem"], TABLE + "Music", **OWN_ITEMS))
    mine, theirs = key("AIDAALICE#1"), key("AIDABOB#1")
    assert server.alice("BatchGetItem", RequestItems={"Music": {"Keys": [mine]}})["Responses"] == {"Music": []}
    assert server.refused("BatchGetItem", RequestItems={"Music": {"Keys": [mine, theirs]}})
    assert server.refused("BatchGetItem", RequestItems={"Music": {"Keys": [mine]}, "Books": {"Keys": [mine]}}) == (
        denial("dynamodb:BatchGetItem", TABLE + "Books")
    )
    puts = [{"PutRequest": {"Item": mine}}, {"DeleteRequest": {"Key": theirs}}]
    assert server.refused("BatchWriteItem", RequestItems={"Music": puts}) == denial(
        "dynamodb:BatchWriteItem", TABLE + "Music"
    )
    server.alice("BatchWriteItem", RequestItems={"Music": puts[:1]})
    assert server.admin("GetItem", TableName="Music", Key=mine)["Item"] == mine


def test_transactions_check_their_members_with_the_enclosing_operation(server: Server) -> None:
    in_transactions = {
        "ForAnyValue:StringEquals": {"dynamodb:EnclosingOperation": ["TransactWriteItems", "TransactGetItems"]}
    }
    server.grant(allow(["dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:ConditionCheckItem"], TABLE + "Music",
                       **in_transactions))  # fmt: skip
    server.alice("TransactWriteItems", TransactItems=[{"Put": {"TableName": "Music", "Item": key("a")}}])
    assert server.alice("TransactGetItems", TransactItems=[{"Get": {"TableName": "Music", "Key": key("a")}}])
    assert server.refused("PutItem", TableName="Music", Item=key("b")) == denial("dynamodb:PutItem", TABLE + "Music")
    update = {"Update": {"TableName": "Music", "Key": key("a"), "UpdateExpression": "SET v = :v",
                         "ExpressionAttributeValues": {":v": {"N": "1"}}}}  # fmt: skip
    assert server.refused("TransactWriteItems", TransactItems=[update]) == denial(
        "dynamodb:UpdateItem", TABLE + "Music"
    )
    check = {"ConditionCheck": {"TableName": "Music", "Key": key("a"), "ConditionExpression": "attribute_exists(pk)"}}
    server.alice("TransactWriteItems", TransactItems=[check, {"Put": {"TableName": "Music", "Item": key("c")}}])


def test_control_plane_and_account_wide_actions(server: Server) -> None:
    assert server.refused("ListTables") == denial("dynamodb:ListTables", "*")
    assert server.refused("DescribeTable", TableName="Music") == denial("dynamodb:DescribeTable", TABLE + "Music")
    server.grant(allow(["dynamodb:ListTables", "dynamodb:Describe*"]))
    assert server.alice("ListTables")["TableNames"] == ["Music"]
    assert server.alice("DescribeTable", TableName=TABLE + "Music")["Table"]["TableName"] == "Music"


def test_create_table_with_a_resource_policy_needs_put_resource_policy(server: Server) -> None:
    server.grant(allow("dynamodb:CreateTable"))
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": ALICE.arn},
                         "Action": "dynamodb:GetItem", "Resource": TABLE + "Books"}]})  # fmt: skip
    body = {
        "TableName": "Books",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    assert server.refused("CreateTable", ResourcePolicy=policy, **body) == denial(
        "dynamodb:PutResourcePolicy", TABLE + "Books"
    )
    server.grant(allow("dynamodb:PutResourcePolicy"), name="Put")
    server.alice("CreateTable", ResourcePolicy=policy, **body)
    assert server.alice("GetItem", TableName="Books", Key=key("a")) == {}  # the table's own policy allows it


def test_resource_policy_allows_the_named_user_and_denies(server: Server) -> None:
    def attach(effect: str) -> None:
        statement = {
            "Effect": effect,
            "Principal": {"AWS": ALICE.arn},
            "Action": "dynamodb:GetItem",
            "Resource": TABLE + "Music",
        }
        server.admin("PutResourcePolicy", ResourceArn=TABLE + "Music",
                     Policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))  # fmt: skip

    attach("Allow")
    assert server.alice("GetItem", TableName="Music", Key=key("a")) == {}
    server.grant(allow("dynamodb:*"))
    attach("Deny")
    assert server.refused("GetItem", TableName="Music", Key=key("a")) == denial(
        "dynamodb:GetItem", TABLE + "Music", "with an explicit deny in a resource-based policy"
    )
    server.admin("DeleteResourcePolicy", ResourceArn=TABLE + "Music")
    assert server.alice("GetItem", TableName="Music", Key=key("a")) == {}


def test_streams_check_the_stream_arn() -> None:
    srv = Server()
    srv.table("Music", stream=True)
    stream_arn = srv.admin("DescribeTable", TableName="Music")["Table"]["LatestStreamArn"]
    srv.grant(allow(["dynamodb:DescribeStream", "dynamodb:GetShardIterator"], TABLE + "Music/stream/*"))
    shard = srv.alice("DescribeStream", StreamArn=stream_arn)["StreamDescription"]["Shards"]
    assert srv.refused("ListStreams", TableName="Music") == denial("dynamodb:ListStreams", TABLE + "Music/stream/*")
    assert shard
    iterator = srv.alice("GetShardIterator", StreamArn=stream_arn, ShardId=shard[0]["ShardId"],
                         ShardIteratorType="TRIM_HORIZON")["ShardIterator"]  # fmt: skip
    assert srv.refused("GetRecords", ShardIterator=iterator) == denial("dynamodb:GetRecords", stream_arn)


def test_condition_keys_of_a_put_item(server: Server) -> None:
    (check,) = checks_for(
        "PutItem",
        {
            "TableName": "Music",
            "Item": {"pk": {"S": "k"}, "a": {"N": "1"}},
            "ConditionExpression": "#b.c <> :v AND size(d) > :n",
            "ExpressionAttributeNames": {"#b": "b"},
            "ReturnValues": "ALL_OLD",
        },  # fmt: skip
        server.ctx,
        server.services,
    )
    assert (check.action, check.resource) == ("dynamodb:PutItem", TABLE + "Music")
    assert check.values == {
        "dynamodb:leadingkeys": ("k",),
        "dynamodb:attributes": ("a", "b", "d", "pk"),
        "dynamodb:returnconsumedcapacity": "NONE",
        "dynamodb:returnvalues": "ALL_OLD",
    }


def test_a_policy_that_locks_its_writer_out_needs_confirmation(server: Server) -> None:
    server.grant(allow("dynamodb:*"))
    deny_put = {"Effect": "Deny", "Principal": "*", "Action": "dynamodb:PutResourcePolicy", "Resource": TABLE + "Music",
                "Condition": {"StringEquals": {"aws:PrincipalArn": ALICE.arn}}}  # fmt: skip
    policy = json.dumps({"Version": "2012-10-17", "Statement": [deny_put]})
    assert server.refused("PutResourcePolicy", ResourceArn=TABLE + "Music", Policy=policy) == (
        "The new resource policy will not allow you to update the resource policy in the future."
    )
    with pytest.raises(PolicyNotFoundException):  # nothing was attached
        server.admin("GetResourcePolicy", ResourceArn=TABLE + "Music")
    server.alice("PutResourcePolicy", ResourceArn=TABLE + "Music", Policy=policy, ConfirmRemoveSelfResourceAccess=True)
    assert server.refused("PutResourcePolicy", ResourceArn=TABLE + "Music", Policy=policy,
                          ConfirmRemoveSelfResourceAccess=True) == denial(
        "dynamodb:PutResourcePolicy", TABLE + "Music", "with an explicit deny in a resource-based policy"
    )  # fmt: skip
    deny_delete_only = policy.replace("dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy")
    server.admin("DeleteResourcePolicy", ResourceArn=TABLE + "Music")
    server.alice("PutResourcePolicy", ResourceArn=TABLE + "Music", Policy=deny_delete_only)  # not a lockout


def test_another_accounts_table_arn_meets_no_local_policy(server: Server) -> None:
    allow_alice = {"Effect": "Allow", "Principal": {"AWS": ALICE.arn}, "Action": "dynamodb:GetItem", "Resource": "*"}
    server.admin("PutResourcePolicy", ResourceArn=TABLE + "Music",
                 Policy=json.dumps({"Version": "2012-10-17", "Statement": [allow_alice]}))  # fmt: skip
    foreign = "arn:aws:dynamodb:us-east-1:999999999999:table/Music"
    assert server.alice("GetItem", TableName="Music", Key=key("a")) == {}
    assert server.refused("GetItem", TableName=foreign, Key=key("a")) == denial("dynamodb:GetItem", foreign)
    server.grant(allow("dynamodb:GetItem"))  # across accounts the other account's policy must allow too
    assert server.refused("GetItem", TableName=foreign, Key=key("a")) == denial(
        "dynamodb:GetItem", foreign, "because no resource-based policy allows the {action} action"
    )


def test_a_table_arn_without_an_account_is_the_callers_accounts_resource(server: Server) -> None:
    cut_short = "arn:aws:dynamodb:x"
    assert server.refused("GetItem", TableName=cut_short, Key=key("a")) == denial("dynamodb:GetItem", cut_short)
    server.grant(allow("dynamodb:GetItem"))
    with pytest.raises(ValidationException) as info:
        server.alice("GetItem", TableName=cut_short, Key=key("a"))
    assert info.value.message == f"Invalid TableArn: Invalid ResourceArn provided as input {cut_short}"


def test_a_batch_naming_another_accounts_table_meets_that_tables_policy(server: Server) -> None:
    """Authorized against the owner's table and its policy, as a single-table operation is; then refused by the
    operation, which serves batches in the caller's own namespace only (docs/design.md)."""
    bob = Caller("999999999999", "us-east-1", user_name="bob", arn="arn:aws:iam::999999999999:user/bob",
                 authenticated=True)  # fmt: skip
    batch = {"RequestItems": {TABLE + "Music": {"Keys": [key("a")]}}}
    server.services.policies.put("999999999999", USER, "bob", "P", json.dumps({"Version": "2012-10-17",
                            "Statement": [allow("dynamodb:*")]}))  # fmt: skip
    with pytest.raises(AccessDeniedException) as info:
        server.ops["BatchGetItem"].run(batch, bob)
    assert info.value.message == (
        f"User: {bob.arn} is not authorized to perform: dynamodb:BatchGetItem on resource: {TABLE}Music "
        "because no resource-based policy allows the dynamodb:BatchGetItem action"
    )
    share = {"Effect": "Allow", "Principal": {"AWS": "999999999999"}, "Action": "dynamodb:*", "Resource": "*"}
    server.admin("PutResourcePolicy", ResourceArn=TABLE + "Music",
                 Policy=json.dumps({"Version": "2012-10-17", "Statement": [share]}))  # fmt: skip
    with pytest.raises(AccessDeniedException) as info:
        server.ops["BatchGetItem"].run(batch, bob)
    assert info.value.message == "Access is denied"


def test_time_keys_follow_the_servers_clock(server: Server) -> None:
    until = {
        "DateLessThan": {"aws:CurrentTime": "2023-11-14T22:15:00Z"},
        "NumericLessThan": {"aws:EpochTime": 1700000100},
    }
    server.grant(allow("dynamodb:GetItem", TABLE + "Music", **until))
    assert server.alice("GetItem", TableName="Music", Key=key("a")) == {}  # the clock starts at 1,700,000,000
    server.clock.advance(200)
    assert server.refused("GetItem", TableName="Music", Key=key("a")) == denial("dynamodb:GetItem", TABLE + "Music")


def test_partiql_statements_check_their_own_actions_on_their_table_or_index(server: Server) -> None:
    server.grant(allow(["dynamodb:PartiQLSelect", "dynamodb:PartiQLInsert"], TABLE + "Music"))
    server.alice("ExecuteStatement", Statement="INSERT INTO Music VALUE {'pk': 'a'}")
    assert server.alice("ExecuteStatement", Statement="SELECT * FROM Music WHERE pk = 'a'")["Items"] == [key("a")]
    update = "UPDATE Music SET v = 1 WHERE pk = 'a'"
    assert server.refused("ExecuteStatement", Statement=update) == denial("dynamodb:PartiQLUpdate", TABLE + "Music")
    delete = "DELETE FROM Music WHERE pk = 'a'"
    assert server.refused("ExecuteStatement", Statement=delete) == denial("dynamodb:PartiQLDelete", TABLE + "Music")
    on_index = 'SELECT * FROM "Music"."ByV"'
    assert server.refused("ExecuteStatement", Statement=on_index) == denial(
        "dynamodb:PartiQLSelect", TABLE + "Music/index/ByV"
    )
    batch = [{"Statement": "SELECT * FROM Music WHERE pk = 'a'"}, {"Statement": "SELECT * FROM Other WHERE pk = 'a'"}]
    assert server.refused("BatchExecuteStatement", Statements=batch) == denial(
        "dynamodb:PartiQLSelect", TABLE + "Other"
    )
    transaction = [{"Statement": "EXISTS(SELECT * FROM Music WHERE pk = 'a')"}, {"Statement": delete}]
    assert server.refused("ExecuteTransaction", TransactStatements=transaction) == denial(
        "dynamodb:PartiQLDelete", TABLE + "Music"
    )
    # PartiQLSelect is not GetItem: the JSON API's reads stay refused
    assert server.refused("GetItem", TableName="Music", Key=key("a")) == denial("dynamodb:GetItem", TABLE + "Music")


def test_exports_and_imports_check_the_table_export_and_import_arns(server: Server) -> None:
    export_arn = TABLE + "Music/export/01700000000000-0123abcd"
    import_arn = TABLE + "Songs/import/01700000000000-0123abcd"
    assert server.refused("ExportTableToPointInTime", TableArn=TABLE + "Music", S3Bucket="bucket") == denial(
        "dynamodb:ExportTableToPointInTime", TABLE + "Music"
    )
    assert server.refused("DescribeExport", ExportArn=export_arn) == denial("dynamodb:DescribeExport", export_arn)
    assert server.refused("ListExports") == denial("dynamodb:ListExports", "*")
    creation = {
        "TableName": "Songs",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    request = {"S3BucketSource": {"S3Bucket": "bucket"}, "InputFormat": "CSV", "TableCreationParameters": creation}
    assert server.refused("ImportTable", **request) == denial("dynamodb:ImportTable", TABLE + "Songs")
    assert server.refused("DescribeImport", ImportArn=import_arn) == denial("dynamodb:DescribeImport", import_arn)
    assert server.refused("ListImports") == denial("dynamodb:ListImports", "*")
    server.grant(allow(["dynamodb:ImportTable", "dynamodb:DescribeImport"], TABLE + "Songs*"))
    started = server.alice("ImportTable", **request)["ImportTableDescription"]
    assert started["ImportStatus"] == "IN_PROGRESS"
    assert server.alice("DescribeImport", ImportArn=started["ImportArn"])["ImportTableDescription"]["TableArn"] == (
        TABLE + "Songs"
    )


def test_a_decision_made_without_condition_keys_follows_policy_changes(server: Server) -> None:
    # Policies without conditions or variables decide by action and resource alone: the decision is remembered,
    # and must not outlive a change of the policies.
    server.grant(allow("dynamodb:GetItem", TABLE + "Music"))
    assert server.alice("GetItem", TableName="Music", Key=key("a")) == {}
    assert server.alice("GetItem", TableName="Music", Key=key("a")) == {}
    server.grant({"Effect": "Deny", "Action": "dynamodb:GetItem", "Resource": "*"}, name="D")
    assert server.refused("GetItem", TableName="Music", Key=key("a")) == denial(
        "dynamodb:GetItem", TABLE + "Music", "with an explicit deny in an identity-based policy"
    )
    server.services.policies.remove(ACCOUNT, USER, "alice", "D")
    assert server.alice("GetItem", TableName="Music", Key=key("a")) == {}
    server.grant(allow("dynamodb:GetItem", TABLE + "Music", **OWN_ITEMS))  # replaces P: now conditional
    assert server.refused("GetItem", TableName="Music", Key=key("a")) == denial("dynamodb:GetItem", TABLE + "Music")
    assert server.alice("GetItem", TableName="Music", Key=key("AIDAALICE#1")) == {}


def test_a_plain_identity_allow_still_meets_the_resource_policys_conditions(server: Server) -> None:
    # The caller's own policies read no condition key, the table's policy does: the check must carry them.
    server.grant(allow("dynamodb:*"))
    statement = {
        "Effect": "Deny",
        "Principal": {"AWS": ALICE.arn},
        "Action": ["dynamodb:GetItem", "dynamodb:PutItem"],
        "Resource": TABLE + "Music",
        "Condition": {"ForAnyValue:StringEquals": {"dynamodb:LeadingKeys": ["secret"]}},
    }
    server.admin("PutResourcePolicy", ResourceArn=TABLE + "Music",
                 Policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))  # fmt: skip
    assert server.alice("GetItem", TableName="Music", Key=key("open")) == {}
    why = "with an explicit deny in a resource-based policy"
    assert server.refused("GetItem", TableName="Music", Key=key("secret")) == denial(
        "dynamodb:GetItem", TABLE + "Music", why
    )
    assert server.refused("PutItem", TableName="Music", Item=key("secret")) == denial(
        "dynamodb:PutItem", TABLE + "Music", why
    )


def test_a_remembered_allow_gives_way_to_a_new_resource_policy_and_a_new_table(server: Server) -> None:
    server.grant(allow("dynamodb:*"))
    for _ in range(2):
        assert server.alice("PutItem", TableName="Music", Item=key("a")) == {}
    deny = {
        "Effect": "Deny",
        "Principal": {"AWS": ALICE.arn},
        "Action": "dynamodb:PutItem",
        "Resource": TABLE + "Music",
    }
    server.admin("PutResourcePolicy", ResourceArn=TABLE + "Music",
                 Policy=json.dumps({"Version": "2012-10-17", "Statement": [deny]}))  # fmt: skip
    assert server.refused("PutItem", TableName="Music", Item=key("a")) == denial(
        "dynamodb:PutItem", TABLE + "Music", "with an explicit deny in a resource-based policy"
    )
    server.admin("DeleteTable", TableName="Music")
    server.clock.advance(60)
    server.table("Music")  # the same name, a new table without the policy
    server.clock.advance(60)
    assert server.alice("PutItem", TableName="Music", Item=key("a")) == {}


def test_a_remembered_allow_gives_way_to_reloaded_credentials(server: Server, tmp_path: Path) -> None:
    # The allow is kept for the caller object its credentials made: the store read again (here: alice taken out of
    # the group whose policy allowed her) makes a new caller, whose request is decided again.
    from dynastore.security.credentials import CredentialStore

    path = tmp_path / "credentials.json"

    def write(groups: list[str]) -> None:
        user = {
            "account": ACCOUNT,
            "user_id": "AIDAALICE",
            "groups": groups,
            "keys": [{"id": "AKIAALICE", "secret": "s"}],
        }
        path.write_text(json.dumps({"version": 1, "users": {"alice": user}}))

    write(["staff"])
    store = CredentialStore(path, "us-east-1")
    server.grant(allow("dynamodb:GetItem", TABLE + "Music"), group=True)
    found = store.find("AKIAALICE")
    assert found is not None
    for _ in range(2):  # the second is answered by the kept allow
        assert _decoded(server.ops["GetItem"].run({"TableName": "Music", "Key": key("a")}, found.caller)) == {}
    write([])
    path.touch()
    store.refresh()
    reloaded = store.find("AKIAALICE")
    assert reloaded is not None and reloaded.caller.groups == ()
    with pytest.raises(AccessDeniedException) as info:
        server.ops["GetItem"].run({"TableName": "Music", "Key": key("a")}, reloaded.caller)
    assert info.value.message == denial("dynamodb:GetItem", TABLE + "Music")
