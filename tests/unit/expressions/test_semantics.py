"""Static passes and their order (parse + check_static), plus the resolved passes via ExpressionContext."""

from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext
from dynastore.expressions.parser import parse
from dynastore.expressions.semantics import check_paths, check_static, path_str
from dynastore.expressions.tokens import ExpressionError

VALUES: dict[str, Any] = {
    ":s": {"S": "a"},
    ":n": {"N": "1"},
    ":n5": {"N": "5"},
    ":l": {"L": []},
    ":m": {"M": {}},
    ":ss": {"SS": ["a"]},
    ":b": {"B": "YQ=="},
    ":bool": {"BOOL": True},
    ":null": {"NULL": True},
}


def static_error(kind: str, text: str) -> str:
    with pytest.raises(ExpressionError) as info:
        check_static(kind, parse(kind, text))
    return info.value.detail


def resolved_error(kind: str, text: str, names: dict[str, str] | None = None) -> str:
    ctx = ExpressionContext(names, VALUES)
    with pytest.raises(ValidationException) as info:
        if kind == "UpdateExpression":
            ctx.update(text)
        elif kind == "ProjectionExpression":
            ctx.projection(text)
        else:
            ctx.condition(kind, text)
    assert info.value.detail is not None
    return info.value.detail


def test_static_pass_order_parens_before_unknown_function_before_misuse_before_reserved() -> None:
    text = "((foo(a) = attribute_exists(b))) AND status = :s"
    assert static_error("ConditionExpression", text) == "The expression has redundant parentheses;"
    text = "foo(a) = attribute_exists(b) AND status = :s"
    assert static_error("ConditionExpression", text) == "Invalid function name; function: foo"
    text = "size(a) = attribute_exists(b) AND status = :s"
    assert static_error("ConditionExpression", text) == (
        "The function is not allowed to be used this way in an expression; function: attribute_exists"
    )
    assert static_error("ConditionExpression", "a = :s AND status = :s") == (
        "Attribute name is a reserved keyword; reserved keyword: status"
    )


def test_size_alone_is_a_misused_function() -> None:
    assert static_error("ConditionExpression", "a = :s OR size(a)") == (
        "The function is not allowed to be used this way in an expression; function: size"
    )


def test_update_static_order_reserved_unknown_function_section() -> None:
    assert static_error("UpdateExpression", " set #c = :c set abOrt = true ") == (
        "Attribute name is a reserved keyword; reserved keyword: abOrt"
    )
    assert static_error("UpdateExpression", "set a = if_not_exist(:c) set c = d") == (
        "Invalid function name; function: if_not_exist"
    )
    assert static_error("UpdateExpression", "remove #d set a = b remove e") == (
        'The "REMOVE" section can only be used once in an update expression;'
    )
    assert static_error("UpdateExpression", "SET a = size(b)") == (
        "The function is not allowed in an update expression; function: size"
    )
    assert static_error("ConditionExpression", "if_not_exists(a, :b) = :b") == (
        "The function is not allowed in a condition expression; function: if_not_exists"
    )
    assert static_error("UpdateExpression", "SET a = list_append(list_append(:a, :b), :c)") == (
        "The function is not allowed to be used this way in an expression; function: list_append"
    )
    check_static("UpdateExpression", parse("UpdateExpression", "SET a = list_append(if_not_exists(a, :a), :b)"))


def test_operand_count_comes_after_undefined_placeholders() -> None:
    assert resolved_error("ConditionExpression", "begins_with(a) AND b = :zz") == (
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; "
        "attribute value: :zz"
    )
    assert resolved_error("ConditionExpression", "begins_with(a)") == (
        "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
        "operator or function: begins_with, number of operands: 1"
    )


