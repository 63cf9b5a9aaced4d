"""Phase 2: collect at most 10 constraint failures into one ``ValidationException``.

Format (DynamoDB's): ``N validation error(s) detected: `` + entries joined by ``; ``, each entry
``Value <value> at '<camelCase path>' failed to satisfy constraint: <constraint>``. Values render as
Java would print them: ``null`` bare, anything else quoted; lists ``[a, b]``, maps ``{k=v}``.
List members are ``<name>.<1-based index>.member``, map members ``<name>.<key>.member`` (map keys are
visited in reverse insertion order, as DynamoDB's reports list them).

Each shape compiles once into a checker, or to ``None`` when nothing in its subtree can fail, so an
Item map is never walked here.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from typing import Any

from dynastore import messages
from dynastore.errors import ValidationException
from dynastore.limits import TABLE_ARN_MAX_LENGTH
from dynastore.validation.shapes import (
    MODEL_PACKAGE,
    TABLE_NAME_PATTERN,
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
)

__all__ = ["MAX_ERRORS", "Checker", "check", "check_required", "render_value", "summary"]

MAX_ERRORS = 10

# checker(value, path, errors): ``path`` is the member's full camelCase path.
Checker = Callable[[Any, str, list[str]], None]

_CACHE: dict[int, tuple[Shape, Checker | None]] = {}


def lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def summary(errors: list[str]) -> str:
    count = len(errors)
    return messages.CONSTRAINT_SUMMARY.format(count=count, plural="s" if count > 1 else "", entries="; ".join(errors))


def check(shape: Struct, request: dict[str, Any]) -> None:
    """Run phase 2 on a phase-1-coerced request; raises ``ValidationException`` on any failure."""
    check_required(shape, request)
    fn = checker(shape)
    if fn is None:
        return
    errors: list[str] = []
    fn(request, "", errors)
    if errors:
        raise ValidationException(summary(errors))


_REQUIRED: dict[int, tuple[Struct, list[tuple[str, String]]]] = {}


def check_required(shape: Struct, request: dict[str, Any]) -> None:
    """Top-level ``required`` / ``table_name`` members fail alone, before the aggregated list."""
    hit = _REQUIRED.get(id(shape))
    if hit is None:
        specials = [(name, member) for name, member in shape.members if isinstance(member, String) and member.required]
        hit = _REQUIRED[id(shape)] = (shape, specials)
    for name, member in hit[1]:
        value = request.get(name)
        if member.required and value is None:
            raise ValidationException(messages.PARAMETER_REQUIRED.format(name=name))


def checker(shape: Shape) -> Checker | None:
    hit = _CACHE.get(id(shape))
    if hit is not None:
        return hit[1]
    fn = _compile(shape)
    _CACHE[id(shape)] = (shape, fn)
    return fn


# --- value rendering ----------


def render_value(shape: Shape, value: Any) -> str:
    """How DynamoDB prints a failing value inside ``Value … at``: ``null`` or the quoted Java rendering."""
    return "null" if value is None else "'" + _java(shape, value) + "'"


def _java(shape: Shape, value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(shape, Boolean):
        return "true" if value else "false"
    if isinstance(shape, Blob):
        size = len(value) // 4 * 3 - (2 if value.endswith("==") else 1 if value.endswith("=") else 0)
        return f"java.nio.HeapByteBuffer[pos=0 lim={size} cap={size}]"
    if isinstance(shape, List):
        return "[" + ", ".join(_java(shape.member, item) for item in value) + "]"
    if isinstance(shape, Map):
        return "{" + ", ".join(f"{key}={_java(shape.value, item)}" for key, item in value.items()) + "}"
    if isinstance(shape, Struct):
        fields = ", ".join(f"{lower_first(name)}={_java(sub, value.get(name))}" for name, sub in shape.members)
        return f"{shape.name}({fields})"
    if isinstance(shape, AttrValue):
        return f"{MODEL_PACKAGE}AttributeValue@{zlib.crc32(repr(value).encode()):08x}"
    return str(value)


# --- compilation ----------


def _entry(shape: Shape, value: Any, path: str, constraint: str) -> str:
    return messages.CONSTRAINT_ENTRY.format(value=render_value(shape, value), path=path, constraint=constraint)


def _bare_entry(path: str, constraint: str) -> str:
    """DynamoDB's newer form for the length of a collection: no value, member names capitalised
    (``RequestItems.<table>.member.Keys``; the map key between them keeps its spelling)."""
    head, dot, rest = path.partition(".")
    pascal = head[:1].upper() + head[1:]
    if dot:
        middle, _, last = rest.rpartition(".")
        if last != "member":
            last = last[:1].upper() + last[1:]
        pascal += "." + (middle + "." if middle else "") + last
    return messages.CONSTRAINT_ENTRY_BARE.format(path=pascal, constraint=constraint)


def _length(shape: Shape, value: Any) -> int:
    if isinstance(shape, Blob):
        return len(value) // 4 * 3 - (2 if value.endswith("==") else 1 if value.endswith("=") else 0)
    return len(value)


def _table_or_arn_tests() -> list[tuple[Callable[[Any], bool], str]]:
    """A TableName that may be a table ARN: first the ARN's 1..1024 characters; only a name that passes those
    and is no ARN is then held to the table-name pattern and its 3..255 characters (so ``''`` gets one error,
    ``'ab'`` one, ``'a!'`` two)."""
    regex = re.compile(TABLE_NAME_PATTERN)

    def name_only(v: str) -> bool:
        return not v or len(v) > TABLE_ARN_MAX_LENGTH or v.startswith("arn:")

    return [
        (lambda v: len(v) >= 1, messages.CONSTRAINT_MIN_LENGTH.format(limit=1)),
        (lambda v: len(v) <= TABLE_ARN_MAX_LENGTH, messages.CONSTRAINT_MAX_LENGTH.format(limit=TABLE_ARN_MAX_LENGTH)),
        (
            lambda v: name_only(v) or regex.fullmatch(v) is not None,
            messages.CONSTRAINT_PATTERN.format(pattern=TABLE_NAME_PATTERN),
        ),
        (lambda v: name_only(v) or len(v) >= 3, messages.CONSTRAINT_MIN_LENGTH.format(limit=3)),
        (lambda v: name_only(v) or len(v) <= 255, messages.CONSTRAINT_MAX_LENGTH.format(limit=255)),
    ]


def _scalar_tests(shape: Shape) -> list[tuple[Callable[[Any], bool], str]]:
    """(passes(value), constraint text) in DynamoDB's order for one member; value is never None here."""
    if isinstance(shape, String) and shape.table_or_arn:
        return _table_or_arn_tests()
    tests: list[tuple[Callable[[Any], bool], str]] = []
    pattern = getattr(shape, "pattern", None)
    if pattern is not None:
        regex = re.compile(pattern)
        tests.append((lambda v: regex.fullmatch(v) is not None, messages.CONSTRAINT_PATTERN.format(pattern=pattern)))
    min_len = getattr(shape, "min_len", None)
    if min_len is not None:
        tests.append((lambda v: _length(shape, v) >= min_len, messages.CONSTRAINT_MIN_LENGTH.format(limit=min_len)))
    max_len = getattr(shape, "max_len", None)
    if max_len is not None:
        tests.append((lambda v: _length(shape, v) <= max_len, messages.CONSTRAINT_MAX_LENGTH.format(limit=max_len)))
    if isinstance(shape, Integer | Long):
        low, high = shape.min, shape.max
        if low is not None:
            tests.append((lambda v: v >= low, messages.CONSTRAINT_MIN_VALUE.format(limit=low)))
        if high is not None:
            tests.append((lambda v: v <= high, messages.CONSTRAINT_MAX_VALUE.format(limit=high)))
    if isinstance(shape, Enum):
        allowed = frozenset(shape.values)
        tests.append((lambda v: v in allowed, messages.CONSTRAINT_ENUM.format(values=", ".join(shape.values))))
    return tests


