"""The request shape of every operation we serve. Data only.

Member order is the order DynamoDB reports constraint errors in; enum order is DynamoDB's listing
order in messages. Constraints come from the service model (botocore ``service-2.json``); where
DynamoDB validates a member differently from the model (table names), DynamoDB's behaviour wins.
"""

from __future__ import annotations

from typing import Any

from dynastore.validation.shapes import (
    TABLE_NAME_PATTERN,
    AttrValue,
    Boolean,
    Enum,
    Integer,
    List,
    Long,
    Map,
    Shape,
    String,
    Struct,
    Timestamp,
)

# --- shared members ----------
# A TableName may be the table's ARN (DynamoDB's "table name overloading"): see constraints._table_or_arn_tests.
TABLE_NAME = String(not_null=True, table_or_arn=True)
TABLE_NAME_STRICT = String(required=True, table_or_arn=True)
INDEX_NAME = String(pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255)
INDEX_NAME_REQUIRED = String(not_null=True, pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255)
RETURN_CONSUMED_CAPACITY = Enum("INDEXES", "TOTAL", "NONE")
RETURN_ITEM_COLLECTION_METRICS = Enum("SIZE", "NONE")
RETURN_VALUES = Enum("ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW")
RETURN_VALUES_ON_CCF = Enum("ALL_OLD", "NONE")
CONDITIONAL_OPERATOR = Enum("OR", "AND")
COMPARISON_OPERATOR = Enum(
    "IN",
    "NULL",
    "BETWEEN",
    "LT",
    "NOT_CONTAINS",
    "EQ",
    "GT",
    "NOT_NULL",
    "NE",
    "LE",
    "BEGINS_WITH",
    "GE",
    "CONTAINS",
)
SELECT = Enum("SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES")
ATTRIBUTES_TO_GET = List(String(), min_len=1, max_len=255)
EXPRESSION_ATTRIBUTE_NAMES = Map(String())


def _attribute_map(*, not_null: bool = False) -> Map:
    return Map(AttrValue(), not_null=not_null)


EXPECTED = Map(
    Struct(
        "ExpectedAttributeValue",
        AttributeValueList=List(AttrValue()),
        ComparisonOperator=COMPARISON_OPERATOR,
        Exists=Boolean(),
        Value=AttrValue(),
    )
)
FILTER_CONDITIONS = Map(
    Struct(
        "Condition",
        AttributeValueList=List(AttrValue()),
        ComparisonOperator=Enum(*COMPARISON_OPERATOR.values, not_null=True),
    )
)

# --- table definitions ----------
ATTRIBUTE_DEFINITIONS = List(
    Struct(
        "AttributeDefinition",
        AttributeName=String(not_null=True, min_len=1, max_len=255),
        AttributeType=Enum("B", "N", "S", not_null=True),
    ),
    not_null=True,
)
KEY_SCHEMA = List(
    Struct(
        "KeySchemaElement",
        AttributeName=String(not_null=True, min_len=1, max_len=255),
        KeyType=Enum("HASH", "RANGE", not_null=True),
    ),
    not_null=True,
    min_len=1,
    max_len=2,
)
# A GSI's KeySchema may hold up to 4 HASH and 4 RANGE elements (multi-attribute keys): no length constraint
# here; api/table_requests.check_gsi_key_schema counts each kind.
GSI_KEY_SCHEMA = List(KEY_SCHEMA.member, not_null=True, min_len=1)
PROVISIONED_THROUGHPUT = Struct(
    "ProvisionedThroughput",
    WriteCapacityUnits=Long(not_null=True, min=1),
    ReadCapacityUnits=Long(not_null=True, min=1),
)
PROJECTION = Struct(
    "Projection",
    not_null=True,
    ProjectionType=Enum("ALL", "INCLUDE", "KEYS_ONLY"),
    NonKeyAttributes=List(String(min_len=1, max_len=255), min_len=1, max_len=20),
)
ON_DEMAND_THROUGHPUT = Struct("OnDemandThroughput", MaxReadRequestUnits=Long(), MaxWriteRequestUnits=Long())
WARM_THROUGHPUT = Struct("WarmThroughput", ReadUnitsPerSecond=Long(), WriteUnitsPerSecond=Long())
STREAM_SPECIFICATION = Struct(
    "StreamSpecification",
    StreamEnabled=Boolean(not_null=True),
    StreamViewType=Enum("NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"),
)
SSE_SPECIFICATION = Struct(
    "SSESpecification", Enabled=Boolean(), SSEType=Enum("AES256", "KMS"), KMSMasterKeyId=String()
)
TAGS = List(Struct("Tag", Key=String(not_null=True, min_len=1, max_len=128), Value=String(not_null=True, max_len=256)))
TABLE_CLASS = Enum("STANDARD", "STANDARD_INFREQUENT_ACCESS")
BILLING_MODE = Enum("PROVISIONED", "PAY_PER_REQUEST")

