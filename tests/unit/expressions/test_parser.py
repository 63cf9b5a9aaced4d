import pytest

from dynastore.expressions import ast
from dynastore.expressions.parser import parse_condition, parse_projection, parse_update
from dynastore.expressions.tokens import ExpressionError, ExprSyntaxError


def syntax(fn: object, text: str) -> tuple[str, str]:
    with pytest.raises(ExprSyntaxError) as info:
        fn(text)  # type: ignore[operator]
    return info.value.token, info.value.near


def P(*names: str) -> ast.Path:
    return ast.Path(tuple(ast.Attr(n) for n in names))


def test_precedence_or_and_not() -> None:
    root = parse_condition("NOT a = :x AND b = :y OR c = :z").root
    assert isinstance(root, ast.Or)
    assert isinstance(root.left, ast.And)
    assert isinstance(root.left.left, ast.Not)


def test_parenthesised_operand_and_condition() -> None:
    assert parse_condition("(a) = b").root == ast.Compare("=", P("a"), P("b"))
    parsed = parse_condition("(a = b)")
    assert parsed.root == ast.Compare("=", P("a"), P("b")) and not parsed.redundant_parens


def test_double_parens_are_flagged_redundant() -> None:
    assert parse_condition("((a = b))").redundant_parens
    assert parse_condition("((a)) = b").redundant_parens
    assert not parse_condition("(a = b) AND (c = d)").redundant_parens


def test_between_in_and_functions() -> None:
    root = parse_condition("a BETWEEN :l AND :h").root
    assert root == ast.Between(P("a"), ast.ValueRef(":l"), ast.ValueRef(":h"))
    root = parse_condition("a in (:x, :y)").root
    assert root == ast.In(P("a"), (ast.ValueRef(":x"), ast.ValueRef(":y")))
    root = parse_condition("size(a.b[2]) > :n").root
    assert root == ast.Compare(
        ">", ast.Call("size", (ast.Path((ast.Attr("a"), ast.Attr("b"), ast.Index(2))),)), ast.ValueRef(":n")
    )


def test_keywords_are_case_insensitive() -> None:
    assert isinstance(parse_condition("a = :x and not b = :y").root, ast.And)
    update = parse_update("set a = :x remove b").root
    assert isinstance(update, ast.UpdateExpr) and update.sections == ("SET", "REMOVE")


def test_syntax_error_near_rules() -> None:
    assert syntax(parse_update, "SET MyStr[ 3 ") == ("<EOF>", "3 ")
    assert syntax(parse_update, "SET a [2 1]. b = 5") == ("1", "2 1]")
    assert syntax(parse_update, "  RESET NonExistent value") == ("RESET", "  RESET NonExistent")
    assert syntax(parse_update, "SET a = 5") == ("5", "= 5")
    assert syntax(parse_condition, "a") == ("<EOF>", "a")
    assert syntax(parse_condition, "a AND b = c") == ("AND", "a AND b")
    assert syntax(parse_condition, "a = b / c") == ("/", "b / c")


def test_update_grammar_rejects_chained_arithmetic_and_grouped_paths() -> None:
    assert syntax(parse_update, "set a = b + c + d") == ("+", "c + d")
    assert syntax(parse_update, "set a = (b.c).d + e")[0] == "."


def test_update_value_parentheses() -> None:
    root = parse_update("set a = (b) + c").root
    assert isinstance(root, ast.UpdateExpr)
    assert root.actions[0] == ast.SetAction(P("a"), ast.Arith("+", P("b"), P("c")))
    root = parse_update("set a = (b + c)").root
    assert isinstance(root, ast.UpdateExpr)
    assert root.actions[0] == ast.SetAction(P("a"), ast.Arith("+", P("b"), P("c")))


def test_update_actions() -> None:
    root = parse_update("SET a = :v REMOVE b[1], c ADD d :n DELETE e :s").root
    assert isinstance(root, ast.UpdateExpr)
    assert [type(a).__name__ for a in root.actions] == [
        "SetAction",
        "RemoveAction",
        "RemoveAction",
        "AddAction",
        "DeleteAction",
    ]


def test_projection_paths() -> None:
    root = parse_projection("a, #b.c[0]").root
    assert root == ast.ProjectionExpr((P("a"), ast.Path((ast.NameRef("#b"), ast.Attr("c"), ast.Index(0)))))


def test_empty_and_oversized_expressions() -> None:
    with pytest.raises(ExpressionError) as info:
        parse_condition("")
    assert info.value.detail == "The expression can not be empty;"
    with pytest.raises(ExpressionError) as info:
        parse_condition("a = :v AND " * 400 + "a = :v")
    assert info.value.detail == "Expression size has exceeded the maximum allowed size; expression size: 4406"


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    with pytest.raises(ExpressionError) as info:
        parse_condition("(" * 2000 + "a = b" + ")" * 2000)
    assert info.value.detail == "The expression has redundant parentheses;"
    with pytest.raises(ExpressionError) as info:
        parse_condition("NOT " * 700 + "a = b")
    assert info.value.detail == "The expression contains too many operators; operator count: 701"
    with pytest.raises(ExpressionError) as info:
        parse_condition("NOT (" * 400 + "a = b" + ")" * 400)
    assert info.value.detail == "The expression contains too many operators; operator count: 401"
    with pytest.raises(ExpressionError) as info:
        parse_condition("a = b AND (" * 200 + "a = b" + ")" * 200)
    assert info.value.detail == "The expression contains too many operators; operator count: 401"


def test_nesting_as_deep_as_300_operators_allow() -> None:
    # NOT and its parenthesis: two levels per operator, the deepest a valid expression nests.
    parsed = parse_condition("NOT (" * 299 + "a = b" + ")" * 299)
    depth = 0
    node = parsed.root
    while isinstance(node, ast.Not):
        node, depth = node.operand, depth + 1
    assert depth == 299
    parse_condition("(" * 149 + "a = b" + " AND a = b)" * 149)
    parse_update("SET a = " + "if_not_exists(a, " * 200 + ":v" + ")" * 200)
    parse_condition("contains(a, " * 250 + "b" + ")" * 250)


def test_path_depth_and_operator_limits() -> None:
    with pytest.raises(ExpressionError) as info:
        parse_projection(".".join(["a"] * 33))
    assert info.value.detail == "The document path has too many nesting levels; nesting levels: 33"
    with pytest.raises(ExpressionError) as info:
        parse_condition(" AND ".join(["a = b"] * 151))
    assert info.value.detail == "The expression contains too many operators; operator count: 301"
