"""The condition keys of one PartiQL statement: what it reads and writes, found by the same key analysis that
runs it (api/partiql_reads.py, api/partiql_writes.py), so a statement is authorized for what it does, as the
JSON operation doing the same is (api/authorization.py).

* ``dynamodb:LeadingKeys``: the partition-key values the statement touches. A SELECT run by ExecuteStatement
  names those of its Query (an equality, an IN list or an OR of equalities on the partition key of the table,
  or of the index it reads); a SELECT that scans names none it could state: ``UNKNOWN``, which no condition on
  the key allows. Every other statement (INSERT, UPDATE, DELETE, EXISTS, and a SELECT of a batch or a
  transaction) names one item by its full key: that key's partition value.
* ``dynamodb:Attributes``: the top-level names the statement names anywhere: its projection, its WHERE clause
  (the key equalities among them), ORDER BY, SET and REMOVE paths and the paths SET values read, an INSERT's
  item's attributes.
* ``dynamodb:Select`` on a SELECT: SPECIFIC_ATTRIBUTES with a projection, else ALL_PROJECTED_ATTRIBUTES on an
  index, else ALL_ATTRIBUTES. ``dynamodb:FullTableScan`` on a SELECT: whether it scans.
* ``dynamodb:ReturnValues`` on INSERT, UPDATE and DELETE: the RETURNING clause as UpdateItem names it (NONE
  when absent), except in a transaction (whose statements return nothing).

When the statement's keys cannot be worked out (a value the operation will refuse), both multivalued keys are
``UNKNOWN``: the statement is refused wherever a condition constrains them, before the operation looks at it.
"""

from __future__ import annotations

from typing import Final

from dynastore.api.access_context import key_text
from dynastore.errors import DynamoError
from dynastore.model.table_schema import TableDef
from dynastore.model.values import AttributeValue
from dynastore.partiql import ast, bind_value, partition_equality, plan_read, split_key, translate_condition
from dynastore.security.conditions import UNKNOWN, ConditionValue

__all__ = ["statement_values"]

Values = dict[str, ConditionValue]

LEADING_KEYS: Final = "dynamodb:leadingkeys"
ATTRIBUTES: Final = "dynamodb:attributes"

# RETURNING as the ReturnValues of UpdateItem and DeleteItem name it.
_RETURN_VALUES: Final = {
    "ALL_OLD": "ALL_OLD",
    "ALL_NEW": "ALL_NEW",
    "MODIFIED_OLD": "UPDATED_OLD",
    "MODIFIED_NEW": "UPDATED_NEW",
}


def statement_values(
    statement: ast.Statement,
    params: list[AttributeValue],
    table: TableDef | None,
    *,
    keyed_reads: bool,
    in_transaction: bool,
) -> Values:
    """The condition keys of ``statement`` (its parameters bound) on ``table`` (None: no such table, whose key
    schema is unknown: no leading keys, as the JSON operations). ``keyed_reads``: its SELECT reads one item by
    its full key (BatchExecuteStatement, ExecuteTransaction) rather than as a Query or a Scan."""
    values: Values = {ATTRIBUTES: _statement_names(statement)}
    scans = False
    leading: ConditionValue
    try:
        if isinstance(statement, ast.Select) and not keyed_reads:
            leading = _select_leading(statement, params, table)
            scans = leading is UNKNOWN
        else:
            leading = _item_leading(statement, params, table)
        if isinstance(statement, ast.Insert):
            values[ATTRIBUTES] = _item_names(statement.item, params)
    except DynamoError:  # a value the operation refuses: nothing it names can be trusted
        leading = values[ATTRIBUTES] = UNKNOWN
    values[LEADING_KEYS] = leading
    if isinstance(statement, ast.Select):
        values["dynamodb:select"] = _select(statement)
        values["dynamodb:fulltablescan"] = "true" if scans else "false"
    elif isinstance(statement, ast.Exists):
        values["dynamodb:fulltablescan"] = "false"
    elif not in_transaction:
        returning = None if isinstance(statement, ast.Insert) else statement.returning
        values["dynamodb:returnvalues"] = _RETURN_VALUES.get(returning or "", "NONE")
    return values


def _select(select: ast.Select) -> str:
    if select.projection is not None:
        return "SPECIFIC_ATTRIBUTES"
    return "ALL_PROJECTED_ATTRIBUTES" if select.index is not None else "ALL_ATTRIBUTES"


# ---------------------------------------------------------------- leading keys


