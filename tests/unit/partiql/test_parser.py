"""The PartiQL tokenizer and parser: the trees statements become, and DynamoDB's texts for those it refuses."""

from __future__ import annotations

import pytest

from dynastore.partiql import PartiQLSyntaxError, StatementCache, ast, parse
from dynastore.partiql.tokens import tokenize

NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "


def refusal(text: str) -> str:
    with pytest.raises(PartiQLSyntaxError) as info:
        parse(text)
    return info.value.message


class TestTokens:
    def test_kinds_and_positions(self) -> None:
        tokens = tokenize("SELECT \"a b\", 'it''s' FROM t -- note\nWHERE x = ? /* c */ AND y <> <<1>>")
        assert [(t.kind, t.text) for t in tokens] == [
            ("ident", "SELECT"),
            ("qident", "a b"),
            ("op", ","),
            ("str", "it's"),
            ("ident", "FROM"),
            ("ident", "t"),
            ("ident", "WHERE"),
            ("ident", "x"),
            ("op", "="),
            ("param", "?"),
            ("ident", "AND"),
            ("ident", "y"),
            ("op", "<>"),
            ("op", "<<"),
            ("num", "1"),
            ("op", ">>"),
            ("eof", ""),
        ]
        assert tokens[1].start == 7 and tokens[1].length == 5

    @pytest.mark.parametrize("text", ["SELECT * FROM t WHERE pk = 1 # note", "SELECT * FROM t /* open", "'open"])
    def test_unlexable_statement_has_nothing_after_the_colon(self, text: str) -> None:
        assert refusal(text) == NOT_WELL_FORMED


class TestStatements:
    def test_select_with_projection_index_where_and_order(self) -> None:
        parsed = parse('select a.b[2], "c" from "T"."I" where pk = ? and sk between 1 and 5 order by sk desc')
        statement = parsed.statement
        assert isinstance(statement, ast.Select)
        assert statement.projection is not None
        assert [p.elements for p in statement.projection] == [("a", "b", 2), ("c",)]
        assert (statement.table, statement.index) == ("T", "I")
        assert statement.where == ast.And(
            ast.Compare("=", ast.Path(("pk",), "1:39:2"), ast.Param(0)),
            ast.Between(ast.Path(("sk",), "1:50:2"), ast.Literal(("N", "1")), ast.Literal(("N", "5"))),
        )
        assert statement.order_by == (ast.OrderTerm(ast.Path(("sk",), "1:78:2"), True),)
        assert parsed.param_count == 1

    def test_insert_values_of_every_kind(self) -> None:
        statement = parse("INSERT INTO t VALUE {'a': 'x', 'n': -1.5, 'b': TRUE, 'z': NULL, 'l': [1], 's': <<'p'>>}")
        assert statement.statement == ast.Insert(
            "t",
            ast.MapValue(
                (
                    ("a", ast.Literal(("S", "x"))),
                    ("n", ast.Literal(("N", "-1.5"))),
                    ("b", ast.Literal(("BOOL", True))),
                    ("z", ast.Literal(("NULL", True))),
                    ("l", ast.ListValue((ast.Literal(("N", "1")),))),
                    ("s", ast.SetValue((ast.Literal(("S", "p")),))),
                )
            ),
        )

    def test_update_with_set_remove_and_returning(self) -> None:
        statement = parse(
            "UPDATE t SET a = a + 1, b = list_append(b, [2]) REMOVE c WHERE pk = 'k' RETURNING MODIFIED NEW *"
        )
        assert isinstance(statement.statement, ast.Update)
        update = statement.statement
        assert [type(action).__name__ for action in update.actions] == ["Set", "Set", "Remove"]
        assert isinstance(update.actions[0], ast.Set) and isinstance(update.actions[0].value, ast.Arith)
        assert update.returning == "MODIFIED_NEW"

    def test_delete_and_exists(self) -> None:
        assert isinstance(parse("DELETE FROM t WHERE pk = 1 RETURNING ALL OLD *;").statement, ast.Delete)
        exists = parse("EXISTS(SELECT * FROM t WHERE pk = 1 AND a IS NOT MISSING)").statement
        assert isinstance(exists, ast.Exists)
        assert exists.select.where == ast.And(
            ast.Compare("=", ast.Path(("pk",), "1:30:2"), ast.Literal(("N", "1"))),
            ast.IsCheck(ast.Path(("a",), "1:41:1"), "MISSING", True),
        )

    def test_precedence_of_or_and_not(self) -> None:
        where = parse("SELECT * FROM t WHERE NOT a = 1 OR b = 2 AND c IN [3, 4]").statement
        assert isinstance(where, ast.Select)
        assert isinstance(where.where, ast.Or)
        assert isinstance(where.where.left, ast.Not)
        assert isinstance(where.where.right, ast.And)
        assert isinstance(where.where.right.right, ast.In)


