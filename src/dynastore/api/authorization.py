"""What each operation must be allowed (authentication on): the mapping from a request to its checks, the
questions security/authorization.py evaluates against the caller's identity policies and the resource's policy.

Each operation maps to a list of checks: an action (``dynamodb:<Operation>``), a resource ARN (the table; its
index for a Query or Scan with IndexName; the stream for the Streams API; ``*`` for account-wide operations),
the table whose resource policy applies, and the request's condition keys. BatchGetItem and BatchWriteItem make
one check per table, with the keys and attributes of that table's items; TransactWriteItems and TransactGetItems
one per member, as the member's own action (PutItem, UpdateItem, DeleteItem, ConditionCheckItem, GetItem) with
``dynamodb:EnclosingOperation``. ExecuteStatement, BatchExecuteStatement and ExecuteTransaction make one check
per statement, as its own action (PartiQLSelect, -Insert, -Update, -Delete) with the condition keys of what it
reads and writes (api/partiql_access.py). The first check that fails raises AccessDeniedException, before the
operation looks at its tables.

Condition keys (docs/security.md "Policies" lists them per operation): ``dynamodb:LeadingKeys``,
``dynamodb:Attributes``, ``dynamodb:Select`` (reads; always set: the request's, else SPECIFIC_ATTRIBUTES with a
projection, ALL_PROJECTED_ATTRIBUTES on an index, ALL_ATTRIBUTES), ``dynamodb:ReturnValues`` (PutItem,
UpdateItem, DeleteItem; NONE when absent), ``dynamodb:ReturnConsumedCapacity`` (NONE when absent) and
``dynamodb:EnclosingOperation``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dynastore.api.access_context import expression_names, key_text, partition_equality
from dynastore.api.partiql_access import statement_values
from dynastore.api.partiql_requests import parameters
from dynastore.api.services import RequestServices
from dynastore.engine.context import Context
from dynastore.errors import DynamoError
from dynastore.model.table_schema import TableDef
from dynastore.partiql import ast as partiql_ast
from dynastore.partiql.cache import StatementCache
from dynastore.partiql.tokens import PartiQLSyntaxError
from dynastore.security import authorization
from dynastore.security.authorization import Check, Values
from dynastore.security.caller import Caller
from dynastore.security.conditions import UNKNOWN
from dynastore.security.policy_documents import Policy
from dynastore.security.sigv4 import REGION_NAME
from dynastore.util.arn import parse_dynamodb_arn

__all__ = ["authorize", "checks_for"]


def authorize(operation: str, req: dict[str, Any], caller: Caller, ctx: Context, services: RequestServices) -> None:
    """Raise AccessDeniedException unless ``caller`` is allowed every check of the request, in the namespace of
    ``ctx``, by the identity policies of ``services`` (security/authorization.py)."""
    identity = services.policies.for_caller(caller)
    action = _PLAIN_ITEM_ACTIONS.get(operation)
    if action is not None and not authorization.reads_request(caller, identity):
        _authorize_plain_item(action, req, caller, identity, ctx)
        return
    checks = checks_for(operation, req, ctx, services)
    authorization.authorize_by(checks, caller, identity, ctx.namespace.account_id, ctx.clock)
    if operation == "PutResourcePolicy" and not req.get("ConfirmRemoveSelfResourceAccess"):
        arn, text = req.get("ResourceArn"), req.get("Policy")
        if isinstance(arn, str) and isinstance(text, str):
            authorization.refuse_self_lockout(arn, text, caller)


# Item operations allowed to callers whose policies read no condition key, by (caller ARN, action, TableName,
# account, region): the allow stands while the caller, its identity policies and the table (whose definition
# holds its resource policy) are the very objects it was made with; anything else is decided again.
_ALLOWED: Final[dict[tuple[str, str, str, str, str], tuple[Caller, tuple[Policy, ...], TableDef | None]]] = {}
_ALLOWED_LIMIT: Final = 4096


def _authorize_plain_item(
    action: str, req: dict[str, Any], caller: Caller, identity: tuple[Policy, ...], ctx: Context
) -> None:
    """A GetItem, PutItem, UpdateItem or DeleteItem of a caller whose policies read nothing of the request: on a
    table named by its name, an allow already made for the same caller, policies and table stands (the table is
    looked up on every request: its resource policy, or its being another table, changes the answer)."""
    name = req.get("TableName")
    namespace = ctx.namespace
    key = None
    if isinstance(name, str) and not name.startswith("arn:"):
        key = (caller.arn, action, name, namespace.account_id, namespace.region)
        found = _ALLOWED.get(key)
        if found is not None and found[0] is caller and found[1] is identity and found[2] is _find(ctx, name):
            return
    check = _item_check(action, req, ctx, None, keys=False)
    authorization.authorize_by([check], caller, identity, namespace.account_id, ctx.clock)
    if key is not None and not check.values:  # the table's resource policy read nothing either
        if len(_ALLOWED) >= _ALLOWED_LIMIT:
            _ALLOWED.clear()
        _ALLOWED[key] = (caller, identity, check.table)


def checks_for(operation: str, req: dict[str, Any], ctx: Context, services: RequestServices) -> list[Check]:
    """The checks of the request; a PartiQL operation's statements are parsed through the statement cache of
    ``services``."""
    builder = _BUILDERS.get(operation)
    if builder is not None:
        return builder(req, ctx)
    partiql = _STATEMENT_BUILDERS.get(operation)
    if partiql is not None:
        return partiql(req, ctx, services.statements)
    target = _TABLE_RESOURCE.get(operation)
    if target is not None:
        return [_table_check("dynamodb:" + operation, req.get(target), ctx, {})]
    return [Check("dynamodb:" + operation, "*", {})]


# ---- targets ----------------------------------------------------------------------------------------------


class _Target:
    __slots__ = ("arn", "table", "stream_label")

    def __init__(self, arn: str, table: TableDef | None, stream_label: str | None = None) -> None:
        self.arn = arn
        self.table = table  # None: no such table (or none named)
        self.stream_label = stream_label


def _target(name: Any, ctx: Context) -> _Target:
    """The table a TableName (or a table or stream ARN) names, with its ARN. Another account's or region's
    table is found in its own namespace, which holds it and its resource policy."""
    text = name if isinstance(name, str) else ""
    namespace = ctx.namespace
    if not text.startswith("arn:"):
        return _Target(_arn_prefix(namespace.region, namespace.account_id) + text, _find(ctx, text))
    arn = parse_dynamodb_arn(text)
    if arn is None or not arn.table:
        return _Target(text, None)
    owner = ctx
    if arn.account != namespace.account_id or arn.region != namespace.region:
        owner = ctx.in_namespace(arn.account, arn.region)
    return _Target(text, _find(owner, arn.table), arn.stream_label)


def _find(ctx: Context, table_name: str) -> TableDef | None:
    if not table_name:
        return None
    try:
        return ctx.catalog.find(table_name)
    except DynamoError:
        return None


_PREFIXES: dict[tuple[str, str], str] = {}


def _arn_prefix(region: str, account: str) -> str:
    prefix = _PREFIXES.get((region, account))
    if prefix is None:
        prefix = _PREFIXES[(region, account)] = f"arn:aws:dynamodb:{region}:{account}:table/"
    return prefix


def _table_check(action: str, name: Any, ctx: Context, values: Values, index: Any = None) -> Check:
    target = _target(name, ctx)
    arn = target.arn
    if isinstance(index, str):
        arn = f"{arn}/index/{index}"
    return Check(action, arn, values, target.table, target.stream_label)


# ---- item operations ----------------------------------------------------------------------------------------


def _leading(table: TableDef | None, key: Any, out: list[str]) -> None:
    if table is not None and isinstance(key, dict):
        text = key_text(key.get(table.key_schema.hash_key.name))
        if text is not None:
            out.append(text)


def _names(req: dict[str, Any], attrs: set[str], *members: str) -> None:
    placeholders = req.get("ExpressionAttributeNames")
    for member in members:
        expression_names(req.get(member), placeholders, attrs)


def _legacy_names(req: dict[str, Any], attrs: set[str], *members: str) -> None:
    for member in members:
        value = req.get(member)
        if isinstance(value, dict):
            attrs.update(k for k in value if isinstance(k, str))
        elif isinstance(value, list):
            attrs.update(v for v in value if isinstance(v, str))


def _values(leading: list[str], attrs: set[str], **single: str) -> Values:
    values: Values = {"dynamodb:leadingkeys": tuple(leading), "dynamodb:attributes": tuple(sorted(attrs))}
    for name, value in single.items():
        values["dynamodb:" + name.lower()] = value
    return values


def _capacity(req: dict[str, Any]) -> str:
    mode = req.get("ReturnConsumedCapacity")
    return mode if isinstance(mode, str) else "NONE"


# The request members that name attributes, beyond the key (an item operation with none of them skips the scan).
_ITEM_EXPRESSIONS = ("ProjectionExpression", "ConditionExpression", "UpdateExpression")
_ITEM_LEGACY = ("AttributesToGet", "Expected", "AttributeUpdates")


def _item_check(action: str, req: dict[str, Any], ctx: Context, enclosing: str | None, *, keys: bool = True) -> Check:
    """GetItem, PutItem, UpdateItem, DeleteItem and ConditionCheckItem, alone or as a transaction's member.
    ``keys=False``: the caller's policies read no condition key (``authorization.reads_request``), so unless the
    table's resource policy does, the check carries none (reading them is half the cost of authorizing)."""
    target = _target(req.get("TableName"), ctx)
    if not keys:
        plain = Check(action, target.arn, {}, target.table)
        policy = authorization.resource_policy(plain)
        if policy is None or not policy.reads_request:
            return plain
    leading: list[str] = []
    key = req.get("Item") if action == "dynamodb:PutItem" else req.get("Key")
    _leading(target.table, key, leading)
    attrs: set[str] = set(key) if isinstance(key, dict) else set()
    if len(req) > 2:  # more than TableName and the key: members that may name attributes
        _names(req, attrs, *_ITEM_EXPRESSIONS)
        _legacy_names(req, attrs, *_ITEM_LEGACY)
    values: Values = {
        "dynamodb:leadingkeys": tuple(leading),
        "dynamodb:attributes": tuple(sorted(attrs)) if len(attrs) > 1 else tuple(attrs),
    }
    if enclosing is not None:
        values["dynamodb:enclosingoperation"] = enclosing
    else:
        values["dynamodb:returnconsumedcapacity"] = _capacity(req)
    if action == "dynamodb:GetItem":
        projected = req.get("ProjectionExpression") is not None or req.get("AttributesToGet") is not None
        values["dynamodb:select"] = "SPECIFIC_ATTRIBUTES" if projected else "ALL_ATTRIBUTES"
    elif enclosing is None and action != "dynamodb:ConditionCheckItem":
        returns = req.get("ReturnValues")
        values["dynamodb:returnvalues"] = returns if isinstance(returns, str) else "NONE"
    return Check(action, target.arn, values, target.table)


