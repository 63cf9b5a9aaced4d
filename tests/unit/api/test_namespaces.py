"""Tables live per account and region: operations run in the namespace of their caller (``dispatch.bind`` with
Callers of other accounts and regions), and the default namespace's records are stored as they always were."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from dynastore import messages
from dynastore.engine.context import EMPTY_NAMESPACES_REMEMBERED, Context
from dynastore.errors import (
    AccessDeniedException,
    ResourceInUseException,
    ResourceNotFoundException,
    TransactionCanceledException,
)
from dynastore.storage import keyspace
from tests.unit.api.operations import ANYONE, bound, call, make_ctx, user

DEFAULT = ANYONE  # account 000000000000 in us-east-1: the config's namespace
OTHER_ACCOUNT = user("111111111111", "us-east-1")
OTHER_REGION = user("000000000000", "eu-west-1")
CALLERS = (DEFAULT, OTHER_ACCOUNT, OTHER_REGION)


def answer(ops: dict[str, Any], op: str, **body: Any) -> Any:
    """The response as a client decodes it (some operations answer pre-encoded JSON)."""
    out = call(ops, op, **body)
    return orjson.loads(out) if isinstance(out, bytes) else out


def music(**extra: Any) -> dict[str, Any]:
    return {
        "TableName": "Music",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
        **extra,
    }


def test_the_same_table_name_in_two_accounts_and_two_regions_holds_its_own_items() -> None:
    ctx, _, _ = make_ctx()
    ops = {caller: bound(ctx, caller) for caller in CALLERS}
    for caller in CALLERS:
        call(ops[caller], "CreateTable", **music())
        call(ops[caller], "PutItem", TableName="Music", Item={"pk": {"S": "k"}, "who": {"S": caller.arn}})
    for caller in CALLERS:
        got = answer(ops[caller], "GetItem", TableName="Music", Key={"pk": {"S": "k"}})
        assert got["Item"]["who"] == {"S": caller.arn}
        assert answer(ops[caller], "Scan", TableName="Music")["Count"] == 1
        with pytest.raises(ResourceInUseException):
            call(ops[caller], "CreateTable", **music())
    ids = {ctx.in_namespace(c.account_id, c.region).catalog.get("Music").table_id for c in CALLERS}
    assert len(ids) == 3  # table ids come from one sequence: their keys never meet


def test_list_tables_and_describe_show_only_the_caller_s_namespace() -> None:
    ctx, _, _ = make_ctx()
    default, other = bound(ctx, DEFAULT), bound(ctx, OTHER_ACCOUNT)
    call(default, "CreateTable", **music())
    call(other, "CreateTable", **music(TableName="Albums"))
    assert call(default, "ListTables")["TableNames"] == ["Music"]
    assert call(other, "ListTables")["TableNames"] == ["Albums"]
    assert call(bound(ctx, OTHER_REGION), "ListTables")["TableNames"] == []
    with pytest.raises(ResourceNotFoundException) as missing:
        call(other, "DescribeTable", TableName="Music")
    assert missing.value.message == messages.TABLE_NOT_FOUND.format(name="Music")
    with pytest.raises(ResourceNotFoundException):
        call(other, "PutItem", TableName="Music", Item={"pk": {"S": "k"}})
    with pytest.raises(ResourceNotFoundException):
        call(other, "DeleteTable", TableName="Music")
    assert call(default, "ListTables")["TableNames"] == ["Music"]


def test_arns_name_the_caller_s_account_and_region() -> None:
    ctx, _, _ = make_ctx()
    gsi = {
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    }
    for caller in CALLERS:
        ops = bound(ctx, caller)
        created = call(ops, "CreateTable", **music(**gsi))["TableDescription"]
        arn = f"arn:aws:dynamodb:{caller.region}:{caller.account_id}:table/Music"
        assert created["TableArn"] == arn
        described = call(ops, "DescribeTable", TableName="Music")["Table"]
        assert described["TableArn"] == arn
        assert described["GlobalSecondaryIndexes"][0]["IndexArn"] == f"{arn}/index/by_g"
        assert described["LatestStreamArn"].startswith(f"{arn}/stream/")
        # a TableName may be the table's ARN: of the caller's own namespace only
        assert call(ops, "DescribeTable", TableName=arn)["Table"]["TableArn"] == arn
    foreign = "arn:aws:dynamodb:us-east-1:111111111111:table/Music"
    for caller in (DEFAULT, OTHER_REGION):
        with pytest.raises(AccessDeniedException):
            call(bound(ctx, caller), "DescribeTable", TableName=foreign)


def test_streams_are_listed_and_read_per_namespace() -> None:
    ctx, _, _ = make_ctx()
    stream = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}}
    default, other = bound(ctx, DEFAULT), bound(ctx, OTHER_ACCOUNT)
    call(default, "CreateTable", **music(**stream))
    call(other, "CreateTable", **music(**stream))
    call(other, "PutItem", TableName="Music", Item={"pk": {"S": "theirs"}})
    listed = {c: call(bound(ctx, c), "ListStreams")["Streams"] for c in CALLERS}
    assert [s["TableName"] for s in listed[DEFAULT]] == ["Music"]
    assert listed[OTHER_REGION] == []
    theirs = listed[OTHER_ACCOUNT][0]["StreamArn"]
    assert theirs.startswith("arn:aws:dynamodb:us-east-1:111111111111:table/Music/stream/")
    with pytest.raises(ResourceNotFoundException) as refused:
        call(default, "DescribeStream", StreamArn=theirs)
    assert refused.value.message == messages.STREAM_NOT_FOUND.format(arn=theirs)
    records = stream_records(other, theirs)
    assert [(r["dynamodb"]["Keys"]["pk"]["S"], r["awsRegion"]) for r in records] == [("theirs", "us-east-1")]
    elsewhere = bound(ctx, OTHER_REGION)
    call(elsewhere, "CreateTable", **music(**stream))
    call(elsewhere, "PutItem", TableName="Music", Item={"pk": {"S": "there"}})
    arn = call(elsewhere, "ListStreams", TableName="Music")["Streams"][0]["StreamArn"]
    assert arn.startswith("arn:aws:dynamodb:eu-west-1:000000000000:table/Music/stream/")
    assert [r["awsRegion"] for r in stream_records(elsewhere, arn)] == ["eu-west-1"]


def stream_records(ops: dict[str, Any], arn: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for shard in call(ops, "DescribeStream", StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = call(
            ops, "GetShardIterator", StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )
        records += call(ops, "GetRecords", ShardIterator=iterator["ShardIterator"])["Records"]
    return records


def test_a_deleted_table_s_stream_stays_in_its_namespace() -> None:
    ctx, _, _ = make_ctx()
    stream = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}}
    other = bound(ctx, OTHER_ACCOUNT)
    call(other, "CreateTable", **music(**stream))
    call(other, "DeleteTable", TableName="Music")
    for _ in range(2):  # as remembered, then as read back from the store
        assert [s["TableName"] for s in call(other, "ListStreams")["Streams"]] == ["Music"]
        assert call(bound(ctx, DEFAULT), "ListStreams")["Streams"] == []
        ctx.shards.clear()


def test_tagging_another_account_s_or_region_s_table_is_denied() -> None:
    ctx, _, _ = make_ctx()
    other = bound(ctx, OTHER_ACCOUNT)
    call(other, "CreateTable", **music())
    theirs = "arn:aws:dynamodb:us-east-1:111111111111:table/Music"
    call(other, "TagResource", ResourceArn=theirs, Tags=[{"Key": "team", "Value": "b"}])
    assert call(other, "ListTagsOfResource", ResourceArn=theirs)["Tags"] == [{"Key": "team", "Value": "b"}]
    for caller in (DEFAULT, OTHER_REGION):
        ops = bound(ctx, caller)
        for op, extra in (
            ("TagResource", {"Tags": [{"Key": "team", "Value": "a"}]}),
            ("UntagResource", {"TagKeys": ["team"]}),
            ("ListTagsOfResource", {}),
        ):
            with pytest.raises(AccessDeniedException) as denied:
                call(ops, op, ResourceArn=theirs, **extra)
            assert denied.value.message == messages.ACCESS_DENIED
    # the other account's own ARN of a table it does not have: not found in its namespace
    call(bound(ctx, DEFAULT), "CreateTable", **music(TableName="Mine"))
    with pytest.raises(ResourceNotFoundException):
        call(other, "ListTagsOfResource", ResourceArn="arn:aws:dynamodb:us-east-1:111111111111:table/Mine")
    assert call(other, "ListTagsOfResource", ResourceArn=theirs)["Tags"] == [{"Key": "team", "Value": "b"}]


def test_transactions_run_across_the_caller_s_tables_only() -> None:
    ctx, _, _ = make_ctx()
    default, other = bound(ctx, DEFAULT), bound(ctx, OTHER_ACCOUNT)
    for ops in (default, other):
        call(ops, "CreateTable", **music())
    call(other, "CreateTable", **music(TableName="Albums"))
    request = {
        "TransactItems": [
            {"Put": {"TableName": "Music", "Item": {"pk": {"S": "t"}}}},
            {"Put": {"TableName": "Albums", "Item": {"pk": {"S": "t"}}}},
        ],
        "ClientRequestToken": "same-token",
    }
    call(other, "TransactWriteItems", **request)
    got = answer(
        other,
        "TransactGetItems",
        TransactItems=[{"Get": {"TableName": t, "Key": {"pk": {"S": "t"}}}} for t in ("Music", "Albums")],
    )
    assert [r["Item"] for r in got["Responses"]] == [{"pk": {"S": "t"}}] * 2
    # the default namespace has no Albums: the same request fails there, its token is its own
    with pytest.raises(ResourceNotFoundException):
        call(default, "TransactWriteItems", **request)
    assert answer(default, "Scan", TableName="Music")["Count"] == 0
    # a token is per namespace: the same token with another request in another namespace is no mismatch
    call(bound(ctx, OTHER_REGION), "CreateTable", **music())
    single = {"TransactItems": request["TransactItems"][:1], "ClientRequestToken": "same-token"}
    call(bound(ctx, OTHER_REGION), "TransactWriteItems", **single)
    with pytest.raises(TransactionCanceledException):
        call(
            other,
            "TransactWriteItems",
            TransactItems=[
                {
                    "ConditionCheck": {
                        "TableName": "Albums",
                        "Key": {"pk": {"S": "t"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            ],
        )


def test_the_default_namespace_is_stored_as_before_and_others_apart() -> None:
    ctx, _, _ = make_ctx()
    call(bound(ctx, DEFAULT), "CreateTable", **music())
    call(bound(ctx, OTHER_ACCOUNT), "CreateTable", **music())
    call(
        bound(ctx, OTHER_ACCOUNT),
        "TransactWriteItems",
        TransactItems=[{"Put": {"TableName": "Music", "Item": {"pk": {"S": "t"}}}}],
        ClientRequestToken="tok",
    )
    with ctx.kv.read() as txn:
        meta = keyspace.meta_prefix()
        names = [k[1:].decode() for k, _ in txn.iter_range(meta, keyspace.prefix_end(meta))]
        default_record = orjson.loads(txn.get(keyspace.meta_key("Music")) or b"null")
        tokens = [k for k, _ in txn.iter_range(keyspace.TOKEN_PREFIX, keyspace.prefix_end(keyspace.TOKEN_PREFIX))]
    assert "Music" in names and "@111111111111/us-east-1/Music" in names
    # the record a store without namespaces holds: a table's, naming no namespace
    assert default_record["kind"] == "table" and set(default_record) == set(ctx.catalog.get("Music").to_record())
    assert tokens == [keyspace.TOKEN_PREFIX + b"\xff111111111111/us-east-1\xfftok"]


def test_describe_limits_and_contributor_insights_per_namespace() -> None:
    ctx, _, _ = make_ctx()
    default, other = bound(ctx, DEFAULT), bound(ctx, OTHER_ACCOUNT)
    assert call(other, "DescribeLimits") == call(default, "DescribeLimits")
    call(default, "CreateTable", **music())
    call(other, "CreateTable", **music())
    call(other, "UpdateContributorInsights", TableName="Music", ContributorInsightsAction="ENABLE")
    statuses = {
        name: [
            s["ContributorInsightsStatus"] for s in call(ops, "ListContributorInsights")["ContributorInsightsSummaries"]
        ]
        for name, ops in (("default", default), ("other", other))
    }
    assert statuses == {"default": ["DISABLED"], "other": ["ENABLED"]}
    theirs = "arn:aws:dynamodb:us-east-1:111111111111:table/Music"
    assert call(other, "DescribeContributorInsights", TableName=theirs)["ContributorInsightsStatus"] == "ENABLED"
    with pytest.raises(AccessDeniedException):
        call(default, "DescribeContributorInsights", TableName=theirs)


def test_ttl_is_per_namespace() -> None:
    ctx, _, _ = make_ctx()
    default, other = bound(ctx, DEFAULT), bound(ctx, OTHER_ACCOUNT)
    for ops in (default, other):
        call(ops, "CreateTable", **music())
    call(other, "UpdateTimeToLive", TableName="Music", TimeToLiveSpecification={"Enabled": True, "AttributeName": "x"})
    described = {
        name: call(ops, "DescribeTimeToLive", TableName="Music")["TimeToLiveDescription"]["TimeToLiveStatus"]
        for name, ops in (("default", default), ("other", other))
    }
    assert described == {"default": "DISABLED", "other": "ENABLED"}


def test_shared_namespace_puts_every_caller_in_the_config_s() -> None:
    ctx, _, _ = make_ctx(shared_namespace=True)
    call(bound(ctx, OTHER_ACCOUNT), "CreateTable", **music())
    listed = call(bound(ctx, DEFAULT), "ListTables")["TableNames"]
    assert listed == ["Music"]
    described = call(bound(ctx, OTHER_REGION), "DescribeTable", TableName="Music")["Table"]
    assert described["TableArn"] == "arn:aws:dynamodb:us-east-1:000000000000:table/Music"


def _regions(ctx: Context) -> list[str]:
    """The regions of the namespaces holding tables (the default one first)."""
    return [space.region for space in ctx.catalog.namespaces()]


def test_a_namespace_is_kept_only_once_it_has_a_table() -> None:
    ctx, _, _ = make_ctx()
    for i in range(20):  # callers naming ever new regions
        assert call(bound(ctx, user("111111111111", f"xx-test-{i}")), "ListTables")["TableNames"] == []
    assert len(ctx.catalog.namespaces()) == 1
    call(bound(ctx, OTHER_REGION), "CreateTable", **music())
    assert _regions(ctx) == ["us-east-1", "eu-west-1"]
    assert call(bound(ctx, OTHER_REGION), "ListTables")["TableNames"] == ["Music"]
    kept = ctx.in_namespace("000000000000", "eu-west-1").catalog
    assert ctx.in_namespace("000000000000", "eu-west-1").catalog is kept


def test_a_namespace_without_tables_is_remembered_among_the_last_few() -> None:
    ctx, _, _ = make_ctx()
    first = ctx.in_namespace("111111111111", "ap-south-2").catalog
    assert ctx.in_namespace("111111111111", "ap-south-2").catalog is first  # its next request makes nothing
    for i in range(EMPTY_NAMESPACES_REMEMBERED):  # as many other regions: the least recently used one goes
        ctx.in_namespace("111111111111", f"xx-test-{i}")
        ctx.in_namespace("111111111111", "ap-south-2")
    assert ctx.in_namespace("111111111111", "ap-south-2").catalog is first
    forgotten = ctx.in_namespace("111111111111", "xx-test-1").catalog
    for i in range(EMPTY_NAMESPACES_REMEMBERED):
        ctx.in_namespace("222222222222", f"xx-test-{i}")
    assert ctx.in_namespace("111111111111", "xx-test-1").catalog is not forgotten
    assert len(ctx.catalog.namespaces()) == 1


def test_a_remembered_namespace_without_tables_is_kept_from_its_first_table_on() -> None:
    ctx, _, _ = make_ctx()
    elsewhere = user("000000000000", "ap-south-2")
    assert call(bound(ctx, elsewhere), "ListTables")["TableNames"] == []
    remembered = ctx.in_namespace("000000000000", "ap-south-2").catalog
    call(bound(ctx, elsewhere), "CreateTable", **music())
    assert ctx.in_namespace("000000000000", "ap-south-2").catalog is remembered
    assert _regions(ctx) == ["us-east-1", "ap-south-2"]
    for i in range(EMPTY_NAMESPACES_REMEMBERED + 1):  # forgetting namespaces without tables leaves it be
        ctx.in_namespace("000000000000", f"xx-test-{i}")
    assert call(bound(ctx, elsewhere), "ListTables")["TableNames"] == ["Music"]
    assert ctx.in_namespace("000000000000", "ap-south-2").catalog is remembered
