"""A small declarative DSL for request shapes.

Shapes are immutable data. ``typecheck`` (phase 1) and ``constraints`` (phase 2) compile them into
specialised closures once, so per-request work is a handful of calls. Member order inside a ``Struct``
is the order DynamoDB reports constraint errors in; enum order is DynamoDB's listing order.

Positions matter for phase-1 texts: a shape that sits directly in a structure is a *field*; one that is
a list element or a map value is a *value* (``Unexpected field type`` vs ``Unexpected value type in
payload``). The compiler tracks that, so a shape object can be reused in both positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "TABLE_NAME_PATTERN",
    "AttrValue",
    "Blob",
    "Boolean",
    "Enum",
    "Integer",
    "List",
    "Long",
    "Map",
    "Shape",
    "String",
    "Struct",
    "Timestamp",
    "java_type",
]

TABLE_NAME_PATTERN = "[a-zA-Z0-9_.-]+"
MODEL_PACKAGE = "com.amazonaws.dynamodb.v20120810."


class Shape:
    """Base of every shape. ``not_null`` is the one constraint every shape can carry."""

    __slots__ = ()
    not_null: bool


@dataclass(frozen=True, slots=True)
class String(Shape):
    not_null: bool = False
    min_len: int | None = None
    max_len: int | None = None
    pattern: str | None = None
    # Top-level only: reported alone, before the aggregated constraint list (table-level operations).
    required: bool = False
    # A TableName that may also be a table ARN: 1..1024 characters; a name (not "arn:...") then also has
    # the pattern and 3..255 characters (``min_len`` / ``max_len`` / ``pattern`` are ignored).
    table_or_arn: bool = False


@dataclass(frozen=True, slots=True, init=False)
class Enum(Shape):
    values: tuple[str, ...]
    not_null: bool

    def __init__(self, *values: str, not_null: bool = False) -> None:
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "not_null", not_null)


@dataclass(frozen=True, slots=True)
class Integer(Shape):
    min: int | None = None
    max: int | None = None
    not_null: bool = False


@dataclass(frozen=True, slots=True)
class Long(Shape):
    min: int | None = None
    max: int | None = None
    not_null: bool = False


@dataclass(frozen=True, slots=True)
class Boolean(Shape):
    not_null: bool = False


@dataclass(frozen=True, slots=True)
class Blob(Shape):
    not_null: bool = False
    min_len: int | None = None
    max_len: int | None = None


@dataclass(frozen=True, slots=True)
class Timestamp(Shape):
    """A date: a JSON number of seconds since the epoch (how the JSON protocol sends a ``timestamp``)."""

    not_null: bool = False


@dataclass(frozen=True, slots=True)
class AttrValue(Shape):
    """A DynamoDB AttributeValue; phase 1 checks its JSON types and records well-formedness in one walk."""

    not_null: bool = False


@dataclass(frozen=True, slots=True)
class List(Shape):
    member: Shape
    not_null: bool = False
    min_len: int | None = None
    max_len: int | None = None
    # Length errors in DynamoDB's newer form: ``Value at '<Member.path>'``, the value not echoed.
    bare: bool = False


@dataclass(frozen=True, slots=True)
class Map(Shape):
    """String-keyed map. ``keys`` constrains every key; ``value_len`` every value's length (min, max)."""

    value: Shape
    not_null: bool = False
    min_len: int | None = None
    max_len: int | None = None
    keys: String | None = None
    value_len: tuple[int, int] | None = None
    bare: bool = False  # as List.bare


@dataclass(frozen=True, slots=True, init=False)
class Struct(Shape):
    """A structure; ``members`` keep keyword order (= DynamoDB's error order)."""

    name: str
    members: tuple[tuple[str, Shape], ...]
    not_null: bool

    def __init__(self, name: str = "", *, not_null: bool = False, **members: Shape) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "members", tuple(members.items()))
        object.__setattr__(self, "not_null", not_null)

    def member(self, key: str) -> Shape | None:
        for name, shape in self.members:
            if name == key:
                return shape
        return None


def java_type(shape: Any) -> str:
    """The Java type DynamoDB's deserializer names in ``Unrecognized collection type`` messages."""
    if isinstance(shape, String | Enum):
        return "java.lang.String"
    if isinstance(shape, Integer):
        return "java.lang.Integer"
    if isinstance(shape, Long):
        return "java.lang.Long"
    if isinstance(shape, Boolean):
        return "java.lang.Boolean"
    if isinstance(shape, Blob):
        return "java.nio.ByteBuffer"
    if isinstance(shape, AttrValue):
        return MODEL_PACKAGE + "AttributeValue"
    if isinstance(shape, Struct):
        return MODEL_PACKAGE + shape.name
    if isinstance(shape, List):
        return f"java.util.List<{java_type(shape.member)}>"
    if isinstance(shape, Map):
        return f"java.util.Map<java.lang.String, {java_type(shape.value)}>"
    if isinstance(shape, Timestamp):
        return "java.util.Date"
    raise TypeError(f"not a shape: {shape!r}")
