"""Contributor Insights on a GSI, its modes, and the index a request names."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import error_of, unique_name


def _table_with_gsi(ddb: Any) -> str:
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g")],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )
    return name


def test_a_gsi_has_insights_of_its_own_in_the_mode_asked(ddb: Any) -> None:
    name = _table_with_gsi(ddb)
    answer = ddb.update_contributor_insights(
        TableName=name, IndexName="by_g", ContributorInsightsAction="ENABLE", ContributorInsightsMode="THROTTLED_KEYS"
    )
    assert {k: v for k, v in answer.items() if k != "ResponseMetadata"} == {
        "TableName": name,
        "IndexName": "by_g",
        "ContributorInsightsStatus": "ENABLING",
        "ContributorInsightsMode": "THROTTLED_KEYS",
    }
    described = ddb.describe_contributor_insights(TableName=name, IndexName="by_g")
    assert described["ContributorInsightsStatus"] == "ENABLED"
    assert described["ContributorInsightsMode"] == "THROTTLED_KEYS"
    # A GSI without a sort key has the partition-key rules only; THROTTLED_KEYS keeps the throttled ones.
    rules = described["ContributorInsightsRuleList"]
    assert [rule.split("-")[1] for rule in rules] == ["PKT"]
    assert all(f"-{name}-by_g-" in rule for rule in rules)
    assert ddb.describe_contributor_insights(TableName=name)["ContributorInsightsStatus"] == "DISABLED"
    listed = ddb.list_contributor_insights(TableName=name)["ContributorInsightsSummaries"]
    assert listed == [
        {"TableName": name, "ContributorInsightsStatus": "DISABLED"},
        {
            "TableName": name,
            "IndexName": "by_g",
            "ContributorInsightsStatus": "ENABLED",
            "ContributorInsightsMode": "THROTTLED_KEYS",
        },
    ]
    disabled = ddb.update_contributor_insights(TableName=name, IndexName="by_g", ContributorInsightsAction="DISABLE")
    assert (disabled["ContributorInsightsStatus"], disabled["ContributorInsightsMode"]) == (
        "DISABLING",
        "THROTTLED_KEYS",
    )


def test_an_unknown_index_is_not_found(ddb: Any) -> None:
    name = _table_with_gsi(ddb)
    code, message = error_of(
        lambda: ddb.update_contributor_insights(TableName=name, IndexName="nope", ContributorInsightsAction="ENABLE")
    )
    assert code == "ResourceNotFoundException"
    assert message == f"Requested resource not found: Index nope for table {name}"