def _map_value_tests(shape: Shape) -> list[tuple[Callable[[Any], bool], str]]:
    tests: list[tuple[Callable[[Any], bool], str]] = []
    if isinstance(shape, Map) and shape.value_len is not None:
        low_len, high_len = shape.value_len
        text = messages.CONSTRAINT_MAP_VALUES.format(
            constraints=", ".join(
                (
                    messages.CONSTRAINT_MAX_LENGTH.format(limit=high_len),
                    messages.CONSTRAINT_MIN_LENGTH.format(limit=low_len),
                )
            )
        )
        tests.append((lambda v: all(x is None or low_len <= len(x) <= high_len for x in v.values()), text))
    return tests


def _key_test(keys: String) -> tuple[Callable[[str], bool], str]:
    parts: list[str] = []
    checks: list[Callable[[str], bool]] = []
    if keys.max_len is not None:
        high = keys.max_len
        parts.append(messages.CONSTRAINT_MAX_LENGTH.format(limit=high))
        checks.append(lambda k: len(k) <= high)
    if keys.min_len is not None:
        low = keys.min_len
        parts.append(messages.CONSTRAINT_MIN_LENGTH.format(limit=low))
        checks.append(lambda k: len(k) >= low)
    if keys.pattern is not None:
        regex = re.compile(keys.pattern)
        parts.append(messages.CONSTRAINT_PATTERN.format(pattern=keys.pattern))
        checks.append(lambda k: regex.fullmatch(k) is not None)
    text = messages.CONSTRAINT_MAP_KEYS.format(constraints=", ".join(parts))
    if keys.table_or_arn:  # a table ARN as the key is held only to the ARN's length
        return (
            lambda k: (1 <= len(k) <= TABLE_ARN_MAX_LENGTH) if k.startswith("arn:") else all(fn(k) for fn in checks)
        ), text
    return (lambda k: all(fn(k) for fn in checks)), text


