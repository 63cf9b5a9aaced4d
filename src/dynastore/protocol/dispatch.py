"""OPERATIONS: the single list of supported operations, each with its request shape and handler; STREAMS_OPERATIONS
the same for the DynamoDB Streams API served on the same endpoint (target prefix ``DynamoDBStreams_20120810.``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from dynastore.api import (
    authorization,
    backups,
    batch_execute_statement,
    batch_get_item,
    batch_write_item,
    continuous_backups,
    contributor_insights,
    create_table,
    delete_item,
    delete_table,
    describe_endpoints,
    describe_limits,
    describe_table,
    execute_statement,
    execute_transaction,
    exports,
    get_item,
    imports,
    legacy_global_tables,
    list_tables,
    put_item,
    query,
    replica_auto_scaling,
    resource_policies,
    restore_table_to_point_in_time,
    scan,
    schemas,
    streams,
    strong_items,
    tags,
    time_to_live,
    transact_get_items,
    transact_write_items,
    update_item,
    update_table,
)
from dynastore.api.services import RequestServices, ServicesHandler
from dynastore.engine.context import Context, Engine
from dynastore.model.namespace import Namespace
from dynastore.protocol.protocol import Operation
from dynastore.security.caller import Caller
from dynastore.util.arn import parse_dynamodb_arn
from dynastore.validation import request_validator

# A handler takes the validated request and the context of the call (engine/context.py): the caller's namespace
# (its account and region), whose tables it finds in ``ctx.catalog`` and whose ARNs it builds from
# ``ctx.namespace``, and the caller (``ctx.origin``); it serves every namespace without knowing which one it serves.
Handler = Callable[[dict[str, Any], Context], Any]


class WithServices:
    __slots__ = ("handler",)

    def __init__(self, handler: ServicesHandler) -> None:
        self.handler = handler


OPERATIONS: dict[str, tuple[Any, Handler | WithServices]] = {
    "CreateTable": (schemas.CREATE_TABLE, create_table.handle),
    "DeleteTable": (schemas.DELETE_TABLE, delete_table.handle),
    "DescribeTable": (schemas.DESCRIBE_TABLE, describe_table.handle),
    "ListTables": (schemas.LIST_TABLES, list_tables.handle),
    "UpdateTable": (schemas.UPDATE_TABLE, update_table.handle),
    "DescribeLimits": (schemas.DESCRIBE_LIMITS, describe_limits.handle),
    "DescribeEndpoints": (schemas.DESCRIBE_ENDPOINTS, describe_endpoints.handle),
    "TagResource": (schemas.TAG_RESOURCE, tags.handle_tag_resource),
    "UntagResource": (schemas.UNTAG_RESOURCE, tags.handle_untag_resource),
    "ListTagsOfResource": (schemas.LIST_TAGS_OF_RESOURCE, tags.handle_list_tags_of_resource),
    "UpdateTimeToLive": (schemas.UPDATE_TIME_TO_LIVE, time_to_live.handle_update),
    "DescribeTimeToLive": (schemas.DESCRIBE_TIME_TO_LIVE, time_to_live.handle_describe),
    "PutItem": (schemas.PUT_ITEM, WithServices(put_item.handle)),
    "GetItem": (schemas.GET_ITEM, WithServices(get_item.handle)),
    "UpdateItem": (schemas.UPDATE_ITEM, WithServices(update_item.handle)),
    "DeleteItem": (schemas.DELETE_ITEM, WithServices(delete_item.handle)),
    "BatchWriteItem": (schemas.BATCH_WRITE_ITEM, WithServices(batch_write_item.handle)),
    "UpdateContributorInsights": (schemas.UPDATE_CONTRIBUTOR_INSIGHTS, contributor_insights.handle_update),
    "DescribeContributorInsights": (schemas.DESCRIBE_CONTRIBUTOR_INSIGHTS, contributor_insights.handle_describe),
    "ListContributorInsights": (schemas.LIST_CONTRIBUTOR_INSIGHTS, contributor_insights.handle_list),
    "Query": (schemas.QUERY, WithServices(strong_items.consistently(query.handle))),
    "Scan": (schemas.SCAN, WithServices(strong_items.consistently(scan.handle))),
    "BatchGetItem": (schemas.BATCH_GET_ITEM, WithServices(strong_items.consistently(batch_get_item.handle))),
    "TransactWriteItems": (schemas.TRANSACT_WRITE_ITEMS, transact_write_items.handle),
    "TransactGetItems": (schemas.TRANSACT_GET_ITEMS, transact_get_items.handle),
    "PutResourcePolicy": (schemas.PUT_RESOURCE_POLICY, resource_policies.handle_put),
    "GetResourcePolicy": (schemas.GET_RESOURCE_POLICY, resource_policies.handle_get),
    "DeleteResourcePolicy": (schemas.DELETE_RESOURCE_POLICY, resource_policies.handle_delete),
    "ExecuteStatement": (schemas.EXECUTE_STATEMENT, WithServices(execute_statement.handle)),
    "BatchExecuteStatement": (schemas.BATCH_EXECUTE_STATEMENT, WithServices(batch_execute_statement.handle)),
    "ExecuteTransaction": (schemas.EXECUTE_TRANSACTION, WithServices(execute_transaction.handle)),
}
# point-in-time recovery (docs/backups.md "Point-in-time recovery")
OPERATIONS.update(
    {
        "UpdateContinuousBackups": (schemas.UPDATE_CONTINUOUS_BACKUPS, continuous_backups.handle_update),
        "DescribeContinuousBackups": (schemas.DESCRIBE_CONTINUOUS_BACKUPS, continuous_backups.handle_describe),
        "RestoreTableToPointInTime": (schemas.RESTORE_TABLE_TO_POINT_IN_TIME, restore_table_to_point_in_time.handle),
    }
)
# on-demand backups (docs/backups.md "On-demand backups")
OPERATIONS.update(
    {
        "CreateBackup": (schemas.CREATE_BACKUP, backups.handle_create),
        "DescribeBackup": (schemas.DESCRIBE_BACKUP, backups.handle_describe),
        "ListBackups": (schemas.LIST_BACKUPS, backups.handle_list),
        "DeleteBackup": (schemas.DELETE_BACKUP, backups.handle_delete),
        "RestoreTableFromBackup": (schemas.RESTORE_TABLE_FROM_BACKUP, backups.handle_restore),
    }
)

# Export to and import from S3 (api/exports.py, api/imports.py; run by engine/transfers.py).
OPERATIONS.update(
    {
        "ExportTableToPointInTime": (schemas.EXPORT_TABLE_TO_POINT_IN_TIME, exports.handle_export),
        "DescribeExport": (schemas.DESCRIBE_EXPORT, exports.handle_describe),
        "ListExports": (schemas.LIST_EXPORTS, exports.handle_list),
        "ImportTable": (schemas.IMPORT_TABLE, imports.handle_import),
        "DescribeImport": (schemas.DESCRIBE_IMPORT, imports.handle_describe),
        "ListImports": (schemas.LIST_IMPORTS, imports.handle_list),
    }
)

# Global tables (docs/global-tables.md): UpdateTable's ReplicaUpdates does the rest (api/replica_updates.py).
OPERATIONS.update(
    {
        "DescribeTableReplicaAutoScaling": (
            schemas.DESCRIBE_TABLE_REPLICA_AUTO_SCALING,
            replica_auto_scaling.handle_describe,
        ),
        "UpdateTableReplicaAutoScaling": (
            schemas.UPDATE_TABLE_REPLICA_AUTO_SCALING,
            replica_auto_scaling.handle_update,
        ),
        "DescribeGlobalTable": (schemas.DESCRIBE_GLOBAL_TABLE, legacy_global_tables.handle_describe),
        "DescribeGlobalTableSettings": (
            schemas.DESCRIBE_GLOBAL_TABLE_SETTINGS,
            legacy_global_tables.handle_describe_settings,
        ),
        "ListGlobalTables": (schemas.LIST_GLOBAL_TABLES, legacy_global_tables.handle_list),
        "CreateGlobalTable": (schemas.CREATE_GLOBAL_TABLE, legacy_global_tables.handle_create),
        "UpdateGlobalTable": (schemas.UPDATE_GLOBAL_TABLE, legacy_global_tables.handle_update),
        "UpdateGlobalTableSettings": (
            schemas.UPDATE_GLOBAL_TABLE_SETTINGS,
            legacy_global_tables.handle_update_settings,
        ),
    }
)

STREAMS_OPERATIONS: dict[str, tuple[Any, Handler]] = {
    "ListStreams": (schemas.LIST_STREAMS, streams.handle_list_streams),
    "DescribeStream": (schemas.DESCRIBE_STREAM, streams.handle_describe_stream),
    "GetShardIterator": (schemas.GET_SHARD_ITERATOR, streams.handle_get_shard_iterator),
    "GetRecords": (schemas.GET_RECORDS, streams.handle_get_records),
}


# Every operation of DynamoDB's API (service model 2012-08-10; tests/test_docs.py keeps it equal to botocore's).
# Those not in OPERATIONS answer UnknownOperationException with a message naming them (messages.OPERATION_NOT_SERVED).
DYNAMODB_OPERATIONS = frozenset(
    {
        "BatchExecuteStatement", "BatchGetItem", "BatchWriteItem", "CancelBulkOperation", "CreateBackup",
        "CreateGlobalTable", "CreateTable", "DeleteBackup", "DeleteItem", "DeleteResourcePolicy", "DeleteTable",
        "DescribeBackup", "DescribeBulkOperation", "DescribeContinuousBackups", "DescribeContributorInsights",
        "DescribeEndpoints", "DescribeExport", "DescribeGlobalTable", "DescribeGlobalTableSettings", "DescribeImport",
        "DescribeKinesisStreamingDestination", "DescribeLimits", "DescribeTable", "DescribeTableReplicaAutoScaling",
        "DescribeTimeToLive", "DisableKinesisStreamingDestination", "EnableKinesisStreamingDestination",
        "ExecuteStatement", "ExecuteTransaction", "ExportTableToPointInTime", "GetItem", "GetResourcePolicy",
        "ImportTable", "ListBackups", "ListBulkOperations", "ListContributorInsights", "ListExports",
        "ListGlobalTables", "ListImports", "ListTables", "ListTagsOfResource", "PutItem", "PutResourcePolicy", "Query",
        "RestoreTableFromBackup", "RestoreTableToPointInTime", "Scan", "SearchVectors", "StartBulkPutItems",
        "TagResource", "TransactGetItems", "TransactWriteItems", "UntagResource", "UpdateContinuousBackups",
        "UpdateContributorInsights", "UpdateGlobalTable", "UpdateGlobalTableSettings", "UpdateItem",
        "UpdateKinesisStreamingDestination", "UpdateTable", "UpdateTableReplicaAutoScaling", "UpdateTimeToLive",
    }
)  # fmt: skip


def not_served() -> frozenset[str]:
    """DynamoDB's operations that dynastore does not serve (yet)."""
    return DYNAMODB_OPERATIONS.difference(OPERATIONS)  # a frozenset (minus dict keys would give a set)