CREATE_TABLE = Struct(
    "CreateTableInput",
    AttributeDefinitions=ATTRIBUTE_DEFINITIONS,
    TableName=TABLE_NAME_STRICT,
    BillingMode=BILLING_MODE,
    ProvisionedThroughput=PROVISIONED_THROUGHPUT,
    KeySchema=KEY_SCHEMA,
    LocalSecondaryIndexes=List(
        Struct(
            "LocalSecondaryIndex",
            IndexName=INDEX_NAME_REQUIRED,
            KeySchema=KEY_SCHEMA,
            Projection=PROJECTION,
        )
    ),
    GlobalSecondaryIndexes=List(
        Struct(
            "GlobalSecondaryIndex",
            IndexName=INDEX_NAME_REQUIRED,
            KeySchema=GSI_KEY_SCHEMA,
            Projection=PROJECTION,
            ProvisionedThroughput=PROVISIONED_THROUGHPUT,
            OnDemandThroughput=ON_DEMAND_THROUGHPUT,
            WarmThroughput=WARM_THROUGHPUT,
        )
    ),
    StreamSpecification=STREAM_SPECIFICATION,
    SSESpecification=SSE_SPECIFICATION,
    Tags=TAGS,
    TableClass=TABLE_CLASS,
    DeletionProtectionEnabled=Boolean(),
    WarmThroughput=WARM_THROUGHPUT,
    ResourcePolicy=String(),
    OnDemandThroughput=ON_DEMAND_THROUGHPUT,
)

# --- global tables, version 2019.11.21 (UpdateTable ReplicaUpdates; api/replica_updates.py) ----------
REGION_NAME = String(not_null=True)
PROVISIONED_THROUGHPUT_OVERRIDE = Struct("ProvisionedThroughputOverride", ReadCapacityUnits=Long(min=1))
ON_DEMAND_THROUGHPUT_OVERRIDE = Struct("OnDemandThroughputOverride", MaxReadRequestUnits=Long())
REPLICA_GSIS = List(
    Struct(
        "ReplicaGlobalSecondaryIndex",
        IndexName=INDEX_NAME_REQUIRED,
        ProvisionedThroughputOverride=PROVISIONED_THROUGHPUT_OVERRIDE,
        OnDemandThroughputOverride=ON_DEMAND_THROUGHPUT_OVERRIDE,
    ),
    min_len=1,
)


def _replica_member_action(name: str) -> Struct:
    """CreateReplicationGroupMemberAction and UpdateReplicationGroupMemberAction (the same members)."""
    return Struct(
        name,
        RegionName=REGION_NAME,
        KMSMasterKeyId=String(),
        ProvisionedThroughputOverride=PROVISIONED_THROUGHPUT_OVERRIDE,
        OnDemandThroughputOverride=ON_DEMAND_THROUGHPUT_OVERRIDE,
        GlobalSecondaryIndexes=REPLICA_GSIS,
        TableClassOverride=TABLE_CLASS,
    )


REPLICA_UPDATES = List(
    Struct(
        "ReplicationGroupUpdate",
        Create=_replica_member_action("CreateReplicationGroupMemberAction"),
        Update=_replica_member_action("UpdateReplicationGroupMemberAction"),
        Delete=Struct("DeleteReplicationGroupMemberAction", RegionName=REGION_NAME),
    ),
    min_len=1,
)
MULTI_REGION_CONSISTENCY = Enum("EVENTUAL", "STRONG")
WITNESS_UPDATES = List(
    Struct(
        "GlobalTableWitnessGroupUpdate",
        Create=Struct("CreateGlobalTableWitnessGroupMemberAction", RegionName=REGION_NAME),
        Delete=Struct("DeleteGlobalTableWitnessGroupMemberAction", RegionName=REGION_NAME),
    ),
    min_len=1,
    max_len=1,
)

# DescribeTableReplicaAutoScaling / UpdateTableReplicaAutoScaling (api/replica_auto_scaling.py). A scaling policy
# (ScalingPolicyUpdate) is not modelled: phase 1 drops it, and the operation refuses every update anyway.
AUTO_SCALING_SETTINGS_UPDATE = Struct(
    "AutoScalingSettingsUpdate",
    MinimumUnits=Long(min=1),
    MaximumUnits=Long(min=1),
    AutoScalingDisabled=Boolean(),
    AutoScalingRoleArn=String(min_len=1, max_len=1600),
)
DESCRIBE_TABLE_REPLICA_AUTO_SCALING = Struct("DescribeTableReplicaAutoScalingInput", TableName=TABLE_NAME_STRICT)
UPDATE_TABLE_REPLICA_AUTO_SCALING = Struct(
    "UpdateTableReplicaAutoScalingInput",
    GlobalSecondaryIndexUpdates=List(
        Struct(
            "GlobalSecondaryIndexAutoScalingUpdate",
            IndexName=INDEX_NAME,
            ProvisionedWriteCapacityAutoScalingUpdate=AUTO_SCALING_SETTINGS_UPDATE,
        ),
        min_len=1,
    ),
    TableName=TABLE_NAME_STRICT,
    ProvisionedWriteCapacityAutoScalingUpdate=AUTO_SCALING_SETTINGS_UPDATE,
    ReplicaUpdates=List(
        Struct(
            "ReplicaAutoScalingUpdate",
            RegionName=REGION_NAME,
            ReplicaGlobalSecondaryIndexUpdates=List(
                Struct(
                    "ReplicaGlobalSecondaryIndexAutoScalingUpdate",
                    IndexName=INDEX_NAME,
                    ProvisionedReadCapacityAutoScalingUpdate=AUTO_SCALING_SETTINGS_UPDATE,
                )
            ),
            ReplicaProvisionedReadCapacityAutoScalingUpdate=AUTO_SCALING_SETTINGS_UPDATE,
        ),
        min_len=1,
    ),
)

