"""Policy documents: the JSON text checked as IAM and DynamoDB check it, and compiled once for evaluation.

Four kinds: ``IDENTITY`` (attached to users, groups and roles: no principals), ``TABLE`` and ``STREAM``
(resource-based policies of a table or of its stream: every statement names principals; its actions and resources
must suit the resource), and ``TRUST`` (a role's trust policy: who may assume it, AWS or Federated principals, with
no Resource). A fault raises PolicyDocumentError carrying the detail DynamoDB reports after
"Invalid policy document: " (or, for a few faults, the whole message: ``whole`` is True).

Compiled documents are cached by their text, so a policy shared by many users, or read again after a reload of
the store, is compiled once.
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore import messages
from dynastore.security.conditions import (
    Condition,
    UnknownOperator,
    compile_condition,
    is_single_valued_on_multivalued,
)
from dynastore.security.patterns import Pattern, compile_pattern

__all__ = [
    "IDENTITY",
    "Policy",
    "PolicyDocumentError",
    "Principals",
    "STREAM",
    "Statement",
    "TABLE",
    "TRUST",
    "compiled",
    "parse_policy",
    "policy_warnings",
]

IDENTITY, TABLE, STREAM, TRUST = "identity", "table", "stream", "trust"
VERSIONS = frozenset({"2012-10-17", "2008-10-17"})
_TOP_FIELDS = frozenset({"Version", "Id", "Statement"})
_STATEMENT_FIELDS = frozenset(
    {"Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Principal", "NotPrincipal", "Condition"}
)
_PRINCIPAL_TYPES = frozenset({"AWS", "Service", "Federated", "CanonicalUser"})

# The actions a stream's policy may name; every other DynamoDB action belongs to tables (and their indexes).
STREAM_ACTIONS = frozenset({"dynamodb:describestream", "dynamodb:getrecords", "dynamodb:getsharditerator"})
TABLE_ACTIONS = frozenset(
    "dynamodb:" + name.lower()
    for name in (  # noqa: SIM905 (one string: the names read as a paragraph)
        "BatchGetItem BatchWriteItem ConditionCheckItem CreateBackup CreateGlobalTable CreateTable "
        "CreateTableReplica DeleteBackup DeleteItem DeleteResourcePolicy DeleteTable DeleteTableReplica "
        "DescribeBackup DescribeContinuousBackups DescribeContributorInsights DescribeExport DescribeGlobalTable "
        "DescribeGlobalTableSettings DescribeImport DescribeKinesisStreamingDestination DescribeLimits "
        "DescribeTable DescribeTableReplicaAutoScaling DescribeTimeToLive DisableKinesisStreamingDestination "
        "EnableKinesisStreamingDestination ExportTableToPointInTime GetItem GetResourcePolicy ImportTable "
        "ListBackups ListContributorInsights ListExports ListGlobalTables ListImports ListStreams ListTables "
        "ListTagsOfResource PartiQLDelete PartiQLInsert PartiQLSelect PartiQLUpdate PutItem PutResourcePolicy "
        "Query RestoreTableFromAwsBackup RestoreTableFromBackup RestoreTableToPointInTime Scan TagResource "
        "UntagResource UpdateContinuousBackups UpdateContributorInsights UpdateGlobalTable "
        "UpdateGlobalTableSettings UpdateGlobalTableVersion UpdateItem UpdateKinesisStreamingDestination "
        "UpdateTable UpdateTableReplicaAutoScaling UpdateTimeToLive"
    ).split()
)


class PolicyDocumentError(Exception):
    def __init__(self, detail: str, *, whole: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.whole = whole  # the detail is the whole message, not a part of "Invalid policy document: ..."


class Principals:
    """Who a resource-based or trust statement names: anyone (``*``), accounts (by id), principals (by ARN) and,
    in a trust policy, identity providers (``Federated``: an OIDC provider's ARN or a well-known provider's name)."""

    __slots__ = ("anyone", "accounts", "arns", "federated")

    def __init__(
        self, anyone: bool, accounts: frozenset[str], arns: frozenset[str], federated: frozenset[str] = frozenset()
    ) -> None:
        self.anyone = anyone
        self.accounts = accounts
        self.arns = arns
        self.federated = federated


class Statement:
    __slots__ = (
        "sid", "deny", "exact_actions", "action_patterns", "not_action", "resources", "not_resource",
        "principals", "not_principal", "conditions",
    )  # fmt: skip

    def __init__(self, sid: str, deny: bool) -> None:
        self.sid = sid
        self.deny = deny
        self.exact_actions: frozenset[str] = frozenset()  # lower case
        self.action_patterns: tuple[Pattern, ...] = ()
        self.not_action = False
        self.resources: tuple[Pattern, ...] = ()
        self.not_resource = False
        self.principals: Principals | None = None
        self.not_principal = False
        self.conditions: tuple[Condition, ...] = ()

    def names_action(self, action_lower: str) -> bool:
        """Whether the Action (or NotAction) list names the action; the caller applies ``not_action``."""
        if action_lower in self.exact_actions:
            return True
        return any(p.matches(action_lower, _no_variables) for p in self.action_patterns)


class Policy:
    """A compiled policy document; ``text`` is its JSON without insignificant whitespace. ``reads_request``: whether
    any statement has a condition or a resource with policy variables, the only parts of a policy that read a
    request's condition keys (or the caller's, or the time): without them its decision on a request depends on the
    action, the resource and the principal alone."""

    __slots__ = ("kind", "text", "statements", "reads_request")

    def __init__(self, kind: str, text: str, statements: tuple[Statement, ...]) -> None:
        self.kind = kind
        self.text = text
        self.statements = statements
        self.reads_request = any(st.conditions or any(p.has_variables for p in st.resources) for st in statements)


def _no_variables(name: str) -> str | None:
    return None


_CACHE: dict[tuple[str, str], Policy] = {}
_CACHE_MAX = 1024


def compiled(text: str, kind: str) -> Policy:
    """``parse_policy`` with a cache by text (for documents already accepted once)."""
    key = (kind, text)
    policy = _CACHE.get(key)
    if policy is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        policy = _CACHE[key] = parse_policy(text, kind)
    return policy


def parse_policy(text: str, kind: str, resource_arn: str = "") -> Policy:
    """The compiled policy of ``text``; raises PolicyDocumentError for a document IAM or DynamoDB refuses.
    ``resource_arn`` (resource-based policies) is the table or stream the policy is for."""
    try:
        doc = orjson.loads(text) if text.strip() else None
    except orjson.JSONDecodeError:
        raise PolicyDocumentError(messages.POLICY_INVALID_JSON) from None
    if not text.strip():
        raise PolicyDocumentError(messages.POLICY_INVALID_JSON)
    if doc is None:
        raise PolicyDocumentError(messages.POLICY_NOT_A_POLICY)
    if not isinstance(doc, dict):
        raise PolicyDocumentError(messages.POLICY_INVALID_JSON)
    for field in doc:
        if field not in _TOP_FIELDS:
            raise PolicyDocumentError(messages.POLICY_UNKNOWN_FIELD.format(field=field))
    version = doc.get("Version")
    if "Version" in doc and version not in VERSIONS:
        raise PolicyDocumentError(messages.POLICY_INVALID_VERSION)
    if "Statement" not in doc:
        raise PolicyDocumentError(messages.POLICY_MISSING_FIELD.format(field="Statement"))
    raw = doc["Statement"]
    raw_statements = [raw] if isinstance(raw, dict) else raw
    if not isinstance(raw_statements, list):
        raise PolicyDocumentError(messages.POLICY_INVALID_FIELD_TYPE.format(field="Statement"))
    if not raw_statements:
        raise PolicyDocumentError(messages.POLICY_STATEMENT_EMPTY)
    # Policy variables belong to the 2012-10-17 language; in a 2008-10-17 (or unversioned) policy ${...} is text.
    variables = version == "2012-10-17"
    statements = tuple(_statement(s, kind, resource_arn, variables) for s in raw_statements)
    sids = [s.sid for s in statements if s.sid]
    if len(sids) != len(set(sids)):
        raise PolicyDocumentError(messages.POLICY_SIDS_NOT_UNIQUE)
    return Policy(kind, orjson.dumps(doc).decode(), statements)


def _statement(raw: Any, kind: str, resource_arn: str, variables: bool) -> Statement:
    if not isinstance(raw, dict):
        raise PolicyDocumentError(messages.POLICY_INVALID_FIELD_TYPE.format(field="Statement"))
    for field in raw:
        if field not in _STATEMENT_FIELDS:
            raise PolicyDocumentError(messages.POLICY_UNKNOWN_FIELD.format(field=field))
    sid = raw.get("Sid", "")
    if not isinstance(sid, str):
        raise PolicyDocumentError(messages.POLICY_INVALID_FIELD_TYPE.format(field="Sid"))
    if "Effect" not in raw:
        raise PolicyDocumentError(messages.POLICY_MISSING_FIELD.format(field="Effect"))
    effect = raw["Effect"]
    if effect not in ("Allow", "Deny"):
        raise PolicyDocumentError(messages.POLICY_INVALID_EFFECT.format(effect=effect))
    st = Statement(sid, effect == "Deny")
    field, st.not_action = _one_of(raw, "Action", "NotAction")
    actions = _strings(raw[field], field)
    _check_actions(actions, kind)
    st.exact_actions = frozenset(a.lower() for a in actions if "*" not in a and "?" not in a)
    st.action_patterns = tuple(
        compile_pattern(a.lower(), fold=True, use_variables=False) for a in actions if "*" in a or "?" in a
    )
    if kind == TRUST and "Resource" not in raw and "NotResource" not in raw:
        resources = ["*"]  # a trust policy is the role's own: its statements name no resource
    else:
        field, st.not_resource = _one_of(raw, "Resource", "NotResource")
        resources = _strings(raw[field], field)
    _check_resources(resources, kind, resource_arn)
    st.resources = tuple(compile_pattern(r, arn=True, use_variables=variables) for r in resources)
    _principals(raw, st, kind)
    st.conditions = _conditions(raw.get("Condition"), variables, st.deny)
    public = st.principals is not None and st.principals.anyone and not st.not_principal
    if kind in (TABLE, STREAM) and not st.deny and public and not st.conditions:
        raise PolicyDocumentError(messages.POLICY_UNBOUNDED_ACCESS, whole=True)
    return st


def _one_of(raw: dict[str, Any], field: str, negated: str) -> tuple[str, bool]:
    if field in raw and negated in raw:
        raise PolicyDocumentError(messages.POLICY_FIELD_CONFLICT.format(first=field, second=negated))
    if negated in raw:
        return negated, True
    if field not in raw:
        raise PolicyDocumentError(messages.POLICY_MISSING_FIELD.format(field=field))
    return field, False


def _strings(value: Any, field: str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
        raise PolicyDocumentError(messages.POLICY_INVALID_FIELD_TYPE.format(field=field))
    return values


def _check_actions(actions: list[str], kind: str) -> None:
    for action in actions:
        service, _, name = action.partition(":")
        if action != "*" and (not service or not name):
            raise PolicyDocumentError(messages.POLICY_INVALID_ACTION.format(action=action))
    if kind in (IDENTITY, TRUST):
        return  # IAM accepts any service's actions in an identity policy (a trust policy's are STS's)
    allowed = STREAM_ACTIONS if kind == STREAM else TABLE_ACTIONS
    invalid = [
        a
        for a in actions
        if a != "*"
        and (not a.lower().startswith("dynamodb:") or ("*" not in a and "?" not in a and a.lower() not in allowed))
    ]
    if invalid:
        names = ", ".join(f'"{a}"' for a in invalid)
        raise PolicyDocumentError(messages.POLICY_INVALID_ACTIONS_FOR_RESOURCE.format(actions=names))


def _check_resources(resources: list[str], kind: str, resource_arn: str) -> None:
    for resource in resources:
        if resource == "*":
            continue
        parts = resource.split(":", 5)
        if len(parts) != 6 or parts[0] != "arn":
            raise PolicyDocumentError(messages.POLICY_INVALID_RESOURCE.format(resource=resource))
        if kind in (IDENTITY, TRUST) or parts[2] != "dynamodb" or "*" in resource or "?" in resource:
            continue
        relative = parts[5]
        is_stream = "/stream/" in relative
        if (kind == TABLE and is_stream) or (kind == STREAM and not is_stream):
            raise PolicyDocumentError(
                messages.POLICY_RELATIVE_ID_INVALID.format(relative_id=relative, arn=resource_arn or resource)
            )


def _principals(raw: dict[str, Any], st: Statement, kind: str) -> None:
    if kind == IDENTITY:
        if "Principal" in raw or "NotPrincipal" in raw:
            raise PolicyDocumentError(messages.POLICY_PRINCIPAL_IN_IDENTITY_POLICY)
        return
    field, st.not_principal = _one_of(raw, "Principal", "NotPrincipal")
    value = raw[field]
    if value == "*":
        st.principals = Principals(True, frozenset(), frozenset())
        return
    if not isinstance(value, dict) or not value:
        raise PolicyDocumentError(messages.POLICY_INVALID_PRINCIPAL)
    anyone, accounts, arns, federated = False, set(), set(), set()
    for kind_name, names in value.items():
        if kind_name not in _PRINCIPAL_TYPES:
            raise PolicyDocumentError(messages.POLICY_INVALID_PRINCIPAL)
        listed = [names] if isinstance(names, str) else names
        if not isinstance(listed, list) or not listed or not all(isinstance(n, str) and n for n in listed):
            raise PolicyDocumentError(messages.POLICY_INVALID_PRINCIPAL)
        if kind_name == "Federated" and kind == TRUST:
            federated.update(listed)  # who may assume the role with a web identity
            continue
        if kind_name != "AWS":
            continue  # service principals are never the caller of a dynastore
        for name in listed:
            if name == "*":
                anyone = True
            elif name.isdigit() and len(name) == 12:
                accounts.add(name)
            elif name.startswith(("arn:aws:iam::", "arn:aws:sts::")) and len(name.split(":", 5)) == 6:
                account, resource = name.split(":", 5)[4:]
                if resource == "root":
                    accounts.add(account)
                else:
                    arns.add(name)
            else:
                raise PolicyDocumentError(messages.POLICY_INVALID_PRINCIPAL)
    st.principals = Principals(anyone, frozenset(accounts), frozenset(arns), frozenset(federated))


def _conditions(raw: Any, variables: bool, deny: bool) -> tuple[Condition, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise PolicyDocumentError(messages.POLICY_INVALID_FIELD_TYPE.format(field="Condition"))
    out: list[Condition] = []
    for operator, keys in raw.items():
        if not isinstance(keys, dict) or not keys:
            raise PolicyDocumentError(messages.POLICY_INVALID_FIELD_TYPE.format(field="Condition"))
        for key, values in keys.items():
            listed = values if isinstance(values, list) else [values]
            if not listed or not all(isinstance(v, (str, int, float)) and v is not None for v in listed):
                raise PolicyDocumentError(messages.POLICY_INVALID_CONDITION_VALUE.format(operator=operator, key=key))
            texts = [("true" if v else "false") if isinstance(v, bool) else str(v) for v in listed]
            try:
                out.append(compile_condition(operator, key, texts, variables, deny))
            except UnknownOperator:
                raise PolicyDocumentError(
                    messages.POLICY_INVALID_CONDITION_OPERATOR.format(operator=operator)
                ) from None
    return tuple(out)


def policy_warnings(text: str) -> list[str]:
    """What IAM's policy validation would warn about in a document ``parse_policy`` accepts: a single-valued
    operator on a multivalued condition key (IAM requires ``ForAllValues:`` or ``ForAnyValue:`` there)."""
    doc = orjson.loads(text)
    raw = doc.get("Statement") if isinstance(doc, dict) else None
    statements = [raw] if isinstance(raw, dict) else raw if isinstance(raw, list) else []
    found: list[str] = []
    for number, statement in enumerate(statements, 1):
        conditions = statement.get("Condition") if isinstance(statement, dict) else None
        for operator, keys in conditions.items() if isinstance(conditions, dict) else ():
            for key in keys if isinstance(keys, dict) else ():
                if is_single_valued_on_multivalued(operator, key):
                    sid = statement.get("Sid")
                    where = f'"{sid}"' if isinstance(sid, str) and sid else str(number)
                    found.append(messages.POLICY_MULTIVALUED_KEY_OPERATOR.format(statement=where, operator=operator,
                                                                                 key=key))  # fmt: skip
    return found