def _children(shape: Shape) -> Checker | None:
    """Checker that descends into a container's members (None when nothing below can fail)."""
    if isinstance(shape, Struct):
        subs = [(name, lower_first(name), checker(sub), sub.not_null) for name, sub in shape.members]
        live = [(name, low, fn, not_null) for name, low, fn, not_null in subs if fn is not None]
        if not live:
            return None

        def check_struct(value: Any, path: str, errors: list[str]) -> None:
            prefix = path + "." if path else ""
            for name, low, fn, not_null in live:
                member = value.get(name)
                if member is not None or not_null:  # an absent optional member has nothing to check
                    fn(member, prefix + low, errors)

        return check_struct
    if isinstance(shape, List):
        list_member = checker(shape.member)
        if list_member is None:
            return None

        def check_list(value: Any, path: str, errors: list[str]) -> None:
            for index, item in enumerate(value, 1):
                list_member(item, f"{path}.{index}.member", errors)

        return check_list
    if isinstance(shape, Map):
        map_member = checker(shape.value)
        if map_member is None:
            return None

        def check_map(value: Any, path: str, errors: list[str]) -> None:
            for key in list(value)[::-1]:
                map_member(value[key], f"{path}.{key}.member", errors)

        return check_map
    return None


def _compile(shape: Shape) -> Checker | None:
    not_null = shape.not_null
    bare = isinstance(shape, List | Map) and shape.bare
    tests = _scalar_tests(shape)
    key_test = _key_test(shape.keys) if isinstance(shape, Map) and shape.keys is not None else None
    value_tests = _map_value_tests(shape)
    children = _children(shape)
    if not not_null and not tests and key_test is None and not value_tests and children is None:
        return None

    def check_member(value: Any, path: str, errors: list[str]) -> None:
        if value is None:
            if not_null and len(errors) < MAX_ERRORS:
                errors.append(_entry(shape, None, path, messages.CONSTRAINT_NOT_NULL))
            return
        for passes, text in tests:
            if not passes(value) and len(errors) < MAX_ERRORS:
                errors.append(_bare_entry(path, text) if bare else _entry(shape, value, path, text))
        if key_test is not None:
            key_ok, key_text = key_test
            for key in value:
                if not key_ok(key) and len(errors) < MAX_ERRORS:
                    errors.append(_entry(shape, value, path, key_text))
        for passes, text in value_tests:
            if not passes(value) and len(errors) < MAX_ERRORS:
                errors.append(_entry(shape, value, path, text))
        if children is not None and len(errors) < MAX_ERRORS:
            children(value, path, errors)

    return check_member