def _single_item(action: str) -> Callable[[dict[str, Any], Context], list[Check]]:
    def build(req: dict[str, Any], ctx: Context) -> list[Check]:
        return [_item_check(action, req, ctx, None)]

    return build


def _query_or_scan(action: str) -> Callable[[dict[str, Any], Context], list[Check]]:
    def build(req: dict[str, Any], ctx: Context) -> list[Check]:
        target = _target(req.get("TableName"), ctx)
        index_name = req.get("IndexName")
        leading: list[str] = []
        table = target.table
        unknown = False
        if action == "dynamodb:Query" and table is not None:
            schema = table.key_schema
            if isinstance(index_name, str):
                index = table.index(index_name)
                schema = index.key_schema if index is not None else schema
            value = partition_equality(req, schema.hash_key.name)
            if value is not None:
                leading.append(value)
            else:  # no partition-key equality read: refused by the operation, or one this reading missed
                unknown = True
        attrs: set[str] = set()
        _names(req, attrs, "ProjectionExpression", "KeyConditionExpression", "FilterExpression")
        _legacy_names(req, attrs, "AttributesToGet", "KeyConditions", "QueryFilter", "ScanFilter")
        select = req.get("Select")
        if not isinstance(select, str):
            if req.get("ProjectionExpression") is not None or req.get("AttributesToGet") is not None:
                select = "SPECIFIC_ATTRIBUTES"
            else:
                select = "ALL_PROJECTED_ATTRIBUTES" if isinstance(index_name, str) else "ALL_ATTRIBUTES"
        values = _values(leading, attrs, Select=select, ReturnConsumedCapacity=_capacity(req))
        if unknown:
            values["dynamodb:leadingkeys"] = UNKNOWN  # fail closed
        arn = f"{target.arn}/index/{index_name}" if isinstance(index_name, str) else target.arn
        return [Check(action, arn, values, table)]

    return build


