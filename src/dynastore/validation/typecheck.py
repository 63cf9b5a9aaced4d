"""Phase 1: JSON-type checking and coercion, DynamoDB's deserializer texts (``SerializationException``).

Each shape compiles once into a closure ``coerce(value) -> value`` (the value is never ``None``; callers
drop ``None`` members). Unknown structure members and ``null`` members are dropped. The first mismatch
raises. AttributeValue maps are walked once here: the walk checks JSON types (raising), records the
first well-formedness problem (reported later, in DynamoDB's phase-3 order) and canonicalises numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dynastore import messages
from dynastore.errors import SerializationException
from dynastore.validation import attribute_values
from dynastore.validation.json_errors import Coercer, blob_error, scalar_error
from dynastore.validation.shapes import (
    AttrValue,
    Blob,
    Boolean,
    Enum,
    Integer,
    List,
    Long,
    Map,
    Shape,
    String,
    Struct,
    Timestamp,
    java_type,
)

__all__ = ["coerce_blob", "coercer"]

_CACHE: dict[tuple[int, bool], tuple[Shape, Coercer]] = {}


def coerce_blob(value: Any) -> Any:
    error = blob_error(value)
    if error is not None:
        raise error
    return value


def _container_error(value: Any, *, expected: str, in_value: bool, java_name: str) -> SerializationException:
    """Wrong JSON type where a list/map/structure was expected."""
    if expected == "list":
        if isinstance(value, dict):
            return SerializationException(messages.SER_STRUCT_NOT_EXPECTED)
        return SerializationException(messages.SER_PARAMETERIZED_CAST if in_value else messages.SER_UNEXPECTED_FIELD)
    if isinstance(value, list):
        prefix = "" if expected == "map" else "class "
        return SerializationException(messages.SER_UNRECOGNIZED_COLLECTION.format(java_type=prefix + java_name))
    if expected == "map":
        return SerializationException(messages.SER_PARAMETERIZED_CAST if in_value else messages.SER_UNEXPECTED_FIELD)
    return SerializationException(messages.SER_UNEXPECTED_VALUE if in_value else messages.SER_UNEXPECTED_FIELD)


def coercer(shape: Shape, in_value: bool = False) -> Coercer:
    """The compiled phase-1 coercer of ``shape`` (cached per shape object and position)."""
    cache_key = (id(shape), in_value)
    hit = _CACHE.get(cache_key)
    if hit is not None:
        return hit[1]
    fn = _compile(shape, in_value)
    _CACHE[cache_key] = (shape, fn)
    return fn


def _compile(shape: Shape, in_value: bool) -> Coercer:
    if isinstance(shape, String | Enum):
        return _compile_string()
    if isinstance(shape, Integer | Long):
        return _compile_number("Integer" if isinstance(shape, Integer) else "Long", java_type(shape))
    if isinstance(shape, Boolean):
        return _compile_boolean()
    if isinstance(shape, Blob):
        return coerce_blob
    if isinstance(shape, AttrValue):
        return attribute_values.value_coercer(in_value)
    if isinstance(shape, List):
        return _compile_list(shape, in_value)
    if isinstance(shape, Map):
        if isinstance(shape.value, AttrValue):
            return attribute_values.map_coercer(in_value)
        return _compile_map(shape, in_value)
    if isinstance(shape, Struct):
        return _compile_struct(shape, in_value)
    if isinstance(shape, Timestamp):
        return _coerce_timestamp
    raise TypeError(f"not a shape: {shape!r}")


def _compile_string() -> Coercer:
    def coerce_string(value: Any) -> Any:
        if type(value) is str:
            return value
        raise scalar_error(value, "String", "java.lang.String")

    return coerce_string


def _coerce_timestamp(value: Any) -> Any:
    """A date: seconds since the epoch, as a float."""
    if type(value) is int or type(value) is float:
        return float(value)
    raise scalar_error(value, "Date", "java.util.Date")


def _compile_boolean() -> Coercer:
    def coerce_boolean(value: Any) -> Any:
        if type(value) is bool:
            return value
        raise scalar_error(value, "Boolean", "java.lang.Boolean")

    return coerce_boolean


# What an Integer or a Long member holds: DynamoDB's deserializer saturates a JSON number past the Java type's range
# at its end (an Integer member given 2147483648 is validated as 2147483647), so a value past 64 bits is reported
# (or stored) as 9223372036854775807 rather than reaching a 64-bit field it cannot fill (docs/operations.md).
_JAVA_RANGES = {"Integer": (-(2**31), 2**31 - 1), "Long": (-(2**63), 2**63 - 1)}


def _compile_number(simple_name: str, java_name: str) -> Coercer:
    low, high = _JAVA_RANGES[simple_name]

    def coerce_number(value: Any) -> Any:
        kind = type(value)
        if kind is int:
            number = value
        elif kind is float:  # Integer/Long members truncate fractional JSON numbers
            number = math.floor(value)
        else:
            raise scalar_error(value, simple_name, java_name)
        if low <= number <= high:
            return number
        return high if number > high else low

    return coerce_number


def _null_member(shape: Shape, member: Coercer) -> Callable[[], Any]:
    """What a JSON ``null`` inside a list or map becomes.

    A null structure, list or map member is taken as an empty one, so it fails the checks an empty one fails
    (a missing required member, a too-short list) instead of reaching the operation as ``None``. Scalars and
    AttributeValues stay ``None``: the constraint and attribute-value checks report those themselves.
    """
    if isinstance(shape, Struct | Map) and not isinstance(shape, AttrValue):
        return lambda: member({})
    if isinstance(shape, List):
        return lambda: member([])
    return lambda: None


def _compile_list(shape: List, in_value: bool) -> Coercer:
    member = coercer(shape.member, True)
    null_member = _null_member(shape.member, member)
    java_name = java_type(shape)

    def coerce_list(value: Any) -> Any:
        if type(value) is not list:
            raise _container_error(value, expected="list", in_value=in_value, java_name=java_name)
        return [null_member() if item is None else member(item) for item in value]

    return coerce_list


def _compile_map(shape: Map, in_value: bool) -> Coercer:
    member = coercer(shape.value, True)
    null_member = _null_member(shape.value, member)
    java_name = java_type(shape)

    def coerce_map(value: Any) -> Any:
        if type(value) is not dict:
            raise _container_error(value, expected="map", in_value=in_value, java_name=java_name)
        return {key: null_member() if item is None else member(item) for key, item in value.items()}

    return coerce_map


def _compile_struct(shape: Struct, in_value: bool) -> Coercer:
    members = {name: coercer(sub, False) for name, sub in shape.members}
    java_name = java_type(shape)

    def coerce_struct(value: Any) -> Any:
        if type(value) is not dict:
            raise _container_error(value, expected="struct", in_value=in_value, java_name=java_name)
        out = {}
        for key, item in value.items():
            fn = members.get(key)
            if fn is not None and item is not None:
                out[key] = fn(item)
        return out

    return coerce_struct