def test_condition_operand_types() -> None:
    assert resolved_error("FilterExpression", "begins_with(a, :n)") == (
        "Invalid FilterExpression: Incorrect operand type for operator or function; "
        "operator or function: begins_with, operand type: N"
    )
    assert resolved_error("ConditionExpression", "attribute_type(a, :n)") == (
        "Invalid ConditionExpression: Incorrect operand type for operator or function; "
        "operator or function: attribute_type, operand type: N"
    )
    assert resolved_error("ConditionExpression", "attribute_type(a, :s)") == (
        "Invalid ConditionExpression: Invalid attribute type name found; type: a, "
        "valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"
    )
    assert resolved_error("ConditionExpression", "size(:n) > :n") == (
        "Invalid ConditionExpression: Incorrect operand type for operator or function; "
        "operator or function: size, operand type: N"
    )
    assert resolved_error("ConditionExpression", "attribute_exists(:s)") == (
        "Invalid ConditionExpression: Operator or function requires a document path; "
        "operator or function: attribute_exists"
    )
    assert resolved_error("ConditionExpression", "a < :m") == (
        "Invalid ConditionExpression: Incorrect operand type for operator or function; "
        "operator or function: <, operand type: M"
    )


def test_between_bounds() -> None:
    assert resolved_error("ConditionExpression", "a BETWEEN :n5 AND :n") == (
        "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal "
        "to lower bound; lower bound operand: AttributeValue: {N:5}, upper bound operand: "
        "AttributeValue: {N:1}"
    )
    assert resolved_error("ConditionExpression", "a BETWEEN :n AND :s") == (
        "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and "
        "upper bounds; "
        "lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:a}"
    )


def test_in_allows_at_most_100_operands() -> None:
    ok = "a IN (" + ", ".join([":n"] * 100) + ")"
    ExpressionContext(None, VALUES).condition("ConditionExpression", ok)
    assert resolved_error("ConditionExpression", "a IN (" + ", ".join([":n"] * 101) + ")") == (
        "Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 101"
    )


def test_distinct_operands_use_resolved_names() -> None:
    assert resolved_error("ConditionExpression", "#x = a", {"#x": "a"}) == (
        "Invalid ConditionExpression: The first operand must be distinct from the remaining "
        "operands for this "
        "operator or function; operator: =, first operand: [a]"
    )
    assert resolved_error("ConditionExpression", "contains(a.b, a.b)") == (
        "Invalid ConditionExpression: The first operand must be distinct from the remaining "
        "operands for this "
        "operator or function; operator: contains, first operand: [a, b]"
    )


def test_update_operand_types_and_functions() -> None:
    assert resolved_error("UpdateExpression", "ADD a :s") == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING"
    )
    assert resolved_error("UpdateExpression", "DELETE a :n") == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, "
        "operand type: NUMBER"
    )
    assert resolved_error("UpdateExpression", "SET a = list_append(:s, a)") == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; "
        "operator or function: list_append, operand type: S"
    )
    assert resolved_error("UpdateExpression", "SET a = a + :ss") == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; "
        "operator or function: +, operand type: SS"
    )
    assert resolved_error("UpdateExpression", "SET a = if_not_exists(:s, c)") == (
        "Invalid UpdateExpression: Operator or function requires a document path; operator or function: if_not_exists"
    )
    assert resolved_error("UpdateExpression", "SET a = if_not_exists(c)") == (
        "Invalid UpdateExpression: Incorrect number of operands for operator or function; "
        "operator or function: if_not_exists, number of operands: 1"
    )


def test_update_names_before_values() -> None:
    assert resolved_error("UpdateExpression", "SET a = :zz, #q = :s") == (
        "Invalid UpdateExpression: An expression attribute name used in the document path is not defined; "
        "attribute name: #q"
    )


def test_path_overlap_before_conflict() -> None:
    names = {"#c": "c", "#d": "[3]"}
    assert resolved_error("UpdateExpression", "set d[1] = a, d.b = a, c[1].a = a, #c = if_not_exists(a)", names) == (
        "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of "
        "these paths; path one: [c, [1], a], path two: [c]"
    )
    assert resolved_error("UpdateExpression", "remove a.#c set a[1] = #d", {"#c": "c", "#d": "d"}) == (
        "Invalid UpdateExpression: Two document paths conflict with each other; must remove or "
        "rewrite one of "
        "these paths; path one: [a, c], path two: [a, [1]]"
    )
    assert resolved_error("ProjectionExpression", "a, a.b") == (
        "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or "
        "rewrite one "
        "of these paths; path one: [a], path two: [a, b]"
    )


def test_path_helpers() -> None:
    assert path_str(("a", 1, "b")) == "[a, [1], b]"
    check_paths([("a", "b"), ("a", "c"), ("b",)])