# Global tables, version 2017.11.29 (api/legacy_global_tables.py).
GLOBAL_TABLE_NAME = String(not_null=True, pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255)
DESCRIBE_GLOBAL_TABLE = Struct("DescribeGlobalTableInput", GlobalTableName=GLOBAL_TABLE_NAME)
DESCRIBE_GLOBAL_TABLE_SETTINGS = Struct("DescribeGlobalTableSettingsInput", GlobalTableName=GLOBAL_TABLE_NAME)
CREATE_GLOBAL_TABLE = Struct(
    "CreateGlobalTableInput",
    GlobalTableName=GLOBAL_TABLE_NAME,
    ReplicationGroup=List(Struct("Replica", RegionName=String()), not_null=True),
)
UPDATE_GLOBAL_TABLE = Struct(
    "UpdateGlobalTableInput",
    GlobalTableName=GLOBAL_TABLE_NAME,
    ReplicaUpdates=List(
        Struct(
            "ReplicaUpdate",
            Create=Struct("CreateReplicaAction", RegionName=REGION_NAME),
            Delete=Struct("DeleteReplicaAction", RegionName=REGION_NAME),
        ),
        not_null=True,
    ),
)
UPDATE_GLOBAL_TABLE_SETTINGS = Struct(
    "UpdateGlobalTableSettingsInput",
    GlobalTableName=GLOBAL_TABLE_NAME,
    GlobalTableBillingMode=BILLING_MODE,
    GlobalTableProvisionedWriteCapacityUnits=Long(min=1),
    GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate=AUTO_SCALING_SETTINGS_UPDATE,
    GlobalTableGlobalSecondaryIndexSettingsUpdate=List(
        Struct(
            "GlobalTableGlobalSecondaryIndexSettingsUpdate",
            IndexName=INDEX_NAME_REQUIRED,
            ProvisionedWriteCapacityUnits=Long(min=1),
            ProvisionedWriteCapacityAutoScalingSettingsUpdate=AUTO_SCALING_SETTINGS_UPDATE,
        ),
        min_len=1,
        max_len=20,
    ),
    ReplicaSettingsUpdate=List(
        Struct(
            "ReplicaSettingsUpdate",
            RegionName=REGION_NAME,
            ReplicaProvisionedReadCapacityUnits=Long(min=1),
            ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate=AUTO_SCALING_SETTINGS_UPDATE,
            ReplicaGlobalSecondaryIndexSettingsUpdate=List(
                Struct(
                    "ReplicaGlobalSecondaryIndexSettingsUpdate",
                    IndexName=INDEX_NAME_REQUIRED,
                    ProvisionedReadCapacityUnits=Long(min=1),
                    ProvisionedReadCapacityAutoScalingSettingsUpdate=AUTO_SCALING_SETTINGS_UPDATE,
                ),
                min_len=1,
                max_len=20,
            ),
            ReplicaTableClass=TABLE_CLASS,
        ),
        min_len=1,
        max_len=50,
    ),
)
LIST_GLOBAL_TABLES = Struct(
    "ListGlobalTablesInput",
    ExclusiveStartGlobalTableName=String(pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255),
    Limit=Integer(min=1),
    RegionName=String(),
)

UPDATE_TABLE = Struct(
    "UpdateTableInput",
    TableName=TABLE_NAME_STRICT,
    ProvisionedThroughput=PROVISIONED_THROUGHPUT,
    GlobalSecondaryIndexUpdates=List(
        Struct(
            "GlobalSecondaryIndexUpdate",
            Update=Struct(
                "UpdateGlobalSecondaryIndexAction",
                IndexName=INDEX_NAME_REQUIRED,
                # Optional since an Update may change only OnDemandThroughput or WarmThroughput (service model).
                ProvisionedThroughput=Struct(
                    "ProvisionedThroughput",
                    WriteCapacityUnits=Long(not_null=True, min=1),
                    ReadCapacityUnits=Long(not_null=True, min=1),
                ),
                OnDemandThroughput=ON_DEMAND_THROUGHPUT,
                WarmThroughput=WARM_THROUGHPUT,
            ),
            Create=Struct(
                "CreateGlobalSecondaryIndexAction",
                Projection=PROJECTION,
                IndexName=INDEX_NAME_REQUIRED,
                ProvisionedThroughput=PROVISIONED_THROUGHPUT,
                KeySchema=GSI_KEY_SCHEMA,
                OnDemandThroughput=ON_DEMAND_THROUGHPUT,
                WarmThroughput=WARM_THROUGHPUT,
            ),
            Delete=Struct("DeleteGlobalSecondaryIndexAction", IndexName=INDEX_NAME_REQUIRED),
        )
    ),
    AttributeDefinitions=List(ATTRIBUTE_DEFINITIONS.member),
    BillingMode=BILLING_MODE,
    StreamSpecification=STREAM_SPECIFICATION,
    SSESpecification=SSE_SPECIFICATION,
    ReplicaUpdates=REPLICA_UPDATES,
    TableClass=TABLE_CLASS,
    DeletionProtectionEnabled=Boolean(),
    MultiRegionConsistency=MULTI_REGION_CONSISTENCY,
    GlobalTableWitnessUpdates=WITNESS_UPDATES,
    OnDemandThroughput=ON_DEMAND_THROUGHPUT,
    WarmThroughput=WARM_THROUGHPUT,
)