def bind(ctx: Context, services: RequestServices) -> dict[str, Operation]:
    """The operations bound to one server's engine (``ctx``: a context of it, any) and request-side services,
    ready for the protocol layer."""
    return {
        name: Operation(name, _runner(name, shape, handler, ctx, services))
        for name, (shape, handler) in OPERATIONS.items()
    }


def bind_streams(ctx: Context, services: RequestServices) -> dict[str, Operation]:
    """The DynamoDB Streams operations bound to one server's engine and request-side services."""
    return {
        name: Operation(name, _runner(name, shape, handler, ctx, services))
        for name, (shape, handler) in STREAMS_OPERATIONS.items()
    }


def _runner(
    name: str, shape: Any, handler: Handler | WithServices, ctx: Context, services: RequestServices
) -> Callable[[Any, Caller], Any]:
    """The operation as the protocol calls it: run in the context of the call (``_Contexts``): the caller's
    namespace (its account and region; always the config's with --shared-namespace) and the caller as its origin.
    Without authentication nothing else is added to a request; with it, an authenticated caller's request is
    authorized (api/authorization.py) in that namespace, by the identity policies of ``services``, once its shape
    is valid and before the operation looks at anything."""
    context_of = _Contexts(ctx.engine).of
    validate_request = request_validator(shape)
    # A handler that takes the request-side services is given them by a partial (no wrapper call of its own on
    # the item operations' path).
    call: Handler = partial(handler.handler, services) if isinstance(handler, WithServices) else handler
    if ctx.config.auth == "none":

        def run(body: Any, caller: Caller) -> Any:
            request = validate_request(body)
            return call(request, context_of(caller))

        return run

    authorize = authorization.authorize

    def run_authorized(body: Any, caller: Caller) -> Any:
        request = validate_request(body)
        scoped = context_of(caller)
        if caller.authenticated:
            authorize(name, request, caller, scoped, services)
            scoped = _owner_context(request.get("TableName"), scoped)
        return call(request, scoped)

    return run_authorized


