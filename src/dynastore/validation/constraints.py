"""Phase 2: check a request's constraints; every failure is a ``Violation`` of one ``ValidationException``.

The failures are collected in DynamoDB's older order (the order of api/schemas.py's members, map keys in reverse
insertion order) with what both forms of the message need: the member's path in the API's own spelling
(``RequestItems.<table>.member``) and in lower camel case, the value as the older form echoes it (Java's
rendering: ``null`` bare, anything else quoted; lists ``[a, b]``, maps ``{k=v}``) and the member's place in the
service model's order. ``errors.validation_message`` words them by the request's region: the first failure in
the model's order (new form) or up to 10 aggregated (older form). List members are ``<name>.<1-based index>.member``,
map members ``<name>.<key>.member``.

Each shape compiles once into a checker, or to ``None`` when nothing in its subtree can fail, so an Item map is
never walked here. A member's path is a linked tuple made as the walk descends (as cheap as the string it
replaces); the texts are built only for a failure.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from typing import Any, Final

from dynastore import messages
from dynastore.errors import ValidationException, Violation
from dynastore.limits import TABLE_ARN_MAX_LENGTH
from dynastore.util.kept_matches import KeptMatches
from dynastore.validation.model_order import MODEL_ORDER
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

__all__ = ["MAX_VIOLATIONS", "Checker", "render_value", "request_checker"]

# Failures collected for one request: the older form lists 10; the new form reports the first in the model's
# order, which may come later in the older order (a bound keeps a huge malformed request cheap).
MAX_VIOLATIONS: Final = 64

# A member's path: None at the request, else (parent, segment, is_struct_member, rank).
Path = tuple[Any, str, bool, int] | None
# checker(value, path, violations)
Checker = Callable[[Any, Path, list[Violation]], None]

_CACHE: dict[int, tuple[Shape, Checker | None]] = {}


def lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def request_checker(shape: Struct) -> Callable[[dict[str, Any]], None]:
    """Phase 2 for requests of ``shape``, already coerced by phase 1: the returned check raises
    ``ValidationException`` on any failure. Top-level ``required`` / ``table_name`` members fail alone, before the
    aggregated list. Made once per shape (an operation binds it at start-up)."""
    required = [name for name, member in shape.members if isinstance(member, String) and member.required]
    fn = checker(shape)

    def check_request(request: dict[str, Any]) -> None:
        for name in required:
            if request.get(name) is None:
                raise ValidationException(messages.PARAMETER_REQUIRED.format(name=name))
        if fn is None:
            return
        violations: list[Violation] = []
        fn(request, None, violations)
        if violations:
            raise ValidationException(violations=tuple(violations))

    return check_request


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


def _violation(shape: Shape, value: Any, path: Path, constraint: str, echoed: bool) -> Violation:
    """The failure of ``constraint`` at ``path`` (built only when a check fails)."""
    segments: list[tuple[str, bool, int]] = []
    node = path
    while node is not None:
        segments.append((node[1], node[2], node[3]))
        node = node[0]
    segments.reverse()
    pascal = ".".join(text for text, _, _ in segments)
    camel = ".".join(lower_first(text) if member else text for text, member, _ in segments)
    echo = render_value(shape, value) if echoed else None
    return Violation(pascal, camel, constraint, echo, tuple(rank for _, _, rank in segments))


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


def _table_name_passes(shape: Shape) -> Callable[[Any], bool] | None:
    """For a TableName that may be a table ARN: one test that a plain table name of 3..255 characters matching the
    pattern passes, and with it every one of ``_table_or_arn_tests`` (so a request naming its table costs one test,
    not five). A value it does not pass, an ARN among them, is put to the five tests."""
    if not (isinstance(shape, String) and shape.table_or_arn):
        return None
    names = KeptMatches(TABLE_NAME_PATTERN)  # a server names few tables, each in request after request
    return lambda v: 3 <= len(v) <= 255 and names.matches(v)


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


# A map's check of its values' lengths: (value, path, violations) -> None.
ValueCheck = Callable[[Any, Path, list[Violation]], None]


def _map_value_check(shape: Shape) -> ValueCheck | None:
    """The lengths of a map's values (BatchWriteItem's 1..25 requests per table). The older form reports the map
    with both bounds (``Map value must satisfy constraint: [...]``); the new form the first failing value
    (``RequestItems.<table>.member``) with the bound it breaks."""
    if not isinstance(shape, Map) or shape.value_len is None:
        return None
    low_len, high_len = shape.value_len
    too_long = messages.CONSTRAINT_MAX_LENGTH.format(limit=high_len)
    too_short = messages.CONSTRAINT_MIN_LENGTH.format(limit=low_len)
    whole = messages.CONSTRAINT_MAP_VALUES.format(constraints=f"{too_long}, {too_short}")

    def check_values(value: Any, path: Path, errors: list[Violation]) -> None:
        for rank, (key, item) in enumerate(value.items()):
            if item is not None and not low_len <= len(item) <= high_len:
                broken = too_long if len(item) > high_len else too_short
                failure = _violation(shape, value, (path, f"{key}.member", False, rank), broken, True)
                failure.old_path = _violation(shape, value, path, whole, True).old_path
                failure.old_constraint = whole
                errors.append(failure)
                return

    return check_values


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
        order = MODEL_ORDER.get(shape.name, ())
        subs = [(name, _model_rank(order, name, index), checker(sub), sub.not_null)
                for index, (name, sub) in enumerate(shape.members)]  # fmt: skip
        live = [(name, rank, fn, not_null) for name, rank, fn, not_null in subs if fn is not None]
        if not live:
            return None

        def check_struct(value: Any, path: Path, errors: list[Violation]) -> None:
            # Phase 1 made every structure a dict. Typed so, its ``get`` compiles to a C call instead of a method
            # looked up by name (a few hundred instructions each, several a request).
            members: dict[str, Any] = value
            for name, rank, fn, not_null in live:
                member = members.get(name)
                if member is not None or not_null:  # an absent optional member has nothing to check
                    fn(member, (path, name, True, rank), errors)

        return check_struct
    if isinstance(shape, List):
        list_member = checker(shape.member)
        if list_member is None:
            return None

        def check_list(value: Any, path: Path, errors: list[Violation]) -> None:
            for index, item in enumerate(value, 1):
                list_member(item, (path, f"{index}.member", False, index), errors)

        return check_list
    if isinstance(shape, Map):
        map_member = checker(shape.value)
        if map_member is None:
            return None

        def check_map(value: Any, path: Path, errors: list[Violation]) -> None:
            keys = list(value)
            for rank in range(len(keys) - 1, -1, -1):  # the older form lists the last key first
                key = keys[rank]
                map_member(value[key], (path, f"{key}.member", False, rank), errors)

        return check_map
    return None


def _compile(shape: Shape) -> Checker | None:
    not_null = shape.not_null
    bare = isinstance(shape, List | Map) and shape.bare
    tests = _scalar_tests(shape)
    passes_all = _table_name_passes(shape)
    key_test = _key_test(shape.keys) if isinstance(shape, Map) and shape.keys is not None else None
    value_check = _map_value_check(shape)
    children = _children(shape)
    if not not_null and not tests and key_test is None and value_check is None and children is None:
        return None

    def check_member(value: Any, path: Path, errors: list[Violation]) -> None:
        if value is None:
            if not_null and len(errors) < MAX_VIOLATIONS:
                errors.append(_violation(shape, None, path, messages.CONSTRAINT_NOT_NULL, True))
            return
        if passes_all is None or not passes_all(value):
            for passes, text in tests:
                if not passes(value) and len(errors) < MAX_VIOLATIONS:
                    errors.append(_violation(shape, value, path, text, not bare))
        if key_test is not None:
            key_ok, key_text = key_test
            for key in value:
                if not key_ok(key) and len(errors) < MAX_VIOLATIONS:
                    errors.append(_violation(shape, value, path, key_text, True))
        if value_check is not None and len(errors) < MAX_VIOLATIONS:
            value_check(value, path, errors)
        if children is not None and len(errors) < MAX_VIOLATIONS:
            children(value, path, errors)

    return check_member


def _model_rank(order: tuple[str, ...], name: str, index: int) -> int:
    """A member's place in the service model's order (members the model does not list come after, in ours)."""
    try:
        return order.index(name)
    except ValueError:
        return len(order) + index