def _batch_get(req: dict[str, Any], ctx: Context) -> list[Check]:
    checks: list[Check] = []
    items = req.get("RequestItems")
    for name, spec in items.items() if isinstance(items, dict) else ():
        target = _target(name, ctx)
        leading: list[str] = []
        attrs: set[str] = set()
        spec = spec if isinstance(spec, dict) else {}
        for key in spec.get("Keys") or ():
            _leading(target.table, key, leading)
            if isinstance(key, dict):
                attrs.update(key)
        _names(spec, attrs, "ProjectionExpression")
        _legacy_names(spec, attrs, "AttributesToGet")
        projected = spec.get("ProjectionExpression") is not None or spec.get("AttributesToGet") is not None
        select = "SPECIFIC_ATTRIBUTES" if projected else "ALL_ATTRIBUTES"
        values = _values(leading, attrs, Select=select, ReturnConsumedCapacity=_capacity(req))
        checks.append(Check("dynamodb:BatchGetItem", target.arn, values, target.table))
    return checks


def _batch_write(req: dict[str, Any], ctx: Context) -> list[Check]:
    checks: list[Check] = []
    items = req.get("RequestItems")
    for name, writes in items.items() if isinstance(items, dict) else ():
        target = _target(name, ctx)
        leading: list[str] = []
        attrs: set[str] = set()
        for write in writes if isinstance(writes, list) else ():
            put = write.get("PutRequest") if isinstance(write, dict) else None
            delete = write.get("DeleteRequest") if isinstance(write, dict) else None
            key = put.get("Item") if isinstance(put, dict) else delete.get("Key") if isinstance(delete, dict) else None
            _leading(target.table, key, leading)
            if isinstance(key, dict):
                attrs.update(key)
        values = _values(leading, attrs, ReturnConsumedCapacity=_capacity(req))
        checks.append(Check("dynamodb:BatchWriteItem", target.arn, values, target.table))
    return checks


