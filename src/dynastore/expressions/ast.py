"""Immutable syntax tree of every expression kind, exactly as written (placeholders unresolved).

Trees are cached and shared between requests, so every node is a frozen, slotted dataclass.
``Call`` is both a condition (``attribute_exists(a)``) and an operand (``size(a)``); the semantic
passes decide which uses are allowed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "AddAction",
    "And",
    "Arith",
    "Attr",
    "Between",
    "Call",
    "Compare",
    "Condition",
    "DeleteAction",
    "In",
    "Index",
    "NameRef",
    "Node",
    "Not",
    "Operand",
    "Or",
    "Parsed",
    "Path",
    "PathElement",
    "ProjectionExpr",
    "RemoveAction",
    "SetAction",
    "UpdateAction",
    "UpdateExpr",
    "ValueRef",
    "AndCondition",
    "ArithOperand",
    "BetweenCondition",
    "Comparison",
    "FunctionCondition",
    "FunctionOperand",
    "InCondition",
    "NotCondition",
    "OrCondition",
    "PathOperand",
    "ResolvedCondition",
    "ResolvedNode",
    "ResolvedOperand",
    "ResolvedPath",
    "ResolvedProjection",
    "ResolvedUpdate",
    "ValueOperand",
    "iter_conditions",
]


@dataclass(frozen=True, slots=True)
class Attr:
    """A bare attribute name (subject to the reserved-word check)."""

    name: str


@dataclass(frozen=True, slots=True)
class NameRef:
    """An ``#name`` placeholder."""

    ref: str


@dataclass(frozen=True, slots=True)
class Index:
    index: int


PathElement: TypeAlias = Attr | NameRef | Index


@dataclass(frozen=True, slots=True)
class Path:
    elements: tuple[PathElement, ...]


@dataclass(frozen=True, slots=True)
class ValueRef:
    """A ``:value`` placeholder."""

    ref: str


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    args: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Arith:
    """``a + b`` / ``a - b`` in a SET action."""

    op: str
    left: Operand
    right: Operand


Operand: TypeAlias = Path | ValueRef | Call | Arith


@dataclass(frozen=True, slots=True)
class Compare:
    op: str  # = <> < <= > >=
    left: Operand
    right: Operand


@dataclass(frozen=True, slots=True)
class Between:
    operand: Operand
    low: Operand
    high: Operand


@dataclass(frozen=True, slots=True)
class In:
    operand: Operand
    options: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class And:
    left: Condition
    right: Condition


@dataclass(frozen=True, slots=True)
class Or:
    left: Condition
    right: Condition


@dataclass(frozen=True, slots=True)
class Not:
    operand: Condition


Condition: TypeAlias = Compare | Between | In | And | Or | Not | Call


@dataclass(frozen=True, slots=True)
class SetAction:
    path: Path
    value: Operand


@dataclass(frozen=True, slots=True)
class RemoveAction:
    path: Path


@dataclass(frozen=True, slots=True)
class AddAction:
    path: Path
    value: ValueRef


@dataclass(frozen=True, slots=True)
class DeleteAction:
    path: Path
    value: ValueRef


UpdateAction: TypeAlias = SetAction | RemoveAction | AddAction | DeleteAction


@dataclass(frozen=True, slots=True)
class UpdateExpr:
    actions: tuple[UpdateAction, ...]
    sections: tuple[str, ...]  # clause keywords in source order, upper-cased


@dataclass(frozen=True, slots=True)
class ProjectionExpr:
    paths: tuple[Path, ...]


Node: TypeAlias = Condition | UpdateExpr | ProjectionExpr


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parse result plus the facts only the parser can see (redundant parentheses)."""

    root: Node
    redundant_parens: bool = False


# -- resolved form: placeholders substituted, built per request (resolve.py) or by legacy.py -------------
ResolvedPath: TypeAlias = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class PathOperand:
    path: ResolvedPath


@dataclass(frozen=True, slots=True)
class ValueOperand:
    value: dict[str, Any]


@dataclass(frozen=True, slots=True)
class FunctionOperand:
    """size(x), if_not_exists(p, v), list_append(a, b)."""

    name: str
    args: tuple[ResolvedOperand, ...]


@dataclass(frozen=True, slots=True)
class ArithOperand:
    op: str
    left: ResolvedOperand
    right: ResolvedOperand


ResolvedOperand: TypeAlias = PathOperand | ValueOperand | FunctionOperand | ArithOperand


@dataclass(frozen=True, slots=True)
class Comparison:
    op: str
    left: ResolvedOperand
    right: ResolvedOperand


@dataclass(frozen=True, slots=True)
class BetweenCondition:
    operand: ResolvedOperand
    low: ResolvedOperand
    high: ResolvedOperand


@dataclass(frozen=True, slots=True)
class InCondition:
    operand: ResolvedOperand
    options: tuple[ResolvedOperand, ...]


@dataclass(frozen=True, slots=True)
class FunctionCondition:
    name: str
    args: tuple[ResolvedOperand, ...]


@dataclass(frozen=True, slots=True)
class AndCondition:
    left: ResolvedNode
    right: ResolvedNode


@dataclass(frozen=True, slots=True)
class OrCondition:
    left: ResolvedNode
    right: ResolvedNode


@dataclass(frozen=True, slots=True)
class NotCondition:
    operand: ResolvedNode


ResolvedNode: TypeAlias = (
    Comparison | BetweenCondition | InCondition | FunctionCondition | AndCondition | OrCondition | NotCondition
)


@dataclass(frozen=True, slots=True)
class ResolvedCondition:
    """What ``ExpressionContext.condition`` and ``legacy.*_condition`` return; input of ``evaluate``."""

    root: ResolvedNode


@dataclass(frozen=True, slots=True)
class ResolvedUpdate:
    """From ``ExpressionContext.update`` or ``legacy.attribute_updates``; input of ``apply_update``."""

    sets: tuple[tuple[ResolvedPath, ResolvedOperand], ...]
    removes: tuple[ResolvedPath, ...]
    adds: tuple[tuple[ResolvedPath, dict[str, Any]], ...]
    deletes: tuple[tuple[ResolvedPath, dict[str, Any]], ...]
    paths: tuple[ResolvedPath, ...]  # every action's path in source order
    legacy: bool = False  # AttributeUpdates: type errors use the legacy texts


@dataclass(frozen=True, slots=True)
class ResolvedProjection:
    paths: tuple[ResolvedPath, ...]


def iter_conditions(node: ResolvedNode) -> Iterator[ResolvedNode]:
    """Pre-order (source order) walk over the condition nodes of a resolved tree."""
    stack: list[ResolvedNode] = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, AndCondition | OrCondition):
            stack.append(current.right)
            stack.append(current.left)
        elif isinstance(current, NotCondition):
            stack.append(current.operand)
