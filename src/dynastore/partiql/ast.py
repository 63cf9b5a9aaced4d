"""The syntax tree of a PartiQL statement, exactly as written: parameters unbound, values unconverted.

Trees are cached and shared between requests (partiql/cache.py), so every node is a frozen, slotted dataclass.
``at`` fields hold a token's position (``line:column:length``, as DynamoDB's messages quote it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "And",
    "Arith",
    "Between",
    "Call",
    "Compare",
    "Condition",
    "Delete",
    "Exists",
    "In",
    "Insert",
    "IsCheck",
    "ListValue",
    "Literal",
    "MapValue",
    "Not",
    "Operand",
    "Or",
    "OrderTerm",
    "Param",
    "Path",
    "Remove",
    "Select",
    "Set",
    "SetValue",
    "Statement",
    "Update",
    "Value",
]


@dataclass(frozen=True, slots=True)
class Path:
    """A document path: a name, then ``.name`` and ``[index]`` steps."""

    elements: tuple[str | int, ...]
    at: str = ""


# ---------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Literal:
    """A scalar literal, already an AttributeValue (``{"S": ...}``, ``{"N": ...}``, ``{"BOOL": ...}``,
    ``{"NULL": True}``); numbers are checked when bound."""

    value: tuple[str, object]  # (type, payload): a hashable form of the AttributeValue


@dataclass(frozen=True, slots=True)
class Param:
    """The ``index``-th ``?`` of the statement (0-based)."""

    index: int


@dataclass(frozen=True, slots=True)
class ListValue:
    items: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class MapValue:
    entries: tuple[tuple[str, Value], ...]


@dataclass(frozen=True, slots=True)
class SetValue:
    """``<<...>>``: a string, number or binary set, typed by its members once bound."""

    items: tuple[Value, ...]


Value: TypeAlias = Literal | Param | ListValue | MapValue | SetValue


# ---------------------------------------------------------------- operands and conditions


@dataclass(frozen=True, slots=True)
class Call:
    """A function call; ``name`` lower-cased."""

    name: str
    args: tuple[Operand, ...]
    at: str = ""


@dataclass(frozen=True, slots=True)
class Arith:
    op: str  # + or -
    left: Operand
    right: Operand


Operand: TypeAlias = Path | Literal | Param | ListValue | MapValue | SetValue | Call | Arith


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
class IsCheck:
    """``x IS [NOT] MISSING`` / ``x IS [NOT] NULL``."""

    operand: Operand
    kind: str  # MISSING or NULL
    negated: bool


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


Condition: TypeAlias = Compare | Between | In | IsCheck | And | Or | Not | Call


# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class OrderTerm:
    path: Path
    descending: bool


@dataclass(frozen=True, slots=True)
class Select:
    projection: tuple[Path, ...] | None  # None: *
    table: str
    index: str | None
    where: Condition | None
    order_by: tuple[OrderTerm, ...]


@dataclass(frozen=True, slots=True)
class Insert:
    table: str
    item: Value


@dataclass(frozen=True, slots=True)
class Set:
    path: Path
    value: Operand


@dataclass(frozen=True, slots=True)
class Remove:
    path: Path


@dataclass(frozen=True, slots=True)
class Update:
    table: str
    actions: tuple[Set | Remove, ...]
    where: Condition | None
    returning: str | None  # ALL_OLD, MODIFIED_OLD, ALL_NEW, MODIFIED_NEW


@dataclass(frozen=True, slots=True)
class Delete:
    table: str
    where: Condition | None
    returning: str | None  # ALL_OLD


@dataclass(frozen=True, slots=True)
class Exists:
    """``EXISTS(SELECT ...)``: a condition check, in ExecuteTransaction only."""

    select: Select


Statement: TypeAlias = Select | Insert | Update | Delete | Exists
