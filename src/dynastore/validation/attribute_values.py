"""AttributeValue well-formedness, key checks against a key schema, and the phase-1 AttributeValue walk.

One walk per AttributeValue map does three things: JSON types (``SerializationException``, raised at
once because DynamoDB deserialises before it validates), well-formedness (the first problem is
*recorded* on the returned ``AttributeMap`` and raised later by ``check_item``, in the operation's
semantic order), and number canonicalisation in place (``"1E+2"`` -> ``"100"``, also inside L/M/NS).

Empty strings and binaries are valid outside keys; key checks live in ``check_key``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from dynastore import limits, messages
from dynastore.errors import ValidationException
from dynastore.model.values import NumberError, normalize_number
from dynastore.validation.json_errors import Coercer, blob_error, scalar_error
from dynastore.validation.shapes import MODEL_PACKAGE

__all__ = [
    "AttributeMap",
    "CheckedValue",
    "check_attribute_updates",
    "check_conditions",
    "check_item",
    "check_key",
    "check_key_value",
    "check_name",
    "check_value",
    "invalid_entry",
    "key_value_bytes",
    "map_coercer",
    "nesting_exceeded",
    "name_error",
    "value_coercer",
]

_AV_CLASS = MODEL_PACKAGE + "AttributeValue"
_AV_MAP_CLASS = f"java.util.Map<java.lang.String, {_AV_CLASS}>"
_TYPES = frozenset(("S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"))
# Numbers already in DynamoDB's canonical form need no Decimal round trip (length bounds keep them in range).
_CANONICAL_NUMBER = re.compile(r"-?(?:[1-9][0-9]*(?:\.[0-9]*[1-9])?|0\.[0-9]*[1-9])|0")
_MAX_DEPTH = limits.MAX_NESTING_DEPTH
_MAX_HASH_KEY_BYTES: Final = limits.MAX_HASH_KEY_BYTES  # read on every key: kept here, no module look-up
_MAX_RANGE_KEY_BYTES: Final = limits.MAX_RANGE_KEY_BYTES
# A name of at most this many characters is within the byte limit whatever its characters (4 bytes each at most).
_SAFE_NAME_CHARS: Final = limits.MAX_ATTRIBUTE_NAME_BYTES // 4


def name_error(name: Any) -> str | None:
    """DynamoDB's problem with an attribute name (empty, or over 65,535 bytes of UTF-8), or None."""
    if not name:
        return messages.ATTRIBUTE_NAME_EMPTY
    if len(name) > _SAFE_NAME_CHARS and _utf8_len(name) > limits.MAX_ATTRIBUTE_NAME_BYTES:
        return messages.ATTRIBUTE_NAME_TOO_LARGE
    return None


def check_name(name: Any) -> None:
    """Raise ``ValidationException`` for an empty or oversize attribute name."""
    error = name_error(name)
    if error is not None:
        raise ValidationException(error)


def _utf8_len(text: str) -> int:
    # surrogatepass: a lone surrogate is measured, never a reason to fail with something other than a 400
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class AttributeMap(dict[str, Any]):
    """A phase-1-checked ``name -> AttributeValue`` map; ``error`` is its first (name, message) problem, set by the
    coercer that makes it (no ``__init__`` of its own: one is made per request, and dict's is the cheaper call)."""

    __slots__ = ("error",)
    error: tuple[str, str] | None


class CheckedValue(dict[str, Any]):
    """A phase-1-checked single AttributeValue; ``error`` is its first problem, set by the coercer that makes it."""

    __slots__ = ("error",)
    error: str | None


def _serialization(value: Any, *, in_value: bool, is_map: bool = False) -> Exception:
    from dynastore.errors import SerializationException

    if isinstance(value, list):
        java = _AV_MAP_CLASS if is_map else "class " + _AV_CLASS
        return SerializationException(messages.SER_UNRECOGNIZED_COLLECTION.format(java_type=java))
    if is_map:
        return SerializationException(messages.SER_PARAMETERIZED_CAST if in_value else messages.SER_UNEXPECTED_FIELD)
    return SerializationException(messages.SER_UNEXPECTED_VALUE if in_value else messages.SER_UNEXPECTED_FIELD)


def _list_error(value: Any) -> Exception:
    from dynastore.errors import SerializationException

    if isinstance(value, dict):
        return SerializationException(messages.SER_STRUCT_NOT_EXPECTED)
    return SerializationException(messages.SER_UNEXPECTED_FIELD)


def _number(text: Any) -> tuple[str | None, str | None]:
    """(canonical text, None) or (None, error message); raises on a non-string."""
    if type(text) is not str:
        raise scalar_error(text, "String", "java.lang.String")
    # An integer of at most 38 digits without leading zeros is canonical: told by str methods at a fraction of
    # the regular expression's cost; every other spelling is left to the regular expression.
    digits = text[1:] if text[:1] == "-" else text
    if 0 < len(digits) <= 38 and digits.isdigit() and digits.isascii() and (digits[0] != "0" or text == "0"):
        return text, None
    if len(digits) <= 38 and _CANONICAL_NUMBER.fullmatch(text) is not None:
        return text, None
    try:
        return normalize_number(text), None
    except NumberError as e:
        return None, e.message