def _owner_context(table_name: Any, ctx: Context) -> Context:
    """An authorized request naming another account's table of its region by ARN runs in that table's namespace,
    as DynamoDB serves cross-account access that the table's resource policy allows. (Another region's table is
    not this endpoint's: the catalog refuses its ARN.)"""
    arn = parse_dynamodb_arn(table_name) if isinstance(table_name, str) else None
    namespace = ctx.namespace
    if arn is None or arn.region != namespace.region or arn.account == namespace.account_id:
        return ctx
    return ctx.in_namespace(arn.account, arn.region)


class _Contexts:
    """The context of each call: the caller's namespace (the default one for every caller with
    --shared-namespace, DynamoDB Local's -sharedDb) and the caller as its origin. The context of the last caller
    in the default namespace is kept for its next call: without authentication every call of the configured
    region is the same anonymous caller's, so the embedded default makes nothing per call."""

    __slots__ = ("_engine", "_default", "_shared", "_last_caller", "_last")

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._default = engine.default_namespace
        self._shared = engine.config.shared_namespace
        self._last_caller: Caller | None = None
        self._last: Context | None = None

    def of(self, caller: Caller) -> Context:
        last = self._last
        if caller is self._last_caller and last is not None:
            return last
        default = self._default
        if self._shared or (caller.account_id == default.account_id and caller.region == default.region):
            # The default namespace's catalog is the same object for good: the context can be kept.
            last = self._last = Context(self._engine, default, self._engine.catalog, caller.origin)
            self._last_caller = caller
            return last
        return self._engine.context(Namespace(caller.account_id, caller.region), caller.origin)