class TestRefusals:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("SELECT * FROM t WHERE pk = 1 foo", NOT_WELL_FORMED + "Unexpected token after expression"),
            ("SELECT * FROM t WHERE pk = 1)", NOT_WELL_FORMED + "Unexpected token after expression"),
            ("DELETE FROM t WHERE pk = 1 ORDER BY pk", NOT_WELL_FORMED + "Unexpected token after expression"),
            ("SELECT * FROM t WHERE", NOT_WELL_FORMED + "Unexpected term"),
            ("SELECT * FROM t WHERE NOT", NOT_WELL_FORMED + "Unexpected term"),
            ("SELECT * FROM t WHERE (", NOT_WELL_FORMED + "Unexpected term"),
            ("SELECT * FROM", NOT_WELL_FORMED + "Unexpected term"),
            (
                "SELECT * FROM t WHERE pk = 'a' AND",
                NOT_WELL_FORMED + "Missing right-hand side expression of infix operator",
            ),
            (
                "SELECT * FROM t WHERE pk = 'a' OR",
                NOT_WELL_FORMED + "Missing right-hand side expression of infix operator",
            ),
            ("SELECT * FROM t WHERE ORDER BY pk", NOT_WELL_FORMED + "Unexpected keyword"),
            ("SELECT * FROM t WHERE IS NULL", NOT_WELL_FORMED + "Unexpected operator"),
            ("SELECT * FROM t WHERE pk = LIKE", NOT_WELL_FORMED + "Unexpected operator"),
            ("SELECT * FROM t WHERE x IS FOO", NOT_WELL_FORMED + "Expected type name"),
            ("DELETE FROM", NOT_WELL_FORMED + "Expected identifier for simple path"),
            ("DELETE FROM WHERE pk = 'a'", NOT_WELL_FORMED + "Expected identifier for simple path"),
            ("SLECT * FROM t", NOT_WELL_FORMED + "Expected data manipulation"),
            ("SELECT * FROM t x WHERE pk = 'x'", "Aliasing is not supported"),
            ("SELECT * FROM t AS x WHERE pk = 'x'", "Aliasing is not supported"),
            ("UPDATE t x SET a = 3 WHERE pk = 'x'", "Aliasing is not supported"),
            ("INSERT INTO t x VALUE {'pk': 'x'}", NOT_WELL_FORMED + "Unexpected token after expression"),
            ('SELECT * FROM "t"."i"."j"', "A path may contain at most 2 components in the FROM clause"),
            ('SELECT * FROM "t".""', "Path component cannot be an empty string"),
            ("SELECT * FROM t WHERE EXISTS(a)", "Unrecognized function: exists at 1:23:6"),
            ("SELECT attribute_exists(a) FROM t", "Unexpected path component at 1:8:16"),
            (
                "SELECT * FROM t WHERE attribute_exists('a')",
                "Operator or function requires a document path; operator or function: attribute_exists",
            ),
            (
                "SELECT * FROM t WHERE attribute_exists(a, b)",
                "Incorrect number of operands for operator or function; operator or function: attribute_exists, "
                "number of operands: 2",
            ),
            ("SELECT * FROM t WHERE a = <<?>>", "Unsupported data type in Bag"),
            ("x IS INT4", NOT_WELL_FORMED + "Expected data manipulation"),
        ],
    )
    def test_message(self, text: str, message: str) -> None:
        assert refusal(text) == message


class TestCache:
    def test_parses_once_and_keeps_only_successes(self) -> None:
        cache = StatementCache(maxsize=2)
        first = cache.get("SELECT * FROM t")
        assert cache.get("SELECT * FROM t") is first
        assert (cache.hits, cache.misses) == (1, 1)
        with pytest.raises(PartiQLSyntaxError):
            cache.get("SELECT")
        assert len(cache) == 1
        cache.get("SELECT a FROM t")
        cache.get("SELECT b FROM t")
        assert len(cache) == 2