def _strings(values: Any) -> None:
    for item in values:
        if item is not None and type(item) is not str:
            raise scalar_error(item, "String", "java.lang.String")


def _java_list(values: list[Any]) -> str:
    return "[" + ", ".join("null" if v is None else str(v) for v in values) + "]"


def _scan_member(av: dict[str, Any], kind: str, payload: Any, depth: int) -> str | None:
    """Check one ``kind: payload`` member of an AttributeValue; returns its well-formedness problem."""
    if kind == "S":
        if type(payload) is not str:
            raise scalar_error(payload, "String", "java.lang.String")
        return None
    if kind == "N":
        canonical, error = _number(payload)
        if canonical is not None and canonical is not payload:
            av["N"] = canonical
        return error
    if kind == "B":
        blob = blob_error(payload)
        if blob is not None:
            raise blob
        return None
    if kind == "BOOL" or kind == "NULL":
        if type(payload) is not bool:
            raise scalar_error(payload, "Boolean", "java.lang.Boolean")
        return messages.AV_NULL_NOT_TRUE if kind == "NULL" and payload is not True else None
    if kind == "M":
        if type(payload) is not dict:
            raise _serialization(payload, in_value=False, is_map=True)
        error = messages.AV_NESTING if depth > _MAX_DEPTH else None
        for name, item in payload.items():
            found = _scan(item, depth + 1)
            if error is None:
                # inline the common case: a short non-empty name needs no call
                error = (name_error(name) if not name or len(name) > _SAFE_NAME_CHARS else None) or found
        return error
    if type(payload) is not list:
        raise _list_error(payload)
    if kind == "L":
        error = messages.AV_NESTING if depth > _MAX_DEPTH else None
        for item in payload:
            found = _scan(item, depth + 1)
            if error is None:
                error = found
        return error
    if kind == "SS":
        _strings(payload)
        if not payload:
            return messages.AV_EMPTY_SS
        if None in payload:
            return messages.AV_NULL_IN_SS
        if len(set(payload)) != len(payload):
            return messages.AV_DUPLICATES_SS.format(values=_java_list(payload))
        return None
    if kind == "BS":
        for item in payload:
            if item is not None:
                blob = blob_error(item)
                if blob is not None:
                    raise blob
        if not payload:
            return messages.AV_EMPTY_BS
        if None in payload:
            return messages.AV_NULL_IN_BS
        if len(set(payload)) != len(payload):
            return messages.AV_DUPLICATES_BS.format(values=_java_list(payload))
        return None
    # NS
    _strings(payload)
    if not payload:
        return messages.AV_EMPTY_NS
    error = None
    for index, item in enumerate(payload):
        if item is None:
            error = error or messages.NUMBER_NOT_NUMERIC
            continue
        canonical, problem = _number(item)
        if canonical is not None:
            payload[index] = canonical
        elif error is None:
            error = problem
    if error is None and len(set(payload)) != len(payload):
        return messages.AV_DUPLICATES_NS
    return error


def _scan(av: Any, depth: int, in_value: bool = True) -> str | None:
    """Walk one AttributeValue: raise on JSON-type errors, return its first well-formedness problem."""
    if type(av) is not dict:
        if av is None:
            return messages.AV_EMPTY
        raise _serialization(av, in_value=in_value)
    if len(av) == 1:
        for kind, payload in av.items():
            if kind == "S" and type(payload) is str:
                return None
            if kind == "BOOL" and type(payload) is bool:
                return None
    error: str | None = None
    count = 0
    dropped: list[str] | None = None
    for kind, payload in av.items():
        if payload is None or kind not in _TYPES:
            dropped = [kind] if dropped is None else [*dropped, kind]
            continue
        count += 1
        found = _scan_member(av, kind, payload, depth)
        if error is None:
            error = found
    if dropped is not None:
        for kind in dropped:
            del av[kind]
    if error is not None:
        return error
    if count == 0:
        return messages.AV_EMPTY
    if count > 1:
        return messages.AV_MULTIPLE
    return None


def map_coercer(in_value: bool) -> Coercer:
    """Phase-1 coercer of a ``Map<String, AttributeValue>`` member (Item, Key, ExpressionAttributeValues…)."""

    def coerce_attribute_map(value: Any) -> Any:
        if type(value) is not dict:
            raise _serialization(value, in_value=in_value, is_map=True)
        out = AttributeMap(value)
        error = None
        for name, av in value.items():
            found = _scan(av, 1)
            if error is None:
                if not name or len(name) > _SAFE_NAME_CHARS:
                    found = name_error(name) or found
                if found is not None:
                    error = (name, found)
        out.error = error
        return out

    return coerce_attribute_map


def value_coercer(in_value: bool) -> Coercer:
    """Phase-1 coercer of a single AttributeValue member (Expected.*.Value, AttributeValueList items)."""

    def coerce_attribute_value(value: Any) -> Any:
        error = _scan(value, 1, in_value)
        out = CheckedValue(value)
        out.error = error
        return out

    return coerce_attribute_value


