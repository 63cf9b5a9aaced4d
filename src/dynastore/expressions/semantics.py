"""Semantic checks as ordered, single-purpose passes; the order of the lists is DynamoDB's error order.

Two stages:

* **static passes** run once per distinct expression text (their result is cached with the parse):
  conditions: redundant parentheses -> unknown function (or an update function: "not allowed in a
  condition expression") -> misused function -> reserved word; updates: reserved word -> unknown
  function (or a condition function: "not allowed in an update expression") -> list_append nested in
  list_append -> section used twice; projections: reserved word.
* **resolved passes** need the request's names and values and run per request from ``resolve.py``
  after undefined names/values: conditions: operand count -> distinct operands -> function and
  operand types (BETWEEN bounds, IN size, ...); updates: path overlap -> path conflict -> ADD/DELETE
  operand type -> functions (operand count, document path, operand types); projections: overlap ->
  conflict.

This follows dynalite's precedence (``parens, unknownFunction, misusedFunction, reserved,
condition``). Guesses, not confirmed against DynamoDB: within one category the first error in source
order wins; IN and BETWEEN take part in the distinct-operand check; ``<``/``<=``/``>``/``>=``/BETWEEN
with a literal value operand of a type other than N, S or B is an operand-type error; an update's
operand-count errors are reported before its operand-type errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from dynastore import messages
from dynastore.expressions import ast
from dynastore.expressions.ast import (
    ArithOperand,
    BetweenCondition,
    Comparison,
    FunctionCondition,
    FunctionOperand,
    InCondition,
    PathOperand,
    ResolvedCondition,
    ResolvedPath,
    ResolvedUpdate,
    ValueOperand,
    iter_conditions,
)
from dynastore.expressions.ast import ResolvedOperand as Operand
from dynastore.expressions.reserved import is_reserved
from dynastore.expressions.tokens import ExpressionError
from dynastore.model.values import compare_scalars

__all__ = [
    "CONDITION_FUNCTIONS",
    "UPDATE_FUNCTIONS",
    "Checked",
    "check_condition_resolved",
    "check_paths",
    "check_static",
    "check_update_resolved",
    "path_str",
]

CONDITION_FUNCTIONS = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
    "size": 1,
}
UPDATE_FUNCTIONS = {"if_not_exists": 2, "list_append": 2}
ATTRIBUTE_TYPES = frozenset({"S", "N", "B", "NULL", "SS", "BOOL", "L", "BS", "NS", "M"})
MAX_IN_OPERANDS = 100
_UPDATE_TYPE_NAMES = {
    "S": "STRING",
    "N": "NUMBER",
    "B": "BINARY",
    "NULL": "NULL",
    "BOOL": "BOOLEAN",
    "L": "LIST",
    "M": "MAP",
}
_SET_TYPES = frozenset({"SS", "NS", "BS"})


@dataclass(frozen=True, slots=True)
class Checked:
    """A parse that passed the static passes; what the cache stores."""

    kind: str  # "condition" | "update" | "projection"
    root: ast.Node
    operand_count_error: str | None  # reported by the resolved passes, after undefined names/values


# -- walking the syntax tree ---------------------------------------------------------------------------
def _walk(node: ast.Node | ast.Operand, in_operand: bool) -> Iterator[tuple[object, bool]]:
    """Pre-order (source order) walk yielding (node, is_in_operand_position)."""
    yield node, in_operand
    if isinstance(node, ast.And | ast.Or):
        yield from _walk(node.left, False)
        yield from _walk(node.right, False)
    elif isinstance(node, ast.Not):
        yield from _walk(node.operand, False)
    elif isinstance(node, ast.Compare | ast.Arith):
        yield from _walk(node.left, True)
        yield from _walk(node.right, True)
    elif isinstance(node, ast.Between):
        for child in (node.operand, node.low, node.high):
            yield from _walk(child, True)
    elif isinstance(node, ast.In):
        yield from _walk(node.operand, True)
        for child in node.options:
            yield from _walk(child, True)
    elif isinstance(node, ast.Call):
        for child in node.args:
            yield from _walk(child, True)
    elif isinstance(node, ast.UpdateExpr):
        for action in node.actions:
            yield from _walk(action.path, True)
            if not isinstance(action, ast.RemoveAction):
                yield from _walk(action.value, True)
    elif isinstance(node, ast.ProjectionExpr):
        for path in node.paths:
            yield from _walk(path, True)


_StaticPass = Callable[[ast.Parsed, Sequence[tuple[object, bool]]], str | None]


# -- static passes -------------------------------------------------------------------------------------
def _pass_parens(parsed: ast.Parsed, nodes: Sequence[tuple[object, bool]]) -> str | None:
    return messages.EXPR_REDUNDANT_PARENS if parsed.redundant_parens else None


def _unknown_function(functions: dict[str, int], others: dict[str, int], wrong_place: str) -> _StaticPass:
    """A name that is no function at all, or a function of the other expression kind (``wrong_place``)."""

    def check(parsed: ast.Parsed, nodes: Sequence[tuple[object, bool]]) -> str | None:
        for node, _ in nodes:
            if isinstance(node, ast.Call) and node.name not in functions:
                text = wrong_place if node.name in others else messages.EXPR_UNKNOWN_FUNCTION
                return text.format(name=node.name)
        return None

    return check


def _pass_nested_list_append(parsed: ast.Parsed, nodes: Sequence[tuple[object, bool]]) -> str | None:
    """DynamoDB refuses list_append as an argument of list_append (if_not_exists inside it is fine)."""
    for node, _ in nodes:
        if isinstance(node, ast.Call) and node.name == "list_append":
            for arg in node.args:
                if isinstance(arg, ast.Call) and arg.name == "list_append":
                    return messages.EXPR_MISUSED_FUNCTION.format(name=arg.name)
    return None


def _pass_misused_function(parsed: ast.Parsed, nodes: Sequence[tuple[object, bool]]) -> str | None:
    for node, in_operand in nodes:
        if isinstance(node, ast.Call) and (node.name == "size") != in_operand:
            return messages.EXPR_MISUSED_FUNCTION.format(name=node.name)
    return None


def _pass_reserved(parsed: ast.Parsed, nodes: Sequence[tuple[object, bool]]) -> str | None:
    for node, _ in nodes:
        if isinstance(node, ast.Path):
            for element in node.elements:
                if isinstance(element, ast.Attr) and is_reserved(element.name):
                    return messages.EXPR_RESERVED.format(name=element.name)
    return None


def _pass_sections(parsed: ast.Parsed, nodes: Sequence[tuple[object, bool]]) -> str | None:
    root = parsed.root
    assert isinstance(root, ast.UpdateExpr)
    seen: set[str] = set()
    for section in root.sections:
        if section in seen:
            return messages.EXPR_SECTION_TWICE.format(section=section)
        seen.add(section)
    return None


def _operand_count_error(nodes: Sequence[tuple[object, bool]], functions: dict[str, int]) -> str | None:
    for node, _ in nodes:
        if isinstance(node, ast.Call) and functions.get(node.name, len(node.args)) != len(node.args):
            return messages.EXPR_OPERAND_COUNT.format(name=node.name, count=len(node.args))
    return None


_CONDITION_PASSES: tuple[_StaticPass, ...] = (
    _pass_parens,
    _unknown_function(CONDITION_FUNCTIONS, UPDATE_FUNCTIONS, messages.EXPR_FUNCTION_NOT_IN_CONDITION),
    _pass_misused_function,
    _pass_reserved,
)
_UPDATE_PASSES: tuple[_StaticPass, ...] = (
    _pass_reserved,
    _unknown_function(UPDATE_FUNCTIONS, CONDITION_FUNCTIONS, messages.EXPR_FUNCTION_NOT_IN_UPDATE),
    _pass_nested_list_append,
    _pass_sections,
)
_PROJECTION_PASSES: tuple[_StaticPass, ...] = (_pass_reserved,)


def check_static(kind: str, parsed: ast.Parsed) -> Checked:
    """Run the static passes of ``kind`` (the request parameter name); raise the first error."""
    root = parsed.root
    nodes = list(_walk(root, False))
    if isinstance(root, ast.UpdateExpr):
        passes, group, functions = _UPDATE_PASSES, "update", UPDATE_FUNCTIONS
    elif isinstance(root, ast.ProjectionExpr):
        passes, group, functions = _PROJECTION_PASSES, "projection", {}
    else:
        passes, group, functions = _CONDITION_PASSES, "condition", CONDITION_FUNCTIONS
    for check in passes:
        error = check(parsed, nodes)
        if error is not None:
            raise ExpressionError(error)
    return Checked(group, root, _operand_count_error(nodes, functions))


# -- resolved passes -----------------------------------------------------------------------------------
def path_str(path: ResolvedPath) -> str:
    return "[" + ", ".join(f"[{e}]" if isinstance(e, int) else e for e in path) + "]"


def _literal_type(operand: Operand) -> str | None:
    if isinstance(operand, ValueOperand):
        return next(iter(operand.value))
    return None


def _static_type(operand: Operand) -> str | None:
    """The type an operand is known to have before evaluation (values, and size() -> N)."""
    if isinstance(operand, FunctionOperand) and operand.name == "size":
        return "N"
    return _literal_type(operand)


def _distinct_error(condition: ResolvedCondition) -> str | None:
    rest: tuple[Operand, ...]
    for node in iter_conditions(condition.root):
        if isinstance(node, Comparison):
            name, first, rest = node.op, node.left, (node.right,)
        elif isinstance(node, FunctionCondition) and len(node.args) == 2:
            name, first, rest = node.name, node.args[0], (node.args[1],)
        elif isinstance(node, BetweenCondition):
            name, first, rest = "BETWEEN", node.operand, (node.low, node.high)
        elif isinstance(node, InCondition):
            name, first, rest = "IN", node.operand, node.options
        else:
            continue
        if isinstance(first, PathOperand) and any(
            isinstance(other, PathOperand) and other.path == first.path for other in rest
        ):
            return messages.EXPR_DISTINCT.format(name=name, path=path_str(first.path))
    return None


def _bound_text(value: dict[str, object]) -> tuple[str, object]:
    type_name = next(iter(value))
    return type_name, value[type_name]


def _function_error(name: str, args: tuple[Operand, ...]) -> str | None:
    if name in ("attribute_exists", "attribute_not_exists"):
        if not isinstance(args[0], PathOperand):
            return messages.EXPR_REQUIRES_PATH.format(name=name)
    elif name == "begins_with":
        for arg in args:
            type_name = _static_type(arg)
            if type_name is not None and type_name not in ("S", "B"):
                return messages.EXPR_OPERAND_TYPE.format(name=name, type=type_name)
    elif name == "attribute_type":
        type_name = _static_type(args[1])
        if type_name != "S":
            shown = type_name if type_name is not None else "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}"
            return messages.EXPR_OPERAND_TYPE.format(name=name, type=shown)
        assert isinstance(args[1], ValueOperand)
        if args[1].value["S"] not in ATTRIBUTE_TYPES:
            return messages.EXPR_ATTRIBUTE_TYPE_NAME.format(type=args[1].value["S"])
    elif name == "size":
        type_name = _static_type(args[0])
        if type_name in ("N", "BOOL", "NULL"):
            return messages.EXPR_OPERAND_TYPE.format(name=name, type=type_name)
    return None


def _operand_errors(operand: Operand) -> str | None:
    if isinstance(operand, FunctionOperand):
        for arg in operand.args:
            error = _operand_errors(arg)
            if error is not None:
                return error
        return _function_error(operand.name, operand.args)
    return None


def _type_error(condition: ResolvedCondition) -> str | None:
    for node in iter_conditions(condition.root):
        error: str | None = None
        if isinstance(node, Comparison):
            error = _operand_errors(node.left) or _operand_errors(node.right)
            if error is None and node.op not in ("=", "<>"):
                for side in (node.left, node.right):
                    type_name = _literal_type(side)
                    if type_name is not None and type_name not in ("N", "S", "B"):
                        return messages.EXPR_OPERAND_TYPE.format(name=node.op, type=type_name)
        elif isinstance(node, FunctionCondition):
            for arg in node.args:
                error = error or _operand_errors(arg)
            error = error or _function_error(node.name, node.args)
        elif isinstance(node, BetweenCondition):
            for arg in (node.operand, node.low, node.high):
                error = error or _operand_errors(arg)
            if error is None and isinstance(node.low, ValueOperand) and isinstance(node.high, ValueOperand):
                error = between_error(node.low.value, node.high.value)
        elif isinstance(node, InCondition):
            if len(node.options) > MAX_IN_OPERANDS:
                return messages.EXPR_IN_TOO_MANY.format(count=len(node.options))
            for arg in (node.operand, *node.options):
                error = error or _operand_errors(arg)
        if error is not None:
            return error
    return None


def between_error(low: dict[str, object], high: dict[str, object]) -> str | None:
    lt, lv = _bound_text(low)
    ut, uv = _bound_text(high)
    if lt != ut:
        return messages.EXPR_BETWEEN_TYPES.format(lt=lt, lv=lv, ut=ut, uv=uv)
    if lt not in ("N", "S", "B"):
        return messages.EXPR_OPERAND_TYPE.format(name="BETWEEN", type=lt)
    if compare_scalars(lt, lv, uv) > 0:
        return messages.EXPR_BETWEEN_ORDER.format(lt=lt, lv=lv, ut=ut, uv=uv)
    return None


def check_condition_resolved(checked: Checked, condition: ResolvedCondition) -> None:
    """Resolved passes for conditions, in order: operand count, distinct operands, types."""
    if checked.operand_count_error is not None:
        raise ExpressionError(checked.operand_count_error)
    error = _distinct_error(condition) or _type_error(condition)
    if error is not None:
        raise ExpressionError(error)


def check_paths(paths: Sequence[ResolvedPath]) -> None:
    """Overlap before conflict, each pair compared as (earlier path, later path)."""
    overlap: str | None = None
    conflict: str | None = None
    for index, later in enumerate(paths):
        for earlier in paths[:index]:
            for a, b in zip(earlier, later, strict=False):
                if isinstance(a, int) != isinstance(b, int):
                    if conflict is None:
                        one, two = path_str(earlier), path_str(later)
                        conflict = messages.EXPR_PATHS_CONFLICT.format(one=one, two=two)
                    break
                if a != b:
                    break
            else:
                overlap = messages.EXPR_PATHS_OVERLAP.format(one=path_str(earlier), two=path_str(later))
                raise ExpressionError(overlap)
    if conflict is not None:
        raise ExpressionError(conflict)


def _update_function_error(operand: Operand) -> str | None:
    if isinstance(operand, ArithOperand):
        for arg in (operand.left, operand.right):
            error = _update_function_error(arg)
            if error is not None:
                return error
        for arg in (operand.left, operand.right):
            type_name = _literal_type(arg)
            if type_name is not None and type_name != "N":
                return messages.EXPR_OPERAND_TYPE.format(name=operand.op, type=type_name)
    elif isinstance(operand, FunctionOperand):
        for arg in operand.args:
            error = _update_function_error(arg)
            if error is not None:
                return error
        if operand.name == "if_not_exists" and not isinstance(operand.args[0], PathOperand):
            return messages.EXPR_REQUIRES_PATH.format(name=operand.name)
        if operand.name == "list_append":
            for arg in operand.args:
                type_name = _literal_type(arg)
                if type_name is not None and type_name != "L":
                    return messages.EXPR_OPERAND_TYPE.format(name=operand.name, type=type_name)
    return None


def check_update_resolved(checked: Checked, update: ResolvedUpdate) -> None:
    """Resolved passes for updates: overlap, conflict, ADD/DELETE operand types, functions."""
    check_paths(update.paths)
    for operator, actions in (("ADD", update.adds), ("DELETE", update.deletes)):
        for _, value in actions:
            type_name = next(iter(value))
            if type_name in _SET_TYPES or (operator == "ADD" and type_name == "N"):
                continue
            raise ExpressionError(
                messages.EXPR_UPDATE_OPERAND_TYPE.format(name=operator, type=_UPDATE_TYPE_NAMES[type_name])
            )
    if checked.operand_count_error is not None:
        raise ExpressionError(checked.operand_count_error)
    for _, operand in update.sets:
        error = _update_function_error(operand)
        if error is not None:
            raise ExpressionError(error)
