"""Query: one page of the items of one partition key, in sort-key order (or reversed).

Order of the checks (docs/validation-order.md): the Select rules (DynamoDB sends them for Query with the
"1 validation error detected: " prefix in both forms), expression/legacy mixing, QueryFilter, duplicate
AttributesToGet, a key condition present and the KeyConditions' values, ExclusiveStartKey values, the
expressions; then the table, IndexName, the key condition against the key schema, the start key, nested paths
and filters on key attributes.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.item_requests import expression_context
from dynastore.api.read_requests import (
    check_attributes_to_get,
    check_condition_values,
    check_expression_maps,
    check_index_key_types,
    check_key_paths,
    check_start_key_values,
    filter_and_projection,
    index_fetch,
    key_attributes,
    key_space,
    page_response,
    select_rule_problem,
    table_part,
)
from dynastore.engine.context import Context
from dynastore.engine.key_spaces import KeySpace, key_condition_bounds, sort_key_satisfies
from dynastore.engine.keys import check_table_key
from dynastore.engine.pages import PageRequest, condition_paths, read_page
from dynastore.errors import ResourceNotFoundException, ValidationException
from dynastore.expressions import KeyCondition, KeyTemplate, KeyTemplates, ResolvedCondition, legacy
from dynastore.expressions.key_condition import build_key_condition, build_multi_key_condition
from dynastore.expressions.tokens import ExpressionError
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.validation import common
from dynastore.validation.attribute_values import check_key_value


def handle(req: dict[str, Any], ctx: Context) -> bytes:
    select_problem = select_rule_problem(req)
    if select_problem is not None:
        raise ValidationException(messages.VALIDATION_PREFIX + select_problem)  # prefixed in both forms
    check_expression_params(req)
    common.check_conditional_operator(req, "QueryFilter")
    query_filter = req.get("QueryFilter")
    check_condition_values(query_filter)
    legacy_filter = legacy.query_filter(query_filter, req.get("ConditionalOperator")) if query_filter else None
    check_attributes_to_get(req)
    key_text = req.get("KeyConditionExpression")
    if req.get("KeyConditions") is None and key_text is None:
        raise ValidationException(messages.QUERY_NO_KEY_CONDITION)
    key_conditions = req.get("KeyConditions")
    check_condition_values(key_conditions)
    if key_conditions is not None and key_text is None:
        legacy.check_key_conditions(key_conditions)  # before the table is looked up, as DynamoDB does
    check_start_key_values(req)  # after the key conditions (docs/validation-order.md)
    check_expression_maps(req)
    known = _known_key_condition(req, ctx)
    if known is not None:
        table, space, condition = known
        filt = projection = None
    else:
        exprs = expression_context(req, ctx.expressions)
        key_condition = exprs.condition("KeyConditionExpression", key_text) if key_text is not None else None
        filt, projection = filter_and_projection(req, exprs, legacy_filter)
        exprs.check_unused()
        table = ctx.catalog.get_active(req["TableName"])
        space = key_space(ctx, table, req)
        condition = _key_condition(req, space, key_condition)
        if space.index is None:
            _remember_key_condition(ctx.key_templates, req, space, condition)
    _check_key_values(space, condition)
    prefix = space.partition_prefix(condition.hash_values)
    lo, hi = key_condition_bounds(space, condition, prefix)
    reverse = req.get("ScanIndexForward") is False
    start = req.get("ExclusiveStartKey")
    if start is not None:
        if space.index is None:
            start_key = _start_key(table, space, start, condition, prefix, (lo, hi))
        else:
            start_key = _index_start_key(table, space, start, prefix, (lo, hi))
        if reverse:
            hi = min(hi, start_key)
        else:
            lo = max(lo, start_key + b"\x00")
    check_key_paths(table, projection.paths if projection is not None else ())
    _check_filter_keys(req, table, space, filt)
    fetch = index_fetch(req, space, filt, projection)

    page_request = PageRequest(
        space,
        lo,
        hi,
        reverse=reverse,
        limit=req.get("Limit"),
        filter=filt,
        projection=projection,
        count_only=req.get("Select") == "COUNT",
        fetch=fetch,
        consistent=bool(req.get("ConsistentRead")),
        admit_at=prefix,
    )
    page = read_page(ctx, page_request)
    return page_response(req, table, space, page, count_only=page_request.count_only)


def check_expression_params(req: dict[str, Any]) -> None:
    common.check_expression_params(
        req,
        ("ProjectionExpression", "FilterExpression", "KeyConditionExpression"),
        ("AttributesToGet", "QueryFilter", "ConditionalOperator", "KeyConditions"),
    )


# ---------------------------------------------------------------- key-condition templates
#
# Most Query requests repeat one KeyConditionExpression with new values. Resolving and checking it costs more
# than reading a page of ten items, so a request whose only expression is the key condition remembers which
# value placeholder became which bound. A later request with the same text, the same names, the same value
# placeholders of the same types and the same key schema must pass every check the first one passed (those
# checks depend on types, never on values: the one value-dependent key-condition check, BETWEEN's bound order,
# is never remembered), so it only substitutes its values. Anything else takes the full path.


_OTHER_EXPRESSION_PARAMS = ("FilterExpression", "ProjectionExpression", "QueryFilter", "AttributesToGet")


def _template_key(req: dict[str, Any], space: KeySpace) -> tuple[Any, ...] | None:
    text, values = req.get("KeyConditionExpression"), req.get("ExpressionAttributeValues")
    if text is None or not values or any(req.get(name) is not None for name in _OTHER_EXPRESSION_PARAMS):
        return None
    names = req.get("ExpressionAttributeNames")
    return (
        text,
        tuple(names.items()) if names else (),
        tuple((ref, tuple(value)) for ref, value in values.items()),
        space.hash_key,
        space.range_key,
        req.get("IndexName"),
    )


def _known_key_condition(req: dict[str, Any], ctx: Context) -> tuple[TableDef, KeySpace, KeyCondition] | None:
    if req.get("KeyConditionExpression") is None or req.get("IndexName") is not None:
        return None
    try:
        table = ctx.catalog.get_active(req["TableName"])
    except ResourceNotFoundException:
        return None  # the full path reports expression errors first
    space = key_space(ctx, table, req)
    key = _template_key(req, space)
    template = ctx.key_templates.get(key) if key is not None else None
    if template is None:
        return None
    values = req["ExpressionAttributeValues"]
    range_values = tuple(values[ref] for ref in template.range_refs)
    return table, space, KeyCondition(values[template.hash_ref], template.range_op, range_values)


def _remember_key_condition(
    templates: KeyTemplates, req: dict[str, Any], space: KeySpace, condition: KeyCondition
) -> None:
    if condition.range_op == "BETWEEN":
        return
    key = _template_key(req, space)
    if key is None:
        return
    refs = {id(value): ref for ref, value in req["ExpressionAttributeValues"].items()}
    hash_ref = refs.get(id(condition.hash_value))
    range_refs = tuple(refs.get(id(value)) for value in condition.range_values)
    if hash_ref is None or None in range_refs:
        return
    refs_used = tuple(ref for ref in range_refs if ref is not None)
    templates.remember(key, KeyTemplate(hash_ref, condition.range_op, refs_used))


def _key_condition(req: dict[str, Any], space: KeySpace, resolved: ResolvedCondition | None) -> KeyCondition:
    hash_key = (space.hash_key.name, space.hash_key.type)
    range_key = None if space.range_key is None else (space.range_key.name, space.range_key.type)
    schema = space.key_schema
    if resolved is None:
        if schema.is_multi_attribute:  # KeyConditions cannot name several partition attributes (ours)
            raise ValidationException(messages.KEY_NOT_SUPPORTED, bare=True)
        return legacy.key_conditions(req["KeyConditions"], hash_key, range_key)
    try:
        if schema.is_multi_attribute:
            return build_multi_key_condition(
                resolved,
                tuple((a.name, a.type) for a in schema.hash_keys),
                tuple((a.name, a.type) for a in schema.range_keys),
            )
        return build_key_condition(resolved, hash_key, range_key)
    except ExpressionError as e:
        if e.prefixed:
            raise ValidationException(
                messages.EXPR_INVALID.format(kind="KeyConditionExpression", detail=e.detail), bare=True
            ) from None
        raise ValidationException(e.detail, bare=True) from None


def _check_key_values(space: KeySpace, condition: KeyCondition) -> None:
    """The key condition's values pass the checks a GetItem key gets: not empty, within the partition (2,048
    bytes) and sort (1,024 bytes) key limits. Values differ from request to request, so remembered key
    conditions are checked too."""
    schema = space.key_schema
    for attr, value in zip(schema.hash_keys, condition.hash_values, strict=False):
        payload = value.get(attr.type)
        if payload is not None:
            check_key_value(attr.name, attr.type, payload, is_range=False)
    for attr, value in zip(schema.range_keys, condition.sort_prefix, strict=False):
        payload = value.get(attr.type)
        if payload is not None:
            check_key_value(attr.name, attr.type, payload, is_range=True)
    if condition.range_op is not None and len(condition.sort_prefix) < len(schema.range_keys):
        attr = schema.range_keys[len(condition.sort_prefix)]
        for value in condition.range_values:
            payload = value.get(attr.type)
            if payload is not None:
                check_key_value(attr.name, attr.type, payload, is_range=True)


def _start_key(
    table: TableDef, space: KeySpace, start: Item, condition: KeyCondition, prefix: bytes, bounds: tuple[bytes, bytes]
) -> bytes:
    """The stored form of a valid ExclusiveStartKey for this key condition (ValidationException otherwise)."""
    attributes = key_attributes(table)
    if len(start) != len(attributes) or any(attr.name not in start for attr in attributes):
        raise ValidationException(messages.START_KEY_INVALID, bare=True)
    check_table_key(table, start, is_full_item=False)
    start_key = space.start_key(start)
    same_hash = start_key.startswith(prefix)  # encodings are self-delimiting: equal partition keys
    range_key = space.range_key
    if range_key is None or condition.range_op is None:
        if not same_hash:
            raise ValidationException(messages.START_KEY_OUTSIDE_QUERY, bare=True)
        return start_key
    if same_hash:
        lo, hi = bounds
        matches = lo <= start_key < hi
    else:
        matches = sort_key_satisfies(range_key, condition, start[range_key.name])
    if not matches:
        raise ValidationException(messages.START_KEY_RANGE_MISMATCH, bare=True)
    if not same_hash:
        raise ValidationException(messages.START_KEY_ONE_ROW, bare=True)
    return start_key


def _index_start_key(
    table: TableDef, space: KeySpace, start: Item, prefix: bytes, bounds: tuple[bytes, bytes]
) -> bytes:
    """An index Query's ExclusiveStartKey: the index key and the table key, inside the key condition. A GSI's
    start key of another size than the two keys together (one of them left out, as a LastEvaluatedKey of the
    table holds only the table's) gets DynamoDB's size text; other mismatches the plain one."""
    attributes = key_attributes(table, space)
    if len(start) != len(attributes) and space.index is not None and space.index.kind == "GSI":
        raise ValidationException(messages.START_KEY_SIZE, bare=True)
    if len(start) != len(attributes) or any(attr.name not in start for attr in attributes):
        raise ValidationException(messages.START_KEY_INVALID, bare=True)
    check_table_key(table, table_part(table, start), is_full_item=False)
    check_index_key_types(space, start, messages.START_KEY_INVALID)
    start_key = space.start_key(start)
    if not start_key.startswith(prefix):
        raise ValidationException(messages.START_KEY_OUTSIDE_QUERY, bare=True)
    lo, hi = bounds
    if not lo <= start_key < hi:
        raise ValidationException(messages.START_KEY_RANGE_MISMATCH, bare=True)
    return start_key


def _check_filter_keys(req: dict[str, Any], table: TableDef, space: KeySpace, filt: ResolvedCondition | None) -> None:
    """A Query filter may not name the key attributes of what it queries (the table's, or the index's); nested
    paths into key attributes are refused too."""
    if filt is None:
        return
    paths = condition_paths(filt)
    if req.get("FilterExpression") is not None:
        param, heads = "Filter Expression", {path[0] for path in paths}
    else:
        param, heads = "QueryFilter", set(req.get("QueryFilter") or ())
    for attr in space.key_schema.attributes:
        if attr.name in heads:
            raise ValidationException(messages.FILTER_ON_KEY_ATTRIBUTE.format(param=param, name=attr.name), bare=True)
    check_key_paths(table, paths)
