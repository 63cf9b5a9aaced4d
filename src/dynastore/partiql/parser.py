"""Recursive-descent parser of DynamoDB's PartiQL dialect: statement text -> ``partiql.ast`` tree.

Grammar (keywords in any case; names bare or double-quoted)::

    statement := (select | insert | update | delete | EXISTS '(' select ')') [';']
    select    := SELECT ('*' | path {',' path}) FROM name ['.' name] [WHERE cond]
                 [ORDER BY path [ASC|DESC] {',' path [ASC|DESC]}]
    insert    := INSERT INTO name VALUE value
    update    := UPDATE name (SET path '=' operand {',' path '=' operand} | REMOVE path {',' path})+
                 WHERE cond [RETURNING (ALL|MODIFIED) (OLD|NEW) '*']
    delete    := DELETE FROM name WHERE cond [RETURNING ALL OLD '*']
    cond      := disjunction of conjunctions of [NOT] predicates, parentheses, function conditions
    predicate := operand (cmp operand | [NOT] BETWEEN operand AND operand | [NOT] IN list | IS [NOT] (MISSING|NULL))

The error texts follow DynamoDB's parser (docs/partiql.md lists them): a token where a term should start is an
"Unexpected term" (nothing), "Unexpected keyword" or "Unexpected operator"; tokens after a complete statement are
"Unexpected token after expression".
"""

from __future__ import annotations

from typing import Final

from dynastore import messages
from dynastore.partiql import ast
from dynastore.partiql.tokens import PartiQLSyntaxError, Token, malformed, tokenize
from dynastore.partiql.words import (
    COMPARISONS,
    CONDITION_FUNCTIONS,
    KEYWORDS,
    OPERAND_FUNCTIONS,
    OPERATOR_WORDS,
    OTHER_TYPE_NAMES,
    TYPE_NAMES,
    UPDATE_FUNCTIONS,
)

__all__ = ["ParsedStatement", "parse"]


class ParsedStatement:
    """A statement's tree and the number of ``?`` it binds."""

    __slots__ = ("statement", "param_count")

    def __init__(self, statement: ast.Statement, param_count: int) -> None:
        self.statement: Final = statement
        self.param_count: Final = param_count


def parse(text: str) -> ParsedStatement:
    """Parse one statement; raises PartiQLSyntaxError with DynamoDB's text."""
    parser = _Parser(text, tokenize(text))
    statement = parser.statement()
    return ParsedStatement(statement, parser.params)


def _plain(message: str) -> PartiQLSyntaxError:
    return PartiQLSyntaxError(message)