DESCRIBE_TABLE = Struct("DescribeTableInput", TableName=TABLE_NAME_STRICT)
DELETE_TABLE = Struct("DeleteTableInput", TableName=TABLE_NAME_STRICT)
LIST_TABLES = Struct(
    "ListTablesInput",
    Limit=Integer(min=1, max=100),
    ExclusiveStartTableName=String(pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255),
)
DESCRIBE_LIMITS = Struct("DescribeLimitsInput")
DESCRIBE_ENDPOINTS = Struct("DescribeEndpointsRequest")

RESOURCE_ARN = String(not_null=True, min_len=1, max_len=1283)
TAG_RESOURCE = Struct("TagResourceInput", ResourceArn=RESOURCE_ARN, Tags=List(TAGS.member, not_null=True))
UNTAG_RESOURCE = Struct(
    "UntagResourceInput",
    ResourceArn=RESOURCE_ARN,
    TagKeys=List(String(min_len=1, max_len=128), not_null=True),
)
LIST_TAGS_OF_RESOURCE = Struct("ListTagsOfResourceInput", ResourceArn=RESOURCE_ARN, NextToken=String())

POLICY_REVISION_ID = String(min_len=1, max_len=255)
PUT_RESOURCE_POLICY = Struct(
    "PutResourcePolicyInput",
    ResourceArn=RESOURCE_ARN,
    Policy=String(not_null=True),
    ExpectedRevisionId=POLICY_REVISION_ID,
    ConfirmRemoveSelfResourceAccess=Boolean(),
)
GET_RESOURCE_POLICY = Struct("GetResourcePolicyInput", ResourceArn=RESOURCE_ARN)
DELETE_RESOURCE_POLICY = Struct(
    "DeleteResourcePolicyInput", ResourceArn=RESOURCE_ARN, ExpectedRevisionId=POLICY_REVISION_ID
)

UPDATE_TIME_TO_LIVE = Struct(
    "UpdateTimeToLiveInput",
    TableName=TABLE_NAME_STRICT,
    TimeToLiveSpecification=Struct(
        "TimeToLiveSpecification",
        not_null=True,
        AttributeName=String(not_null=True, min_len=1, max_len=255),
        Enabled=Boolean(not_null=True),
    ),
)
DESCRIBE_TIME_TO_LIVE = Struct("DescribeTimeToLiveInput", TableName=TABLE_NAME_STRICT)

# --- items ----------
PUT_ITEM = Struct(
    "PutItemInput",
    # The older form lists ReturnValues before ReturnConsumedCapacity and TableName (captures of 2026); the rest
    # keeps dynalite's recorded order.
    ReturnValues=RETURN_VALUES,
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    TableName=TABLE_NAME,
    Item=_attribute_map(not_null=True),
    ConditionalOperator=CONDITIONAL_OPERATOR,
    Expected=EXPECTED,
    ReturnItemCollectionMetrics=RETURN_ITEM_COLLECTION_METRICS,
    ConditionExpression=String(),
    ExpressionAttributeValues=_attribute_map(),
    ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
    ReturnValuesOnConditionCheckFailure=RETURN_VALUES_ON_CCF,
)

GET_ITEM = Struct(
    "GetItemInput",
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    AttributesToGet=ATTRIBUTES_TO_GET,
    TableName=TABLE_NAME,
    Key=_attribute_map(not_null=True),
    ConsistentRead=Boolean(),
    ProjectionExpression=String(),
    ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
)

UPDATE_ITEM = Struct(
    "UpdateItemInput",
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    TableName=TABLE_NAME,
    ReturnItemCollectionMetrics=RETURN_ITEM_COLLECTION_METRICS,
    ReturnValues=RETURN_VALUES,
    Key=_attribute_map(not_null=True),
    ConditionalOperator=CONDITIONAL_OPERATOR,
    Expected=EXPECTED,
    AttributeUpdates=Map(Struct("AttributeValueUpdate", Action=Enum("ADD", "PUT", "DELETE"), Value=AttrValue())),
    ConditionExpression=String(),
    UpdateExpression=String(),
    ExpressionAttributeValues=_attribute_map(),
    ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
    ReturnValuesOnConditionCheckFailure=RETURN_VALUES_ON_CCF,
)