def invalid_entry(item: dict[str, Any]) -> tuple[str, str] | None:
    """The first (name, message) well-formedness problem of an attribute map, or None."""
    if type(item) is AttributeMap:
        return item.error
    for name, av in item.items():
        found = name_error(name) or _scan(av, 1)
        if found is not None:
            return name, found
    return None


def check_item(item: dict[str, Any]) -> None:
    """Raise ``ValidationException`` for the first malformed AttributeValue of an item (or Key).

    Numbers are canonicalised in place when the map did not come through phase 1.
    """
    problem = invalid_entry(item)
    if problem is not None:
        raise ValidationException(problem[1])


def check_value(value: Any) -> None:
    """Raise ``ValidationException`` if one AttributeValue is malformed (canonicalising its numbers)."""
    error = value.error if type(value) is CheckedValue else _scan(value, 1)
    if error is not None:
        raise ValidationException(error)


def check_conditions(conditions: dict[str, Any] | None) -> None:
    """Names and AttributeValues of a legacy condition map (Expected, KeyConditions, QueryFilter, ScanFilter):
    ``Value`` and every ``AttributeValueList`` member must be well-formed (numbers canonicalised in place)."""
    for name, condition in (conditions or {}).items():
        check_name(name)
        if type(condition) is not dict:
            continue
        value = condition.get("Value")
        if value is not None:
            check_value(value)
        for value in condition.get("AttributeValueList") or ():
            check_value(value)


def check_attribute_updates(updates: dict[str, Any] | None) -> None:
    """Names and values of the legacy ``AttributeUpdates``: nothing malformed is ever stored."""
    for name, update in (updates or {}).items():
        check_name(name)
        if type(update) is dict and update.get("Value") is not None:
            check_value(update["Value"])


def nesting_exceeded(value: Any) -> bool:
    """Whether a (well-formed) top-level value nests lists and maps deeper than DynamoDB's 32 levels: the check
    an update's result needs when a SET wrote a nested path or copied a nested value."""
    stack = [(value, 1)]
    while stack:
        av, depth = stack.pop()
        children = av.get("M")
        if children is not None:
            children = children.values()
        else:
            children = av.get("L")
            if children is None:
                continue
        if depth > _MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def key_value_bytes(kind: str, payload: str) -> int:
    """The size DynamoDB counts for a key value: UTF-8 bytes of S, decoded bytes of B (numbers are small)."""
    if kind == "S":
        return _utf8_len(payload)
    if kind == "B":
        return len(payload) // 4 * 3 - (2 if payload.endswith("==") else 1 if payload.endswith("=") else 0)
    return 0  # numbers are always small enough


def check_key_value(name: str, kind: str, payload: str, *, is_range: bool) -> None:
    """A key value (of the right type) neither empty nor over the partition (2,048) or sort (1,024) key limit."""
    if payload == "" and kind != "N":
        template = messages.KEY_EMPTY_STRING if kind == "S" else messages.KEY_EMPTY_BINARY
        raise ValidationException(template.format(name=name), bare=True)
    if is_range:
        if key_value_bytes(kind, payload) > _MAX_RANGE_KEY_BYTES:
            raise ValidationException(messages.KEY_RANGE_TOO_LONG, bare=True)
    elif key_value_bytes(kind, payload) > _MAX_HASH_KEY_BYTES:
        raise ValidationException(messages.KEY_HASH_TOO_LONG, bare=True)


def check_key(
    key: dict[str, Any],
    hash_key: tuple[str, str],
    range_key: tuple[str, str] | None,
    *,
    is_full_item: bool,
) -> None:
    """Check the key attributes of a full item (``is_full_item``) or of a ``Key`` parameter.

    ``hash_key``/``range_key`` are ``(attribute name, "S" | "N" | "B")``. The AttributeValues must
    already be well-formed. Raises ``ValidationException`` with DynamoDB's text.
    """
    if not is_full_item and len(key) != (1 if range_key is None else 2):
        raise ValidationException(messages.KEY_SCHEMA_MISMATCH, bare=True)
    for (name, kind), is_range in ((hash_key, False), *(() if range_key is None else ((range_key, True),))):
        # Well-formed AttributeValues are dicts: typed so, ``get`` compiles to a C call, not a method found by name.
        av: dict[str, Any] | None = key.get(name)
        if av is None:
            if is_full_item:
                raise ValidationException(messages.KEY_MISSING_IN_ITEM.format(name=name), bare=True)
            raise ValidationException(messages.KEY_SCHEMA_MISMATCH, bare=True)
        payload = av.get(kind)
        if payload is None:
            if is_full_item:
                actual = next(iter(av), "")
                raise ValidationException(
                    messages.KEY_TYPE_MISMATCH_ITEM.format(name=name, expected=kind, actual=actual), bare=True
                )
            raise ValidationException(messages.KEY_SCHEMA_MISMATCH, bare=True)
        check_key_value(name, kind, payload, is_range=is_range)
