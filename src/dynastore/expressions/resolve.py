"""Per-request substitution of ``#names`` and ``:values`` into new resolved objects.

The cached syntax tree is never mutated; one walk builds the resolved tree and records which
placeholders were used (for the unused-names/values check after all expressions of a request).
Undefined placeholders: a condition reports the first one in source order (names and values share one
slot, dynalite ``attrNameVal``); an update reports undefined names before undefined values, and a
projection has names only.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.errors import ValidationException
from dynastore.expressions import ast
from dynastore.expressions.cache import ExpressionCache
from dynastore.expressions.key_condition import KeyCondition, build_key_condition
from dynastore.expressions.semantics import (
    Checked,
    check_condition_resolved,
    check_paths,
    check_update_resolved,
)
from dynastore.expressions.tokens import ExpressionError
from dynastore.util.kept_matches import KeptMatches
from dynastore.validation.attribute_values import invalid_entry, name_error

__all__ = ["ExpressionContext", "Resolver", "resolve_condition", "resolve_projection", "resolve_update"]

_MISSING: dict[str, Any] = {"NULL": True}


class Resolver:
    """Looks placeholders up and remembers what was used and the first undefined ones."""

    __slots__ = (
        "first_missing",
        "missing_name",
        "missing_value",
        "names",
        "used_names",
        "used_values",
        "values",
    )

    def __init__(self, names: dict[str, str] | None, values: dict[str, dict[str, Any]] | None) -> None:
        self.names = names or {}
        self.values = values or {}
        self.used_names: set[str] = set()
        self.used_values: set[str] = set()
        self.first_missing: str | None = None
        self.missing_name: str | None = None
        self.missing_value: str | None = None

    def reset_missing(self) -> None:
        self.first_missing = self.missing_name = self.missing_value = None

    def name(self, ref: str) -> str:
        value = self.names.get(ref)
        if value is None:
            if self.missing_name is None:
                self.missing_name = messages.EXPR_NAME_UNDEFINED.format(name=ref)
                self.first_missing = self.first_missing or self.missing_name
            return ref
        self.used_names.add(ref)
        return value

    def value(self, ref: str) -> dict[str, Any]:
        value = self.values.get(ref)
        if value is None:
            if self.missing_value is None:
                self.missing_value = messages.EXPR_VALUE_UNDEFINED.format(name=ref)
                self.first_missing = self.first_missing or self.missing_value
            return _MISSING
        self.used_values.add(ref)
        return value

    def path(self, path: ast.Path) -> ast.ResolvedPath:
        out: list[str | int] = []
        for element in path.elements:
            if isinstance(element, ast.Attr):
                out.append(element.name)
            elif isinstance(element, ast.NameRef):
                out.append(self.name(element.ref))
            else:
                out.append(element.index)
        return tuple(out)

    def operand(self, node: ast.Operand) -> ast.ResolvedOperand:
        if isinstance(node, ast.Path):
            return ast.PathOperand(self.path(node))
        if isinstance(node, ast.ValueRef):
            return ast.ValueOperand(self.value(node.ref))
        if isinstance(node, ast.Call):
            return ast.FunctionOperand(node.name, tuple(self.operand(arg) for arg in node.args))
        return ast.ArithOperand(node.op, self.operand(node.left), self.operand(node.right))

    def condition(self, node: ast.Condition) -> ast.ResolvedNode:
        if isinstance(node, ast.Compare):
            return ast.Comparison(node.op, self.operand(node.left), self.operand(node.right))
        if isinstance(node, ast.And):
            return ast.AndCondition(self.condition(node.left), self.condition(node.right))
        if isinstance(node, ast.Or):
            return ast.OrCondition(self.condition(node.left), self.condition(node.right))
        if isinstance(node, ast.Not):
            return ast.NotCondition(self.condition(node.operand))
        if isinstance(node, ast.Between):
            return ast.BetweenCondition(self.operand(node.operand), self.operand(node.low), self.operand(node.high))
        if isinstance(node, ast.In):
            return ast.InCondition(self.operand(node.operand), tuple(self.operand(o) for o in node.options))
        return ast.FunctionCondition(node.name, tuple(self.operand(arg) for arg in node.args))


def resolve_condition(checked: Checked, resolver: Resolver) -> ast.ResolvedCondition:
    root = checked.root
    assert not isinstance(root, ast.UpdateExpr | ast.ProjectionExpr)
    resolver.reset_missing()
    resolved = ast.ResolvedCondition(resolver.condition(root))
    if resolver.first_missing is not None:
        raise ExpressionError(resolver.first_missing)
    check_condition_resolved(checked, resolved)
    return resolved


def resolve_update(checked: Checked, resolver: Resolver) -> ast.ResolvedUpdate:
    root = checked.root
    assert isinstance(root, ast.UpdateExpr)
    resolver.reset_missing()
    sets: list[tuple[ast.ResolvedPath, ast.ResolvedOperand]] = []
    removes: list[ast.ResolvedPath] = []
    adds: list[tuple[ast.ResolvedPath, dict[str, Any]]] = []
    deletes: list[tuple[ast.ResolvedPath, dict[str, Any]]] = []
    paths: list[ast.ResolvedPath] = []
    for action in root.actions:
        path = resolver.path(action.path)
        paths.append(path)
        if isinstance(action, ast.SetAction):
            sets.append((path, resolver.operand(action.value)))
        elif isinstance(action, ast.RemoveAction):
            removes.append(path)
        elif isinstance(action, ast.AddAction):
            adds.append((path, resolver.value(action.value.ref)))
        else:
            deletes.append((path, resolver.value(action.value.ref)))
    if resolver.missing_name is not None:
        raise ExpressionError(resolver.missing_name)
    if resolver.missing_value is not None:
        raise ExpressionError(resolver.missing_value)
    update = ast.ResolvedUpdate(tuple(sets), tuple(removes), tuple(adds), tuple(deletes), tuple(paths))
    check_update_resolved(checked, update)
    return update


def resolve_projection(checked: Checked, resolver: Resolver) -> ast.ResolvedProjection:
    root = checked.root
    assert isinstance(root, ast.ProjectionExpr)
    resolver.reset_missing()
    paths = tuple(resolver.path(path) for path in root.paths)
    if resolver.missing_name is not None:
        raise ExpressionError(resolver.missing_name)
    check_paths(paths)
    return ast.ResolvedProjection(paths)


_NAME_KEY = KeptMatches(r"#[A-Za-z0-9_]+")
_VALUE_KEY = KeptMatches(r":[A-Za-z0-9_]+")


def check_expression_maps(names: dict[str, Any] | None, values: dict[str, Any] | None) -> None:
    """ExpressionAttributeNames/Values: not empty, well-formed keys, well-formed values (in DynamoDB's order).

    The maps are the request's as decoded: a name may be null (typed Any, so that compiled code does not refuse it
    with a TypeError before it is checked).

    Numbers among the values are canonicalised in place.
    """
    if names is not None:
        if not names:
            raise ValidationException(messages.EXPR_NAMES_EMPTY)
        for key in names:
            if not _NAME_KEY.matches(key):
                raise ValidationException(messages.EXPR_NAMES_INVALID_KEY.format(key=key))
        for key, name in names.items():
            name_problem = name_error(name)
            if name_problem is not None:
                raise ValidationException(
                    messages.EXPR_NAMES_EMPTY_VALUE.format(key=key)
                    if name_problem is messages.ATTRIBUTE_NAME_EMPTY
                    else name_problem
                )
    if values is not None:
        if not values:
            raise ValidationException(messages.EXPR_VALUES_EMPTY)
        for key in values:
            if not _VALUE_KEY.matches(key):
                raise ValidationException(messages.EXPR_VALUES_INVALID_KEY.format(key=key))
        problem = invalid_entry(values)
        if problem is not None:
            key, detail = problem
            if detail is messages.ATTRIBUTE_NAME_EMPTY or detail is messages.ATTRIBUTE_NAME_TOO_LARGE:
                raise ValidationException(detail)  # a constraint error: reported before the map's own checks
            raise ValidationException(messages.EXPR_VALUES_INVALID_VALUE.format(detail=detail, key=key))


def _wrap(kind: str, error: ExpressionError) -> ValidationException:
    if error.prefixed:
        return ValidationException(messages.EXPR_INVALID.format(kind=kind, detail=error.detail))
    return ValidationException(error.detail)


class ExpressionContext:
    """The expressions of one request: shared names/values, used-key tracking, DynamoDB error texts.

    Every method raises ``ValidationException`` with the ``Invalid <Kind>: `` prefix added here.
    """

    __slots__ = ("_cache", "_resolver")

    def __init__(
        self,
        names: dict[str, str] | None,
        values: dict[str, dict[str, Any]] | None,
        cache: ExpressionCache | None = None,
    ) -> None:
        check_expression_maps(names, values)
        # Without the server's cache (a one-off caller) nothing is kept: an empty cache of size 0.
        self._cache = cache if cache is not None else ExpressionCache(0)
        self._resolver = Resolver(names, values)

    def condition(self, kind: str, text: str) -> ast.ResolvedCondition:
        """``kind`` is ``ConditionExpression`` or ``FilterExpression`` (used in error texts)."""
        try:
            return resolve_condition(self._cache.get("ConditionExpression", text), self._resolver)
        except ExpressionError as e:
            raise _wrap(kind, e) from None

    def update(self, text: str) -> ast.ResolvedUpdate:
        try:
            return resolve_update(self._cache.get("UpdateExpression", text), self._resolver)
        except ExpressionError as e:
            raise _wrap("UpdateExpression", e) from None

    def projection(self, text: str) -> ast.ResolvedProjection:
        try:
            return resolve_projection(self._cache.get("ProjectionExpression", text), self._resolver)
        except ExpressionError as e:
            raise _wrap("ProjectionExpression", e) from None

    def key_condition(
        self, text: str, hash_key: tuple[str, str], range_key: tuple[str, str] | None = None
    ) -> KeyCondition:
        kind = "KeyConditionExpression"
        try:
            condition = resolve_condition(self._cache.get("ConditionExpression", text), self._resolver)
            return build_key_condition(condition, hash_key, range_key)
        except ExpressionError as e:
            raise _wrap(kind, e) from None

    def check_unused(self) -> None:
        """After every expression of the request is resolved: unused names first, then unused values."""
        resolver = self._resolver
        unused = [key for key in resolver.names if key not in resolver.used_names]
        if unused:
            raise ValidationException(messages.EXPR_NAMES_UNUSED.format(keys=", ".join(unused)))
        unused = [key for key in resolver.values if key not in resolver.used_values]
        if unused:
            raise ValidationException(messages.EXPR_VALUES_UNUSED.format(keys=", ".join(unused)))
