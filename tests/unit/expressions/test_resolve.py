"""ExpressionContext: placeholder keys, resolution, unused names/values, error prefixes."""

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext
from dynastore.expressions.ast import Comparison, PathOperand, ValueOperand


def message(fn: object, *args: object) -> str:
    with pytest.raises(ValidationException) as info:
        fn(*args)  # type: ignore[operator]
    assert info.value.detail is not None
    return info.value.detail


def test_invalid_placeholder_keys() -> None:
    assert message(ExpressionContext, {"a": "a"}, None) == (
        'ExpressionAttributeNames contains invalid key: Syntax error; key: "a"'
    )
    assert message(ExpressionContext, None, {":ok": {"S": "x"}, "v": {"S": "x"}}) == (
        'ExpressionAttributeValues contains invalid key: Syntax error; key: "v"'
    )


def test_resolution_substitutes_names_and_values() -> None:
    ctx = ExpressionContext({"#a": "status", "#d": "a.b"}, {":v": {"S": "x"}})
    condition = ctx.condition("ConditionExpression", "#a.#d = :v")
    assert condition.root == Comparison("=", PathOperand(("status", "a.b")), ValueOperand({"S": "x"}))


def test_undefined_placeholders_in_source_order_for_conditions() -> None:
    ctx = ExpressionContext({"#a": "a"}, {":v": {"S": "x"}})
    assert message(ctx.condition, "FilterExpression", ":w = #b") == (
        "Invalid FilterExpression: An expression attribute value used in expression is not defined; attribute value: :w"
    )
    assert message(ctx.condition, "ConditionExpression", "#b = :w") == (
        "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; "
        "attribute name: #b"
    )


def test_syntax_errors_get_the_context_prefix() -> None:
    ctx = ExpressionContext(None, None)
    assert message(ctx.update, "SET a = 5") == 'Invalid UpdateExpression: Syntax error; token: "5", near: "= 5"'
    assert message(ctx.projection, "") == "Invalid ProjectionExpression: The expression can not be empty;"
    assert message(ctx.key_condition, "a >", ("a", "S"), None) == (
        'Invalid KeyConditionExpression: Syntax error; token: "<EOF>", near: ">"'
    )


def test_unused_names_are_reported_before_unused_values() -> None:
    ctx = ExpressionContext({"#a": "a", "#b": "b", "#c": "c"}, {":a": {"S": "x"}, ":c": {"S": "y"}})
    ctx.condition("ConditionExpression", "#a = :a")
    assert (
        message(ctx.check_unused) == "Value provided in ExpressionAttributeNames unused in expressions: keys: {#b, #c}"
    )
    ctx.update("SET #b = :a, #c = :a")
    assert message(ctx.check_unused) == "Value provided in ExpressionAttributeValues unused in expressions: keys: {:c}"
    ctx.projection("#a")
    ctx.condition("FilterExpression", "attribute_exists(#a) OR #c = :c")
    ctx.check_unused()