_TRANSACT_WRITE_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


def _transact(req: dict[str, Any], ctx: Context, enclosing: str, actions: dict[str, str]) -> list[Check]:
    checks: list[Check] = []
    for member in req.get("TransactItems") or ():
        for kind, action in actions.items():
            body = member.get(kind) if isinstance(member, dict) else None
            if isinstance(body, dict):
                checks.append(_item_check(action, body, ctx, enclosing))
    return checks


def _transact_write(req: dict[str, Any], ctx: Context) -> list[Check]:
    return _transact(req, ctx, "TransactWriteItems", _TRANSACT_WRITE_ACTIONS)


def _transact_get(req: dict[str, Any], ctx: Context) -> list[Check]:
    return _transact(req, ctx, "TransactGetItems", {"Get": "dynamodb:GetItem"})


# ---- control plane and streams ------------------------------------------------------------------------------


def _create_table(req: dict[str, Any], ctx: Context) -> list[Check]:
    check = _table_check("dynamodb:CreateTable", req.get("TableName"), ctx, {})
    if req.get("ResourcePolicy") is None:
        return [check]
    # Attaching a policy at creation needs PutResourcePolicy too (DynamoDB's documented requirement).
    return [check, Check("dynamodb:PutResourcePolicy", check.resource, {}, check.table)]