def _select_leading(select: ast.Select, params: list[AttributeValue], table: TableDef | None) -> ConditionValue:
    """The partitions an ExecuteStatement SELECT queries, by the plan ``partiql_reads`` runs; UNKNOWN if it
    scans."""
    if table is None:
        return ()
    schema = table.key_schema
    if select.index is not None:
        index = table.index(select.index)
        if index is None:
            return UNKNOWN  # refused by the operation
        schema = index.key_schema
    if schema.is_multi_attribute:
        return UNKNOWN  # read by Scan
    hash_key = (schema.hash_key.name, schema.hash_key.type)
    plan = partition_equality(select.where, params, hash_key)
    if plan is None:
        where = translate_condition(select.where, params) if select.where is not None else None
        range_key = schema.range_key
        plan = plan_read(where, hash_key, None if range_key is None else (range_key.name, range_key.type))
    if plan.hash_values is None:
        return UNKNOWN
    return _texts(plan.hash_values)


def _item_leading(statement: ast.Statement, params: list[AttributeValue], table: TableDef | None) -> ConditionValue:
    """The partition value of the one item a write, an EXISTS or a keyed SELECT names by its full key."""
    if table is None:
        return ()
    hash_name = table.key_schema.hash_key.name
    if isinstance(statement, ast.Insert):
        item = bind_value(statement.item, params).get("M")
        value = item.get(hash_name) if isinstance(item, dict) else None
        return _texts([value]) if value is not None else UNKNOWN
    where = statement.select.where if isinstance(statement, ast.Exists) else statement.where
    if where is None:
        return UNKNOWN
    key_names = tuple(key.name for key in (table.key_schema.hash_key, table.key_schema.range_key) if key)
    split = split_key(translate_condition(where, params), key_names)
    return UNKNOWN if split is None else _texts([split[0][hash_name]])


def _texts(values: list[AttributeValue]) -> ConditionValue:
    out: list[str] = []
    for value in values:
        text = key_text(value)
        if text is None:
            return UNKNOWN  # not a key value: the operation refuses it
        out.append(text)
    return tuple(out)


# ---------------------------------------------------------------- attribute names


def _item_names(item: ast.Value, params: list[AttributeValue]) -> ConditionValue:
    """An INSERT's item's attribute names (UNKNOWN when it is no map: the operation refuses it)."""
    if isinstance(item, ast.MapValue):
        return tuple(sorted({name for name, _ in item.entries}))
    bound = bind_value(item, params).get("M") if isinstance(item, ast.Param) else None
    return tuple(sorted(bound)) if isinstance(bound, dict) else UNKNOWN


# The names of each statement tree seen, by identity: a bounded memo of a pure function of a tree the statement
# cache shares between requests (the tree is kept with its names, so an id is never taken for another tree's).
_NAMES: dict[int, tuple[ast.Statement, tuple[str, ...]]] = {}
_NAMES_MAX = 4096


def _statement_names(whole: ast.Statement) -> tuple[str, ...]:
    """The sorted top-level names the statement names, less an INSERT's item's (bound per request)."""
    known = _NAMES.get(id(whole))
    if known is not None and known[0] is whole:
        return known[1]
    out: set[str] = set()
    _collect_names(whole, out)
    if len(_NAMES) >= _NAMES_MAX:
        _NAMES.clear()
    names = tuple(sorted(out))
    _NAMES[id(whole)] = (whole, names)
    return names


def _collect_names(whole: ast.Statement, out: set[str]) -> None:
    statement = whole.select if isinstance(whole, ast.Exists) else whole
    nodes: list[ast.Condition | ast.Operand] = []
    if isinstance(statement, ast.Select):
        nodes.extend(statement.projection or ())
        nodes.extend(term.path for term in statement.order_by)
    elif isinstance(statement, ast.Update):
        for action in statement.actions:
            nodes.append(action.path)
            if isinstance(action, ast.Set):
                nodes.append(action.value)
    if not isinstance(statement, ast.Insert) and statement.where is not None:
        nodes.append(statement.where)
    _names(nodes, out)


def _names(nodes: list[ast.Condition | ast.Operand], out: set[str]) -> None:
    """The top-level names of every path in ``nodes`` (values name none)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Path):
            first = node.elements[0] if node.elements else None
            if isinstance(first, str):
                out.add(first)
        elif isinstance(node, ast.And | ast.Or | ast.Compare | ast.Arith):
            stack.extend((node.left, node.right))
        elif isinstance(node, ast.Not):
            stack.append(node.operand)
        elif isinstance(node, ast.Between):
            stack.extend((node.operand, node.low, node.high))
        elif isinstance(node, ast.In):
            stack.append(node.operand)
            stack.extend(node.options)
        elif isinstance(node, ast.IsCheck):
            stack.append(node.operand)
        elif isinstance(node, ast.Call):
            stack.extend(node.args)