DELETE_ITEM = Struct(
    "DeleteItemInput",
    ReturnValues=RETURN_VALUES,  # before ReturnConsumedCapacity in the older form (captures of 2026)
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    TableName=TABLE_NAME,
    ReturnItemCollectionMetrics=RETURN_ITEM_COLLECTION_METRICS,
    Key=_attribute_map(not_null=True),
    ConditionalOperator=CONDITIONAL_OPERATOR,
    Expected=EXPECTED,
    ConditionExpression=String(),
    ExpressionAttributeValues=_attribute_map(),
    ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
    ReturnValuesOnConditionCheckFailure=RETURN_VALUES_ON_CCF,
)

QUERY = Struct(
    "QueryInput",
    Limit=Integer(min=1),
    ExclusiveStartKey=_attribute_map(),
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    AttributesToGet=ATTRIBUTES_TO_GET,
    QueryFilter=FILTER_CONDITIONS,
    Select=SELECT,
    ConditionalOperator=CONDITIONAL_OPERATOR,
    KeyConditions=FILTER_CONDITIONS,
    TableName=TABLE_NAME,
    ConsistentRead=Boolean(),
    IndexName=INDEX_NAME,
    ScanIndexForward=Boolean(),
    KeyConditionExpression=String(),
    FilterExpression=String(),
    ProjectionExpression=String(),
    ExpressionAttributeValues=_attribute_map(),
    ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
)

SCAN = Struct(
    "ScanInput",
    Limit=Integer(min=1),
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    AttributesToGet=ATTRIBUTES_TO_GET,
    Segment=Integer(min=0, max=999999),
    Select=SELECT,
    ScanFilter=FILTER_CONDITIONS,
    ConditionalOperator=CONDITIONAL_OPERATOR,
    TotalSegments=Integer(min=1, max=1000000),
    TableName=TABLE_NAME,
    ExclusiveStartKey=_attribute_map(),
    IndexName=INDEX_NAME,
    FilterExpression=String(),
    ProjectionExpression=String(),
    ExpressionAttributeValues=_attribute_map(),
    ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
    ConsistentRead=Boolean(),
)

_TABLE_KEYS = String(pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255, table_or_arn=True)

BATCH_GET_ITEM = Struct(
    "BatchGetItemInput",
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    RequestItems=Map(
        Struct(
            "KeysAndAttributes",
            Keys=List(_attribute_map(), not_null=True, min_len=1, max_len=100, bare=True),
            AttributesToGet=ATTRIBUTES_TO_GET,
            ConsistentRead=Boolean(),
            ProjectionExpression=String(),
            ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
        ),
        not_null=True,
        min_len=1,
        keys=_TABLE_KEYS,
        bare=True,
    ),
)

BATCH_WRITE_ITEM = Struct(
    "BatchWriteItemInput",
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    ReturnItemCollectionMetrics=RETURN_ITEM_COLLECTION_METRICS,
    RequestItems=Map(
        List(
            Struct(
                "WriteRequest",
                PutRequest=Struct("PutRequest", Item=_attribute_map(not_null=True)),
                DeleteRequest=Struct("DeleteRequest", Key=_attribute_map(not_null=True)),
            )
        ),
        not_null=True,
        min_len=1,
        keys=_TABLE_KEYS,
        value_len=(1, 25),
        bare=True,
    ),
)


def _transact_member(name: str, *, key: bool, update: bool = False, condition_required: bool = False) -> Struct:
    members: dict[str, Any] = {
        "TableName": TABLE_NAME,
        "ExpressionAttributeValues": _attribute_map(),
        "ExpressionAttributeNames": EXPRESSION_ATTRIBUTE_NAMES,
        "ReturnValuesOnConditionCheckFailure": RETURN_VALUES_ON_CCF,
        "ConditionExpression": String(not_null=condition_required),
    }
    members["Key" if key else "Item"] = _attribute_map(not_null=True)
    if update:
        members["UpdateExpression"] = String(not_null=True)
    return Struct(name, **members)


TRANSACT_WRITE_ITEMS = Struct(
    "TransactWriteItemsInput",
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    ReturnItemCollectionMetrics=RETURN_ITEM_COLLECTION_METRICS,
    ClientRequestToken=String(min_len=1, max_len=36),
    TransactItems=List(
        Struct(
            "TransactWriteItem",
            Put=_transact_member("Put", key=False),
            Update=_transact_member("Update", key=True, update=True),
            Delete=_transact_member("Delete", key=True),
            ConditionCheck=_transact_member("ConditionCheck", key=True, condition_required=True),
        ),
        not_null=True,
        min_len=1,
        max_len=100,
    ),
)

TRANSACT_GET_ITEMS = Struct(
    "TransactGetItemsInput",
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    TransactItems=List(
        Struct(
            "TransactGetItem",
            Get=Struct(
                "Get",
                not_null=True,
                Key=_attribute_map(not_null=True),
                TableName=TABLE_NAME,
                ProjectionExpression=String(),
                ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
            ),
        ),
        not_null=True,
        min_len=1,
        max_len=100,
    ),
)