# What a replica change needs in the replica's region, besides UpdateTable on the table (the Developer Guide's
# "Using IAM with global tables": creating a replica writes its items there, deleting one deletes its table).
_REPLICA_ACTIONS = {
    "Create": [
        "dynamodb:" + action
        for action in (
            "CreateTable",
            "CreateTableReplica",
            "Scan",
            "Query",
            "UpdateItem",
            "PutItem",
            "GetItem",
            "DeleteItem",
            "BatchWriteItem",
        )
    ],  # fmt: skip
    "Update": ["dynamodb:UpdateTable"],
    "Delete": ["dynamodb:DeleteTable", "dynamodb:DeleteTableReplica"],
}


def _update_table(req: dict[str, Any], ctx: Context) -> list[Check]:
    check = _table_check("dynamodb:UpdateTable", req.get("TableName"), ctx, {})
    checks = [check]
    for update in req.get("ReplicaUpdates") or []:
        for action, actions in _REPLICA_ACTIONS.items():
            body = update.get(action) if isinstance(update, dict) else None
            region = body.get("RegionName") if isinstance(body, dict) else None
            if isinstance(region, str) and REGION_NAME.fullmatch(region) and check.table is not None:
                replica = _replica_target(check.table.name, region, ctx)
                checks.extend(Check(a, replica.arn, {}, replica.table) for a in actions)
    return checks


def _replica_target(table_name: str, region: str, ctx: Context) -> _Target:
    """The replica of a table in another region: its ARN and (a region of this server) its table there."""
    account = ctx.namespace.account_id
    table = _find(ctx.in_namespace(account, region), table_name)
    return _Target(_arn_prefix(region, account) + table_name, table)


def _global_table(action: str) -> Callable[[dict[str, Any], Context], list[Check]]:
    """A legacy (2017.11.29) global-table operation: its resource is the global table, an ARN without a region."""

    def build(req: dict[str, Any], ctx: Context) -> list[Check]:
        name = req.get("GlobalTableName")
        arn = f"arn:aws:dynamodb::{ctx.namespace.account_id}:global-table/{name if isinstance(name, str) else ''}"
        return [Check(action, arn, {})]

    return build


def _create_global_table(req: dict[str, Any], ctx: Context) -> list[Check]:
    """The Developer Guide's "Using IAM with global tables": dynamodb:CreateGlobalTable on the global table and
    on the table of each region that joins it."""
    checks = _global_table("dynamodb:CreateGlobalTable")(req, ctx)
    return checks + _member_checks(req, [r for r in req.get("ReplicationGroup") or [] if isinstance(r, dict)], ctx)


def _update_global_table(req: dict[str, Any], ctx: Context) -> list[Check]:
    """dynamodb:UpdateGlobalTable on the global table; a region that joins needs dynamodb:CreateGlobalTable on
    its table, as in CreateGlobalTable."""
    checks = _global_table("dynamodb:UpdateGlobalTable")(req, ctx)
    joining = [u.get("Create") for u in req.get("ReplicaUpdates") or [] if isinstance(u, dict)]
    return checks + _member_checks(req, [c for c in joining if isinstance(c, dict)], ctx)