class _Parser:
    __slots__ = ("text", "tokens", "pos", "params")

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.pos = 0
        self.params = 0

    # ------------------------------------------------------------ token helpers

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        if token.kind != "eof":
            self.pos += 1
        return token

    def at_word(self, word: str, ahead: int = 0) -> bool:
        return self.peek(ahead).upper == word

    def accept_word(self, word: str) -> bool:
        if self.at_word(word):
            self.pos += 1
            return True
        return False

    def accept_op(self, op: str) -> bool:
        token = self.peek()
        if token.kind == "op" and token.text == op:
            self.pos += 1
            return True
        return False

    def expect_word(self, word: str) -> None:
        if not self.accept_word(word):
            raise self.unexpected()

    def expect_op(self, op: str) -> None:
        if not self.accept_op(op):
            raise self.unexpected()

    def position(self, token: Token) -> str:
        """``line:column:length`` of a token, counted from 1 in characters."""
        line = self.text.count("\n", 0, token.start) + 1
        column = token.start - (self.text.rfind("\n", 0, token.start) + 1) + 1
        return f"{line}:{column}:{token.length}"

    def unexpected(self) -> PartiQLSyntaxError:
        """What DynamoDB says of the token where a term should have started."""
        token = self.peek()
        if token.kind == "eof" or (token.kind == "op" and token.text in (";", ")", "]", "}", ",")):
            return malformed("Unexpected term")
        if token.kind == "ident" and token.upper in OPERATOR_WORDS:
            return malformed("Unexpected operator")
        if token.kind == "ident" and token.upper in KEYWORDS:
            return malformed("Unexpected keyword")
        if token.kind == "op":
            return malformed("Unexpected operator")
        return malformed("Unexpected token after expression")

    # ------------------------------------------------------------ statements

    def statement(self) -> ast.Statement:
        word = self.peek().upper
        result: ast.Statement
        if word == "SELECT":
            result = self.select()
        elif word == "INSERT":
            result = self.insert()
        elif word == "UPDATE":
            result = self.update()
        elif word == "DELETE":
            result = self.delete()
        elif word == "EXISTS":
            self.next()
            self.expect_op("(")
            if not self.at_word("SELECT"):
                raise self.unexpected()
            result = ast.Exists(self.select())
            self.expect_op(")")
        else:
            raise malformed("Expected data manipulation")
        self.accept_op(";")
        if self.peek().kind != "eof":
            raise malformed("Unexpected token after expression")
        return result

    def select(self) -> ast.Select:
        self.expect_word("SELECT")
        projection: tuple[ast.Path, ...] | None
        if self.accept_op("*"):
            projection = None
        else:
            paths = [self.projection_path()]
            while self.accept_op(","):
                if self.accept_op("*"):
                    raise _plain(messages.PARTIQL_STAR_WITH_OTHERS)
                paths.append(self.projection_path())
            projection = tuple(paths)
        self.expect_word("FROM")
        if self.peek().kind not in ("ident", "qident") or self.peek().upper in KEYWORDS:
            raise self.unexpected()
        table, index = self.source()
        self.no_alias()
        where = self.where() if self.at_word("WHERE") else None
        order: list[ast.OrderTerm] = []
        if self.accept_word("ORDER"):
            self.expect_word("BY")
            while True:
                path = self.path()
                descending = False
                if self.accept_word("DESC"):
                    descending = True
                else:
                    self.accept_word("ASC")
                order.append(ast.OrderTerm(path, descending))
                if not self.accept_op(","):
                    break
        return ast.Select(projection, table, index, where, tuple(order))

    def projection_path(self) -> ast.Path:
        token = self.peek()
        if token.kind == "ident" and self.peek(1).kind == "op" and self.peek(1).text == "(":
            raise _plain(messages.PARTIQL_UNEXPECTED_PATH_COMPONENT.format(at=self.position(token)))
        return self.path()

    def source(self) -> tuple[str, str | None]:
        """``table`` or ``"table"."index"``."""
        parts = [self.name()]
        while self.accept_op("."):
            parts.append(self.name())
        if len(parts) > 2:
            raise _plain(messages.PARTIQL_FROM_PATH_TOO_LONG)
        if any(part == "" for part in parts):
            raise _plain(messages.PARTIQL_EMPTY_PATH_COMPONENT)
        return parts[0], parts[1] if len(parts) > 1 else None

    def no_alias(self) -> None:
        token = self.peek()
        if token.upper == "AS" or token.kind == "qident" or (token.kind == "ident" and token.upper not in KEYWORDS):
            raise _plain(messages.PARTIQL_ALIASING)

    def name(self) -> str:
        """A table (or index) name: bare or double-quoted."""
        token = self.peek()
        if token.kind == "qident" or (token.kind == "ident" and token.upper not in KEYWORDS):
            self.pos += 1
            return token.text
        raise malformed("Expected identifier for simple path")

    def insert(self) -> ast.Insert:
        self.expect_word("INSERT")
        self.expect_word("INTO")
        table = self.name()
        if not self.accept_word("VALUE"):
            raise malformed("Unexpected token after expression")
        return ast.Insert(table, self.value())

    def update(self) -> ast.Update:
        self.expect_word("UPDATE")
        if self.peek().kind not in ("ident", "qident") or self.peek().upper in KEYWORDS:
            raise malformed("Expected identifier for simple path")
        table = self.name()
        self.no_alias()
        actions: list[ast.Set | ast.Remove] = []
        while True:
            if self.accept_word("SET"):
                actions.append(self.assignment())
                while self.accept_op(","):
                    actions.append(self.assignment())
            elif self.accept_word("REMOVE"):
                actions.append(ast.Remove(self.path()))
                while self.accept_op(","):
                    actions.append(ast.Remove(self.path()))
            else:
                break
        if not actions:
            raise self.unexpected()
        where = self.where() if self.at_word("WHERE") else None
        return ast.Update(table, tuple(actions), where, self.returning(allow_all=True))

    def assignment(self) -> ast.Set:
        path = self.path()
        self.expect_op("=")
        return ast.Set(path, self.operand(in_update=True))

    def delete(self) -> ast.Delete:
        self.expect_word("DELETE")
        self.expect_word("FROM")
        table = self.name()
        self.no_alias()
        where = self.where() if self.at_word("WHERE") else None
        return ast.Delete(table, where, self.returning(allow_all=False))

    def returning(self, *, allow_all: bool) -> str | None:
        if not self.accept_word("RETURNING"):
            return None
        which = self.next().upper
        when = self.next().upper
        if which not in ("ALL", "MODIFIED") or when not in ("OLD", "NEW"):
            raise malformed("Unexpected token after expression")
        self.expect_op("*")
        value = f"{which}_{when}"
        if not allow_all and value != "ALL_OLD":
            raise _plain(messages.PARTIQL_DELETE_RETURNING)
        return value

    def where(self) -> ast.Condition:
        self.expect_word("WHERE")
        if self.at_word("ORDER"):
            raise malformed("Unexpected keyword")
        return self.condition()

    # ------------------------------------------------------------ conditions

    def condition(self) -> ast.Condition:
        left = self.conjunction()
        while self.accept_word("OR"):
            self.require_rhs()
            left = ast.Or(left, self.conjunction())
        return left

    def conjunction(self) -> ast.Condition:
        left = self.negation()
        while self.accept_word("AND"):
            self.require_rhs()
            left = ast.And(left, self.negation())
        return left

    def require_rhs(self) -> None:
        token = self.peek()
        if token.kind == "eof" or (token.kind == "op" and token.text in (";", ")")):
            raise malformed("Missing right-hand side expression of infix operator")

    def negation(self) -> ast.Condition:
        if self.accept_word("NOT"):
            return ast.Not(self.negation())
        return self.predicate()

    def predicate(self) -> ast.Condition:
        token = self.peek()
        if token.kind == "op" and token.text == "(":
            self.next()
            inner = self.condition()
            self.expect_op(")")
            return inner
        left = self.operand(in_update=False)
        token = self.peek()
        if token.kind == "op" and token.text in COMPARISONS:
            self.next()
            op = "<>" if token.text == "!=" else token.text
            return ast.Compare(op, left, self.operand(in_update=False))
        negated = False
        if self.at_word("NOT") and self.peek(1).upper in ("BETWEEN", "IN"):
            self.next()
            negated = True
        if self.accept_word("BETWEEN"):
            low = self.operand(in_update=False)
            self.expect_word("AND")
            high = self.operand(in_update=False)
            result: ast.Condition = ast.Between(left, low, high)
            return ast.Not(result) if negated else result
        if self.accept_word("IN"):
            result = ast.In(left, self.in_options())
            return ast.Not(result) if negated else result
        if self.accept_word("IS"):
            is_not = self.accept_word("NOT")
            kind = self.peek().upper
            if kind in TYPE_NAMES:
                self.next()
                return ast.IsCheck(left, kind, is_not)
            if kind in OTHER_TYPE_NAMES:
                raise _plain(messages.PARTIQL_UNSUPPORTED_OPERATION.format(operation="IsType"))
            raise malformed("Expected type name")
        if isinstance(left, ast.Call) and left.name in CONDITION_FUNCTIONS:
            return left
        raise self.unexpected() if self.peek().kind != "eof" else malformed("Unexpected term")

    def in_options(self) -> tuple[ast.Operand, ...]:
        token = self.next()
        if token.kind == "op" and token.text == "[":
            closing = "]"
        elif token.kind == "op" and token.text == "(":
            closing = ")"
        else:
            self.pos -= 1
            raise self.unexpected()
        options = [self.operand(in_update=False)]
        while self.accept_op(","):
            options.append(self.operand(in_update=False))
        self.expect_op(closing)
        return tuple(options)

    # ------------------------------------------------------------ operands

    def operand(self, *, in_update: bool) -> ast.Operand:
        left = self.term(in_update=in_update)
        while in_update:
            token = self.peek()
            if token.kind == "op" and token.text in ("+", "-"):
                self.next()
                left = ast.Arith(token.text, left, self.term(in_update=in_update))
            else:
                break
        return left

    def term(self, *, in_update: bool) -> ast.Operand:
        token = self.peek()
        if token.kind == "ident" and self.peek(1).kind == "op" and self.peek(1).text == "(":
            return self.call(in_update=in_update)
        if token.kind == "qident" or (token.kind == "ident" and token.upper not in KEYWORDS):
            return self.path()
        return self.value()

    def call(self, *, in_update: bool) -> ast.Call:
        token = self.next()
        name = token.text.lower()
        at = self.position(token)
        known = UPDATE_FUNCTIONS if in_update else (CONDITION_FUNCTIONS.keys() | OPERAND_FUNCTIONS.keys())
        if name not in known:
            raise _plain(messages.PARTIQL_UNRECOGNIZED_FUNCTION.format(name=name, at=at))
        self.expect_op("(")
        args: list[ast.Operand] = []
        if not self.accept_op(")"):
            args.append(self.operand(in_update=in_update))
            while self.accept_op(","):
                args.append(self.operand(in_update=in_update))
            self.expect_op(")")
        call = ast.Call(name, tuple(args), at)
        if not in_update:
            _check_function(call)
        return call

    def path(self) -> ast.Path:
        token = self.peek()
        if token.kind == "qident" or (token.kind == "ident" and token.upper not in KEYWORDS):
            self.next()
        else:
            raise self.unexpected()
        elements: list[str | int] = [token.text]
        while True:
            if self.accept_op("."):
                step = self.peek()
                if step.kind == "qident" or (step.kind == "ident" and step.upper not in KEYWORDS):
                    self.next()
                    elements.append(step.text)
                else:
                    raise malformed("Invalid path dot component")
            elif self.accept_op("["):
                index = self.next()
                if index.kind != "num" or not index.text.isdigit():
                    raise malformed("Invalid path index")
                elements.append(int(index.text))
                self.expect_op("]")
            else:
                return ast.Path(tuple(elements), self.position(token))

    # ------------------------------------------------------------ values

    def value(self) -> ast.Value:
        token = self.next()
        kind = token.kind
        if kind == "str":
            return ast.Literal(("S", token.text))
        if kind == "num":
            return ast.Literal(("N", token.text))
        if kind == "param":
            index = self.params
            self.params += 1
            return ast.Param(index)
        if kind == "ident":
            word = token.upper
            if word in ("TRUE", "FALSE"):
                return ast.Literal(("BOOL", word == "TRUE"))
            if word == "NULL":
                return ast.Literal(("NULL", True))
            if word == "MISSING":
                raise _plain(messages.PARTIQL_UNSUPPORTED_TYPE.format(type="MISSING"))
        if kind == "op":
            text = token.text
            if text == "-" and self.peek().kind == "num":
                return ast.Literal(("N", "-" + self.next().text))
            if text == "[":
                return ast.ListValue(self.members("]"))
            if text == "<<":
                items = self.members(">>")
                for item in items:
                    if not isinstance(item, ast.Literal) or item.value[0] not in ("S", "N"):
                        raise _plain(messages.PARTIQL_BAG_MEMBER)
                return ast.SetValue(items)
            if text == "{":
                return ast.MapValue(self.entries())
        self.pos -= 1 if kind != "eof" else 0
        raise self.unexpected()

    def members(self, closing: str) -> tuple[ast.Value, ...]:
        items: list[ast.Value] = []
        if self.accept_op(closing):
            return ()
        items.append(self.value())
        while self.accept_op(","):
            items.append(self.value())
        self.expect_op(closing)
        return tuple(items)

    def entries(self) -> tuple[tuple[str, ast.Value], ...]:
        entries: list[tuple[str, ast.Value]] = []
        if self.accept_op("}"):
            return ()
        while True:
            key = self.next()
            if key.kind not in ("str", "qident"):
                self.pos -= 1
                raise self.unexpected()
            self.expect_op(":")
            entries.append((key.text, self.value()))
            if not self.accept_op(","):
                break
        self.expect_op("}")
        return tuple(entries)


def _check_function(call: ast.Call) -> None:
    """Operand count, then a document path first: DynamoDB's texts for functions of a WHERE clause."""
    expected = CONDITION_FUNCTIONS.get(call.name) or OPERAND_FUNCTIONS.get(call.name)
    if expected is not None and len(call.args) != expected:
        raise _plain(messages.PARTIQL_OPERAND_COUNT.format(name=call.name, count=len(call.args)))
    if not isinstance(call.args[0], ast.Path):
        raise _plain(messages.PARTIQL_REQUIRES_PATH.format(name=call.name))