# Every operation's request shape, by wire name.
SHAPES: dict[str, Struct] = {
    "BatchGetItem": BATCH_GET_ITEM,
    "BatchWriteItem": BATCH_WRITE_ITEM,
    "CreateTable": CREATE_TABLE,
    "DeleteItem": DELETE_ITEM,
    "DeleteTable": DELETE_TABLE,
    "DescribeEndpoints": DESCRIBE_ENDPOINTS,
    "DescribeLimits": DESCRIBE_LIMITS,
    "DescribeTable": DESCRIBE_TABLE,
    "DescribeTimeToLive": DESCRIBE_TIME_TO_LIVE,
    "GetItem": GET_ITEM,
    "ListTables": LIST_TABLES,
    "ListTagsOfResource": LIST_TAGS_OF_RESOURCE,
    "PutItem": PUT_ITEM,
    "Query": QUERY,
    "Scan": SCAN,
    "TagResource": TAG_RESOURCE,
    "TransactGetItems": TRANSACT_GET_ITEMS,
    "TransactWriteItems": TRANSACT_WRITE_ITEMS,
    "UntagResource": UNTAG_RESOURCE,
    "UpdateItem": UPDATE_ITEM,
    "UpdateTable": UPDATE_TABLE,
    "UpdateTimeToLive": UPDATE_TIME_TO_LIVE,
}

# --- Contributor Insights ----------
_CONTRIBUTOR_TABLE = String(not_null=True, min_len=1, max_len=1024)  # a table name or ARN
CONTRIBUTOR_INSIGHTS_MODE = Enum("ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS")
UPDATE_CONTRIBUTOR_INSIGHTS = Struct(
    "UpdateContributorInsightsInput",
    TableName=_CONTRIBUTOR_TABLE,
    IndexName=INDEX_NAME,
    ContributorInsightsAction=Enum("ENABLE", "DISABLE", not_null=True),
    ContributorInsightsMode=CONTRIBUTOR_INSIGHTS_MODE,
)
DESCRIBE_CONTRIBUTOR_INSIGHTS = Struct(
    "DescribeContributorInsightsInput", TableName=_CONTRIBUTOR_TABLE, IndexName=INDEX_NAME
)
LIST_CONTRIBUTOR_INSIGHTS = Struct(
    "ListContributorInsightsInput",
    TableName=String(min_len=1, max_len=1024),
    NextToken=String(),
    MaxResults=Integer(max=100),
)
SHAPES["UpdateContributorInsights"] = UPDATE_CONTRIBUTOR_INSIGHTS
SHAPES["DescribeContributorInsights"] = DESCRIBE_CONTRIBUTOR_INSIGHTS
SHAPES["ListContributorInsights"] = LIST_CONTRIBUTOR_INSIGHTS

# --- DynamoDB Streams (DynamoDBStreams_20120810.*) ----------
# The model's Limits only say "at least 1"; the service also refuses more than it serves (100 streams or shards,
# 1,000 records), reported as a constraint like the others.
STREAM_ARN = String(min_len=37, max_len=1024)
SHARD_ID = String(min_len=28, max_len=65)
LIST_STREAMS = Struct(
    "ListStreamsInput",
    TableName=String(pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255),
    Limit=Integer(min=1, max=100),
    ExclusiveStartStreamArn=STREAM_ARN,
)
DESCRIBE_STREAM = Struct(
    "DescribeStreamInput",
    StreamArn=String(not_null=True, min_len=37, max_len=1024),
    Limit=Integer(min=1, max=100),
    ExclusiveStartShardId=SHARD_ID,
    ShardFilter=Struct("ShardFilter", Type=Enum("CHILD_SHARDS"), ShardId=SHARD_ID),
)
GET_SHARD_ITERATOR = Struct(
    "GetShardIteratorInput",
    StreamArn=String(not_null=True, min_len=37, max_len=1024),
    ShardId=String(not_null=True, min_len=28, max_len=65),
    ShardIteratorType=Enum(
        "TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "AT_TIMESTAMP", not_null=True
    ),
    SequenceNumber=String(min_len=21, max_len=40),
)
GET_RECORDS = Struct(
    "GetRecordsInput",
    ShardIterator=String(not_null=True, min_len=1, max_len=2048),
    Limit=Integer(min=1, max=1000),
)
STREAMS_SHAPES: dict[str, Struct] = {
    "DescribeStream": DESCRIBE_STREAM,
    "GetRecords": GET_RECORDS,
    "GetShardIterator": GET_SHARD_ITERATOR,
    "ListStreams": LIST_STREAMS,
}