def _update_global_table_settings(req: dict[str, Any], ctx: Context) -> list[Check]:
    """The Developer Guide's "Using IAM with global tables": UpdateGlobalTableSettings needs
    dynamodb:UpdateGlobalTable (on the global table) and dynamodb:DescribeLimits; the application-autoscaling
    actions it also names serve scaling policies, which dynastore refuses."""
    checks = _global_table("dynamodb:UpdateGlobalTable")(req, ctx)
    return [*checks, Check("dynamodb:DescribeLimits", "*", {})]


def _member_checks(req: dict[str, Any], replicas: list[dict[str, Any]], ctx: Context) -> list[Check]:
    name = req.get("GlobalTableName")
    if not isinstance(name, str):
        return []
    out = []
    for replica in replicas:
        region = replica.get("RegionName")
        if isinstance(region, str) and REGION_NAME.fullmatch(region):  # the handler refuses the others
            target = _replica_target(name, region, ctx)
            out.append(Check("dynamodb:CreateGlobalTable", target.arn, {}, target.table))
    return out


def _contributor_insights(action: str) -> Callable[[dict[str, Any], Context], list[Check]]:
    def build(req: dict[str, Any], ctx: Context) -> list[Check]:
        return [_table_check(action, req.get("TableName"), ctx, {}, req.get("IndexName"))]

    return build


def _list_streams(req: dict[str, Any], ctx: Context) -> list[Check]:
    name = req.get("TableName")
    if not isinstance(name, str):
        return [Check("dynamodb:ListStreams", "*", {})]
    target = _target(name, ctx)
    return [Check("dynamodb:ListStreams", f"{target.arn}/stream/*", {})]


def _get_records(req: dict[str, Any], ctx: Context) -> list[Check]:
    iterator = req.get("ShardIterator")
    arn = iterator.split("|1|", 1)[0] if isinstance(iterator, str) else ""
    return [_table_check("dynamodb:GetRecords", arn, ctx, {})]


# Operations whose one check is on the table (or stream) named by this member.
_TABLE_RESOURCE = {
    "DeleteTable": "TableName",
    "DescribeTable": "TableName",
    "UpdateTimeToLive": "TableName",
    "DescribeTableReplicaAutoScaling": "TableName",
    "UpdateTableReplicaAutoScaling": "TableName",
    "DescribeTimeToLive": "TableName",
    "UpdateContinuousBackups": "TableName",
    "DescribeContinuousBackups": "TableName",
    "TagResource": "ResourceArn",
    "UntagResource": "ResourceArn",
    "ListTagsOfResource": "ResourceArn",
    "PutResourcePolicy": "ResourceArn",
    "GetResourcePolicy": "ResourceArn",
    "DeleteResourcePolicy": "ResourceArn",
    "DescribeStream": "StreamArn",
    "GetShardIterator": "StreamArn",
}

# ---- PartiQL: each statement's own action (PartiQLSelect, -Insert, -Update, -Delete) on its table or index,
# with the condition keys of what it does (api/partiql_access.py) ----

_PARTIQL_ACTIONS = {"Select": "dynamodb:PartiQLSelect", "Exists": "dynamodb:PartiQLSelect",
                    "Insert": "dynamodb:PartiQLInsert", "Update": "dynamodb:PartiQLUpdate",
                    "Delete": "dynamodb:PartiQLDelete"}  # fmt: skip


def _statement_checks(
    operation: str, entries: list[Any], req: dict[str, Any], ctx: Context, statements: StatementCache
) -> list[Check]:
    """One check per statement the operation would run. One that does not parse, or whose parameters are
    malformed or not as many as its ``?``, is refused by the operation before it reads anything: it names
    nothing to check."""
    checks: list[Check] = []
    in_transaction = operation == "ExecuteTransaction"
    for entry in entries:
        text = entry.get("Statement") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            continue
        try:
            parsed = statements.get(text)
            params = parameters(entry)
        except (PartiQLSyntaxError, DynamoError):
            continue
        if len(params) != parsed.param_count:
            continue
        statement = parsed.statement
        table_name = statement.select.table if isinstance(statement, partiql_ast.Exists) else statement.table
        index = statement.index if isinstance(statement, partiql_ast.Select) else None
        check = _table_check(_PARTIQL_ACTIONS[type(statement).__name__], table_name, ctx, {}, index)
        values = statement_values(
            statement,
            params,
            check.table,
            keyed_reads=operation != "ExecuteStatement",
            in_transaction=in_transaction,
        )
        if in_transaction:
            values["dynamodb:enclosingoperation"] = operation
        else:
            values["dynamodb:returnconsumedcapacity"] = _capacity(req)
        check.values = values
        checks.append(check)
    return checks


def _execute_statement(req: dict[str, Any], ctx: Context, statements: StatementCache) -> list[Check]:
    return _statement_checks("ExecuteStatement", [req], req, ctx, statements)


def _batch_execute_statement(req: dict[str, Any], ctx: Context, statements: StatementCache) -> list[Check]:
    return _statement_checks("BatchExecuteStatement", req.get("Statements") or [], req, ctx, statements)


def _execute_transaction(req: dict[str, Any], ctx: Context, statements: StatementCache) -> list[Check]:
    return _statement_checks("ExecuteTransaction", req.get("TransactStatements") or [], req, ctx, statements)


# ---- the operations that read or write a whole table (backups, restores, exports, imports) ----------------------
# They name no key and no attribute: dynamodb:LeadingKeys and dynamodb:Attributes are UNKNOWN, so a condition on
# either is false in an Allow and true in a Deny (as for a PartiQL statement that scans). A caller held to its own
# partition key reads or writes no other partition through them. (DynamoDB sends neither key with these actions,
# so there a ForAllValues condition is vacuously true: this is dynastore failing closed, docs/security.md.)
WHOLE_TABLE: Values = {"dynamodb:leadingkeys": UNKNOWN, "dynamodb:attributes": UNKNOWN}


def _create_backup(req: dict[str, Any], ctx: Context) -> list[Check]:
    return [_table_check("dynamodb:CreateBackup", req.get("TableName"), ctx, dict(WHOLE_TABLE))]


# ---- export and import ----------------------------------------------------------------------------------------
# An export reads the table's items: dynamodb:ExportTableToPointInTime on the table; an import creates a table and
# writes its items: dynamodb:ImportTable on the table it creates (DynamoDB asks nothing more of the caller: the
# bucket's own permissions are S3's, checked by the S3 server with dynastore's S3 credentials). Describe asks for
# the export's or import's ARN (under its table's, so the table's resource policy applies), List for "*".


def _export(req: dict[str, Any], ctx: Context) -> list[Check]:
    return [_table_check("dynamodb:ExportTableToPointInTime", req.get("TableArn"), ctx, dict(WHOLE_TABLE))]


def _import(req: dict[str, Any], ctx: Context) -> list[Check]:
    params = req.get("TableCreationParameters")
    name = params.get("TableName") if isinstance(params, dict) else None
    return [_table_check("dynamodb:ImportTable", name, ctx, dict(WHOLE_TABLE))]


def _transfer_describe(action: str, member: str) -> Callable[[dict[str, Any], Context], list[Check]]:
    def build(req: dict[str, Any], ctx: Context) -> list[Check]:
        arn = req.get(member)
        text = arn if isinstance(arn, str) else ""
        table_arn = text.split("/export/")[0].split("/import/")[0]
        return [Check(action, text, {}, _target(table_arn, ctx).table)]

    return build


_STATEMENT_BUILDERS: dict[str, Callable[[dict[str, Any], Context, StatementCache], list[Check]]] = {
    "ExecuteStatement": _execute_statement,
    "BatchExecuteStatement": _batch_execute_statement,
    "ExecuteTransaction": _execute_transaction,
}

# ---- point-in-time recovery ----