# --- PartiQL ----------
PARTIQL_STATEMENT = String(not_null=True, min_len=1, max_len=8192)
PARTIQL_PARAMETERS = List(AttrValue(), min_len=1)
EXECUTE_STATEMENT = Struct(
    "ExecuteStatementInput",
    Statement=PARTIQL_STATEMENT,
    Parameters=PARTIQL_PARAMETERS,
    ConsistentRead=Boolean(),
    NextToken=String(min_len=1, max_len=32768),
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
    Limit=Integer(min=1),
    ReturnValuesOnConditionCheckFailure=RETURN_VALUES_ON_CCF,
)
BATCH_EXECUTE_STATEMENT = Struct(
    "BatchExecuteStatementInput",
    Statements=List(
        Struct(
            "BatchStatementRequest",
            Statement=PARTIQL_STATEMENT,
            Parameters=PARTIQL_PARAMETERS,
            ConsistentRead=Boolean(),
            ReturnValuesOnConditionCheckFailure=RETURN_VALUES_ON_CCF,
        ),
        not_null=True,
        min_len=1,
        max_len=25,
    ),
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
)
EXECUTE_TRANSACTION = Struct(
    "ExecuteTransactionInput",
    TransactStatements=List(
        Struct(
            "ParameterizedStatement",
            Statement=PARTIQL_STATEMENT,
            Parameters=PARTIQL_PARAMETERS,
            ReturnValuesOnConditionCheckFailure=RETURN_VALUES_ON_CCF,
        ),
        not_null=True,
        min_len=1,
        max_len=100,
    ),
    ClientRequestToken=String(min_len=1, max_len=36),
    ReturnConsumedCapacity=RETURN_CONSUMED_CAPACITY,
)
SHAPES.update(
    {
        "BatchExecuteStatement": BATCH_EXECUTE_STATEMENT,
        "ExecuteStatement": EXECUTE_STATEMENT,
        "ExecuteTransaction": EXECUTE_TRANSACTION,
    }
)

# --- Export to and import from S3 ----------
_S3_BUCKET_PATTERN = r"^[a-z0-9A-Z]+[\.\-\w]*[a-z0-9A-Z]+$"
_S3_BUCKET_OWNER = String(pattern="[0-9]{12}")
_CLIENT_TOKEN = String(pattern=r"^[^\$]+$")
EXPORT_TABLE_TO_POINT_IN_TIME = Struct(
    "ExportTableToPointInTimeInput",
    TableArn=String(not_null=True, min_len=1, max_len=1024),
    ExportTime=Timestamp(),
    ClientToken=_CLIENT_TOKEN,
    S3Bucket=String(not_null=True, max_len=255, pattern=_S3_BUCKET_PATTERN),
    S3BucketOwner=_S3_BUCKET_OWNER,
    S3Prefix=String(max_len=1024),
    S3SseAlgorithm=Enum("AES256", "KMS"),
    S3SseKmsKeyId=String(min_len=1, max_len=2048),
    ExportFormat=Enum("DYNAMODB_JSON", "ION"),
    ExportType=Enum("FULL_EXPORT", "INCREMENTAL_EXPORT"),
    IncrementalExportSpecification=Struct(
        "IncrementalExportSpecification",
        ExportFromTime=Timestamp(),
        ExportToTime=Timestamp(),
        ExportViewType=Enum("NEW_IMAGE", "NEW_AND_OLD_IMAGES"),
    ),
    FilterSpecification=Struct(
        "FilterSpecification",
        FilterExpression=String(),
        ProjectionExpression=String(),
        KeyConditionExpression=String(),
        ExpressionAttributeNames=EXPRESSION_ATTRIBUTE_NAMES,
        ExpressionAttributeValues=Map(AttrValue()),
    ),
)
DESCRIBE_EXPORT = Struct("DescribeExportInput", ExportArn=String(not_null=True, min_len=37, max_len=1024))
LIST_EXPORTS = Struct(
    "ListExportsInput",
    TableArn=String(min_len=1, max_len=1024),
    MaxResults=Integer(min=1, max=25),
    NextToken=String(),
)
_GSI_LIST = CREATE_TABLE.member("GlobalSecondaryIndexes")
assert _GSI_LIST is not None
IMPORT_TABLE = Struct(
    "ImportTableInput",
    ClientToken=_CLIENT_TOKEN,
    S3BucketSource=Struct(
        "S3BucketSource",
        not_null=True,
        S3BucketOwner=_S3_BUCKET_OWNER,
        S3Bucket=String(not_null=True, max_len=255, pattern=_S3_BUCKET_PATTERN),
        S3KeyPrefix=String(max_len=1024),
    ),
    InputFormat=Enum("DYNAMODB_JSON", "ION", "CSV", not_null=True),
    InputFormatOptions=Struct(
        "InputFormatOptions",
        Csv=Struct(
            "CsvOptions",
            Delimiter=String(min_len=1, max_len=1, pattern="[,;:|\t ]"),
            HeaderList=List(String(min_len=1, max_len=65536), min_len=1, max_len=255),
        ),
    ),
    InputCompressionType=Enum("GZIP", "ZSTD", "NONE"),
    TableCreationParameters=Struct(
        "TableCreationParameters",
        not_null=True,
        TableName=String(not_null=True, min_len=3, max_len=255, pattern=TABLE_NAME_PATTERN),
        AttributeDefinitions=ATTRIBUTE_DEFINITIONS,
        KeySchema=KEY_SCHEMA,
        BillingMode=BILLING_MODE,
        ProvisionedThroughput=PROVISIONED_THROUGHPUT,
        OnDemandThroughput=ON_DEMAND_THROUGHPUT,
        SSESpecification=SSE_SPECIFICATION,
        GlobalSecondaryIndexes=_GSI_LIST,
    ),
)
DESCRIBE_IMPORT = Struct("DescribeImportInput", ImportArn=String(not_null=True, min_len=37, max_len=1024))
LIST_IMPORTS = Struct(
    "ListImportsInput",
    TableArn=String(min_len=1, max_len=1024),
    PageSize=Integer(min=1, max=25),
    NextToken=String(min_len=112, max_len=1024, pattern="([0-9a-f]{16})+"),
)
SHAPES.update(
    {
        "ExportTableToPointInTime": EXPORT_TABLE_TO_POINT_IN_TIME,
        "DescribeExport": DESCRIBE_EXPORT,
        "ListExports": LIST_EXPORTS,
        "ImportTable": IMPORT_TABLE,
        "DescribeImport": DESCRIBE_IMPORT,
        "ListImports": LIST_IMPORTS,
    }
)