# What a restore must be allowed on its new table beside the restore action on its source (the Developer
# Guide's "Using IAM with DynamoDB backup and restore": read and write permissions on the target table).
RESTORE_TARGET_ACTIONS = (
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:BatchWriteItem",
)


def _restore_to_point_in_time(req: dict[str, Any], ctx: Context) -> list[Check]:
    source = req.get("SourceTableArn") or req.get("SourceTableName")
    checks = [_table_check("dynamodb:RestoreTableToPointInTime", source, ctx, dict(WHOLE_TABLE))]
    target = _target(req.get("TargetTableName"), ctx)
    checks.extend(Check(action, target.arn, dict(WHOLE_TABLE), target.table) for action in RESTORE_TARGET_ACTIONS)
    return checks


# ---- on-demand backups: a backup's own ARN is the resource of the operations on it; a restore from one also
# needs read and write permissions on its new table, like a restore to a point in time ----


def _on_backup(action: str) -> Callable[[dict[str, Any], Context], list[Check]]:
    def build(req: dict[str, Any], ctx: Context) -> list[Check]:
        arn = req.get("BackupArn")
        return [Check(action, arn if isinstance(arn, str) else "*", {})]

    return build


def _restore_from_backup(req: dict[str, Any], ctx: Context) -> list[Check]:
    checks = _on_backup("dynamodb:RestoreTableFromBackup")(req, ctx)
    target = _target(req.get("TargetTableName"), ctx)
    checks.extend(Check(action, target.arn, dict(WHOLE_TABLE), target.table) for action in RESTORE_TARGET_ACTIONS)
    return checks


# The item operations whose check may leave out its condition keys when no policy reads them.
_PLAIN_ITEM_ACTIONS: Final = {name: "dynamodb:" + name for name in ("GetItem", "PutItem", "UpdateItem", "DeleteItem")}

_BUILDERS: dict[str, Callable[[dict[str, Any], Context], list[Check]]] = {
    "RestoreTableToPointInTime": _restore_to_point_in_time,
    "CreateBackup": _create_backup,
    "DescribeBackup": _on_backup("dynamodb:DescribeBackup"),
    "DeleteBackup": _on_backup("dynamodb:DeleteBackup"),
    "RestoreTableFromBackup": _restore_from_backup,
    "GetItem": _single_item("dynamodb:GetItem"),
    "PutItem": _single_item("dynamodb:PutItem"),
    "UpdateItem": _single_item("dynamodb:UpdateItem"),
    "DeleteItem": _single_item("dynamodb:DeleteItem"),
    "Query": _query_or_scan("dynamodb:Query"),
    "Scan": _query_or_scan("dynamodb:Scan"),
    "BatchGetItem": _batch_get,
    "BatchWriteItem": _batch_write,
    "TransactWriteItems": _transact_write,
    "TransactGetItems": _transact_get,
    "CreateTable": _create_table,
    "UpdateTable": _update_table,
    "CreateGlobalTable": _create_global_table,
    "UpdateGlobalTable": _update_global_table,
    "UpdateGlobalTableSettings": _update_global_table_settings,
    "DescribeGlobalTable": _global_table("dynamodb:DescribeGlobalTable"),
    "DescribeGlobalTableSettings": _global_table("dynamodb:DescribeGlobalTableSettings"),
    "UpdateContributorInsights": _contributor_insights("dynamodb:UpdateContributorInsights"),
    "DescribeContributorInsights": _contributor_insights("dynamodb:DescribeContributorInsights"),
    "ListStreams": _list_streams,
    "GetRecords": _get_records,
}
_BUILDERS.update(
    {
        "ExportTableToPointInTime": _export,
        "DescribeExport": _transfer_describe("dynamodb:DescribeExport", "ExportArn"),
        "ImportTable": _import,
        "DescribeImport": _transfer_describe("dynamodb:DescribeImport", "ImportArn"),
    }
)