# --- point-in-time recovery ----------
UPDATE_CONTINUOUS_BACKUPS = Struct(
    "UpdateContinuousBackupsInput",
    TableName=TABLE_NAME_STRICT,
    PointInTimeRecoverySpecification=Struct(
        "PointInTimeRecoverySpecification",
        not_null=True,
        PointInTimeRecoveryEnabled=Boolean(not_null=True),
        RecoveryPeriodInDays=Integer(min=1, max=35),
    ),
)
DESCRIBE_CONTINUOUS_BACKUPS = Struct("DescribeContinuousBackupsInput", TableName=TABLE_NAME_STRICT)
_RESTORE_TARGET_TABLE_NAME = String(required=True, pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255)
# What a restore (from a backup or to a point in time) may set on the new table, in DynamoDB's order.
_GSI_LIST = CREATE_TABLE.member("GlobalSecondaryIndexes")
_LSI_LIST = CREATE_TABLE.member("LocalSecondaryIndexes")
assert _GSI_LIST is not None and _LSI_LIST is not None
_RESTORE_OVERRIDES: dict[str, Shape] = {
    "BillingModeOverride": BILLING_MODE,
    "GlobalSecondaryIndexOverride": _GSI_LIST,
    "LocalSecondaryIndexOverride": _LSI_LIST,
    "ProvisionedThroughputOverride": PROVISIONED_THROUGHPUT,
    "OnDemandThroughputOverride": ON_DEMAND_THROUGHPUT,
    "SSESpecificationOverride": SSE_SPECIFICATION,
}
RESTORE_TABLE_TO_POINT_IN_TIME = Struct(
    "RestoreTableToPointInTimeInput",
    SourceTableArn=String(min_len=1, max_len=1024),
    SourceTableName=String(pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255),
    TargetTableName=_RESTORE_TARGET_TABLE_NAME,
    UseLatestRestorableTime=Boolean(),
    RestoreDateTime=Timestamp(),
    **_RESTORE_OVERRIDES,  # type: ignore[arg-type]  # mypy cannot tell that no key is "not_null"
)
SHAPES.update(
    {
        "UpdateContinuousBackups": UPDATE_CONTINUOUS_BACKUPS,
        "DescribeContinuousBackups": DESCRIBE_CONTINUOUS_BACKUPS,
        "RestoreTableToPointInTime": RESTORE_TABLE_TO_POINT_IN_TIME,
    }
)

# --- on-demand backups (api/backups.py) ----------
BACKUP_ARN = String(not_null=True, min_len=37, max_len=1024)
BACKUP_NAME = String(not_null=True, pattern=TABLE_NAME_PATTERN, min_len=3, max_len=255)
CREATE_BACKUP = Struct("CreateBackupInput", TableName=TABLE_NAME_STRICT, BackupName=BACKUP_NAME)
DESCRIBE_BACKUP = Struct("DescribeBackupInput", BackupArn=BACKUP_ARN)
DELETE_BACKUP = Struct("DeleteBackupInput", BackupArn=BACKUP_ARN)
LIST_BACKUPS = Struct(
    "ListBackupsInput",
    TableName=String(table_or_arn=True),
    Limit=Integer(min=1, max=100),
    TimeRangeLowerBound=Timestamp(),
    TimeRangeUpperBound=Timestamp(),
    ExclusiveStartBackupArn=String(min_len=37, max_len=1024),
    BackupType=Enum("USER", "SYSTEM", "AWS_BACKUP", "ALL"),
)
RESTORE_TABLE_FROM_BACKUP = Struct(
    "RestoreTableFromBackupInput",
    TargetTableName=_RESTORE_TARGET_TABLE_NAME,
    BackupArn=BACKUP_ARN,
    **_RESTORE_OVERRIDES,  # type: ignore[arg-type]
)
SHAPES.update(
    {
        "CreateBackup": CREATE_BACKUP,
        "DescribeBackup": DESCRIBE_BACKUP,
        "DeleteBackup": DELETE_BACKUP,
        "ListBackups": LIST_BACKUPS,
        "RestoreTableFromBackup": RESTORE_TABLE_FROM_BACKUP,
    }
)
