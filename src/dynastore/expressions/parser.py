"""Recursive-descent parser for all five expression kinds, over the tokens of ``tokens.py``.

Grammar (keywords case-insensitive)::

    condition   := or
    or          := and (OR and)*
    and         := not (AND not)*
    not         := NOT not | primary
    primary     := "(" or ")" tail? | call tail? | path tail | value tail
    tail        := comparator operand | BETWEEN operand AND operand | IN "(" operand ("," operand)* ")"
    operand     := "(" operand ")" | call | path | value
    call        := name "(" operand ("," operand)* ")"
    path        := (name | #ref) ("." (name | #ref) | "[" digits "]")*
    update      := (SET set ("," set)* | REMOVE path ("," path)* | ADD path value ("," ...)* |
                    DELETE path value ("," ...)*)+
    set         := path "=" ("(" setvalue ")" | setvalue)
    setvalue    := uoperand (("+" | "-") uoperand)?
    uoperand    := "(" ubase ")" | ubase ;  ubase := call | value | path
    projection  := path ("," path)*

A parenthesised group is parsed as "condition or operand" and the caller decides, so ``(a) = b`` and
``(a = b)`` need no backtracking; only ``SET x = (...)`` backtracks once.

Nesting depth: DynamoDB has no limit of its own on nesting, only its 300 operators (``limits``). Each level
of a chain that is not redundant holds an operator, and NOT or a function call adds at most one more level
(``NOT (NOT (...))``), so an expression DynamoDB accepts nests at most ``MAX_PARSE_DEPTH`` =
2 x 300 + a few levels deep. Past that the text has too many operators (counted on its tokens, as the
parse would have) or redundant parentheses, and it is refused as that before Python's stack is at risk:
at most about four Python frames per level, which ``RECURSION_LIMIT`` (set once, at import) covers with
room for the evaluation of a tree that deep.

Syntax errors follow DynamoDB: ``token`` is the offending token (``<EOF>`` at the end) and ``near``
runs from the start of the significant token before it (or index 0) to the end of the token after it
(or the end of the text).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from dynastore import limits, messages
from dynastore.expressions import ast
from dynastore.expressions.tokens import EOF, ExpressionError, ExprSyntaxError, Token, tokenize

__all__ = ["MAX_PARSE_DEPTH", "parse", "parse_condition", "parse_projection", "parse_update"]

MAX_PARSE_DEPTH = 2 * limits.MAX_EXPRESSION_OPERATORS + 8  # see the module docstring
# Python frames a request may need: about four per parse level, as many again to check, resolve and evaluate
# the tree, and the server's own. Python 3.11+ runs Python-to-Python calls without C stack, and the compiled
# build's C frames at this depth take well under 1 MB of the event-loop thread's stack.
RECURSION_LIMIT = 8 * MAX_PARSE_DEPTH + 1000
if sys.getrecursionlimit() < RECURSION_LIMIT:
    sys.setrecursionlimit(RECURSION_LIMIT)
_COMPARATORS = frozenset({"=", "<>", "<", "<=", ">", ">="})
_CONDITION_KEYWORDS = frozenset({"AND", "OR", "NOT", "BETWEEN", "IN"})
_UPDATE_KEYWORDS = frozenset({"SET", "REMOVE", "ADD", "DELETE"})


def check_size(text: str) -> None:
    size = len(text.encode("utf-8"))
    if size > limits.MAX_EXPRESSION_BYTES:
        raise ExpressionError(messages.EXPR_TOO_LONG.format(size=size))
    if not text.strip():
        raise ExpressionError(messages.EXPR_EMPTY)


class _Parser:
    def __init__(self, text: str, keywords: frozenset[str]) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.pos = 0
        self.keywords = keywords
        self.depth = 0
        self.operators = 0
        self.redundant = False
        self.groups: dict[int, int] = {}  # index of "(" -> index of its ")"

    # -- cursor ---------------------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> Token:
        return self.toks[min(self.pos + offset, len(self.toks) - 1)]

    def advance(self) -> Token:
        tok = self.toks[self.pos]
        if tok.kind != EOF:
            self.pos += 1
        return tok

    def is_op(self, text: str, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok.kind == "op" and tok.text == text

    def is_kw(self, word: str) -> bool:
        tok = self.toks[self.pos]
        return tok.kind == "name" and tok.text.upper() == word

    def fail(self) -> ExprSyntaxError:
        i = self.pos
        tok = self.toks[i]
        start = self.toks[i - 1].start if i > 0 else 0
        end = self.toks[i + 1].end if tok.kind != EOF else len(self.text)
        return ExprSyntaxError(tok.text, self.text[start:end])

    def expect_op(self, text: str) -> int:
        if not self.is_op(text):
            raise self.fail()
        index = self.pos
        self.advance()
        return index

    def expect_end(self) -> None:
        if self.peek().kind != EOF:
            raise self.fail()

    def count_operator(self) -> None:
        self.operators += 1

    def enter(self) -> None:
        """One more nesting level (a "(" group, NOT, a function call)."""
        self.depth += 1
        if self.depth > MAX_PARSE_DEPTH:
            # Deeper than any expression of at most 300 operators without redundant parentheses can be.
            count = self.operator_tokens()
            if count > limits.MAX_EXPRESSION_OPERATORS:
                raise ExpressionError(messages.EXPR_TOO_MANY_OPERATORS.format(count=count))
            raise ExpressionError(messages.EXPR_REDUNDANT_PARENS)

    def operator_tokens(self) -> int:
        """The operators of the whole text, counted on its tokens as the parse counts them: comparators, AND /
        OR / NOT / IN / BETWEEN (whose own AND is not counted again), function calls, and an update's + / -."""
        condition = self.keywords is _CONDITION_KEYWORDS
        count = 0
        toks = self.toks
        for i, tok in enumerate(toks):
            if tok.kind == "op":
                count += tok.text in _COMPARATORS or (not condition and tok.text in ("+", "-"))
            elif tok.kind == "name":
                word = tok.text.upper()
                if condition and word in _CONDITION_KEYWORDS:
                    count += word != "BETWEEN"  # BETWEEN x AND y: one operator, counted at its AND
                else:
                    count += toks[i + 1].kind == "op" and toks[i + 1].text == "("  # a call
        return count

    def close_group(self, open_index: int) -> None:
        close_index = self.expect_op(")")
        self.depth -= 1
        self.groups[open_index] = close_index
        if self.groups.get(open_index + 1) == close_index - 1:
            self.redundant = True

    # -- shared pieces ----------------------------------------------------------------------------------
    def placeholder(self, tok: Token) -> str:
        if len(tok.text.encode("utf-8")) > limits.MAX_PLACEHOLDER_BYTES:
            raise ExpressionError(
                messages.EXPR_PLACEHOLDER_TOO_LONG.format(name=tok.text, length=len(tok.text.encode("utf-8")))
            )
        return tok.text

    def path_element(self) -> ast.Attr | ast.NameRef:
        tok = self.peek()
        if tok.kind == "name" and tok.text.upper() not in self.keywords:
            self.advance()
            return ast.Attr(tok.text)
        if tok.kind == "nref":
            self.advance()
            return ast.NameRef(self.placeholder(tok))
        raise self.fail()

    def path(self) -> ast.Path:
        elements: list[ast.PathElement] = [self.path_element()]
        while True:
            if self.is_op("."):
                self.advance()
                elements.append(self.path_element())
            elif self.is_op("["):
                self.advance()
                tok = self.peek()
                if tok.kind != "num":
                    raise self.fail()
                self.advance()
                self.expect_op("]")
                index = int(tok.text)
                if index > limits.MAX_LIST_INDEX:
                    raise ExpressionError(messages.EXPR_LIST_INDEX_RANGE.format(index=tok.text))
                elements.append(ast.Index(index))
            else:
                break
        if len(elements) > limits.MAX_PATH_DEPTH:
            raise ExpressionError(messages.EXPR_PATH_TOO_DEEP.format(depth=len(elements)))
        return ast.Path(tuple(elements))

    def value(self) -> ast.ValueRef:
        tok = self.peek()
        if tok.kind != "vref":
            raise self.fail()
        self.advance()
        return ast.ValueRef(self.placeholder(tok))

    def is_call_start(self) -> bool:
        tok = self.peek()
        return tok.kind == "name" and tok.text.upper() not in self.keywords and self.is_op("(", 1)

    def call(self, operand: Callable[[], ast.Operand]) -> ast.Call:
        name = self.advance().text
        open_index = self.pos
        self.advance()  # "("
        self.enter()
        self.count_operator()
        args = [operand()]
        while self.is_op(","):
            self.advance()
            args.append(operand())
        close = self.expect_op(")")
        self.depth -= 1
        self.groups[open_index] = close
        return ast.Call(name, tuple(args))

    # -- conditions -------------------------------------------------------------------------------------
    def condition(self) -> ast.Condition:
        node = self.or_()
        self.need_condition(node)
        self.expect_end()
        return node  # type: ignore[return-value]  # need_condition checked it

    def need_condition(self, node: ast.Node | ast.Operand) -> None:
        if not isinstance(node, ast.Compare | ast.Between | ast.In | ast.And | ast.Or | ast.Not | ast.Call):
            raise self.fail()

    def or_(self) -> ast.Condition | ast.Operand:
        left = self.and_()
        while self.is_kw("OR"):
            self.need_condition(left)
            self.advance()
            self.count_operator()
            right = self.and_()
            self.need_condition(right)
            left = ast.Or(left, right)  # type: ignore[arg-type]
        return left

    def and_(self) -> ast.Condition | ast.Operand:
        left = self.not_()
        while self.is_kw("AND"):
            self.need_condition(left)
            self.advance()
            self.count_operator()
            right = self.not_()
            self.need_condition(right)
            left = ast.And(left, right)  # type: ignore[arg-type]
        return left

    def not_(self) -> ast.Condition | ast.Operand:
        if self.is_kw("NOT"):
            self.advance()
            self.count_operator()
            self.enter()
            inner = self.not_()
            self.need_condition(inner)
            self.depth -= 1
            return ast.Not(inner)  # type: ignore[arg-type]
        return self.primary()

    def primary(self) -> ast.Condition | ast.Operand:
        left: ast.Condition | ast.Operand
        if self.is_op("("):
            open_index = self.pos
            self.advance()
            self.enter()
            left = self.or_()
            self.close_group(open_index)
            if isinstance(left, ast.Compare | ast.Between | ast.In | ast.And | ast.Or | ast.Not):
                return left
        elif self.is_call_start():
            left = self.call(self.operand)
        elif self.peek().kind == "vref":
            left = self.value()
        else:
            left = self.path()
        return self.tail(left)

    def tail(self, left: ast.Operand) -> ast.Condition | ast.Operand:
        tok = self.peek()
        if tok.kind == "op" and tok.text in _COMPARATORS:
            self.advance()
            self.count_operator()
            return ast.Compare(tok.text, left, self.operand())
        if self.is_kw("BETWEEN"):
            self.advance()
            self.count_operator()
            low = self.operand()
            if not self.is_kw("AND"):
                raise self.fail()
            self.advance()
            return ast.Between(left, low, self.operand())
        if self.is_kw("IN"):
            self.advance()
            self.count_operator()
            self.expect_op("(")
            options = [self.operand()]
            while self.is_op(","):
                self.advance()
                options.append(self.operand())
            self.expect_op(")")
            return ast.In(left, tuple(options))
        return left

    def operand(self) -> ast.Operand:
        if self.is_op("("):
            open_index = self.pos
            self.advance()
            self.enter()
            inner = self.operand()
            self.close_group(open_index)
            return inner
        if self.is_call_start():
            return self.call(self.operand)
        if self.peek().kind == "vref":
            return self.value()
        return self.path()

    # -- update -----------------------------------------------------------------------------------------
    def update(self) -> ast.UpdateExpr:
        actions: list[ast.UpdateAction] = []
        sections: list[str] = []
        if self.peek().kind == EOF:
            raise self.fail()
        while self.peek().kind != EOF:
            tok = self.peek()
            word = tok.text.upper() if tok.kind == "name" else ""
            if word not in _UPDATE_KEYWORDS:
                raise self.fail()
            self.advance()
            sections.append(word)
            while True:
                actions.append(self.update_action(word))
                if not self.is_op(","):
                    break
                self.advance()
        return ast.UpdateExpr(tuple(actions), tuple(sections))

    def update_action(self, section: str) -> ast.UpdateAction:
        path = self.path()
        if section == "SET":
            self.expect_op("=")
            return ast.SetAction(path, self.set_value())
        if section == "REMOVE":
            return ast.RemoveAction(path)
        value = self.value()
        return ast.AddAction(path, value) if section == "ADD" else ast.DeleteAction(path, value)

    def set_value(self) -> ast.Operand:
        if self.is_op("("):
            saved = (self.pos, self.operators, self.depth, dict(self.groups))
            try:
                self.advance()
                self.enter()
                inner = self.set_arith()
                self.expect_op(")")
                self.depth -= 1
                if not (self.is_op("+") or self.is_op("-")):
                    return inner
            except ExprSyntaxError:
                pass
            self.pos, self.operators, self.depth, self.groups = saved
        return self.set_arith()

    def set_arith(self) -> ast.Operand:
        left = self.update_operand()
        if self.is_op("+") or self.is_op("-"):
            op = self.advance().text
            self.count_operator()
            return ast.Arith(op, left, self.update_operand())
        return left

    def update_operand(self) -> ast.Operand:
        if self.is_op("("):
            self.advance()
            inner = self.update_base()
            self.expect_op(")")
            return inner
        return self.update_base()

    def update_base(self) -> ast.Operand:
        if self.is_call_start():
            return self.call(self.update_operand)
        if self.peek().kind == "vref":
            return self.value()
        return self.path()

    # -- projection -------------------------------------------------------------------------------------
    def projection(self) -> ast.ProjectionExpr:
        paths = [self.path()]
        while self.is_op(","):
            self.advance()
            paths.append(self.path())
        self.expect_end()
        return ast.ProjectionExpr(tuple(paths))


def _finish(parser: _Parser, root: ast.Node) -> ast.Parsed:
    if parser.operators > limits.MAX_EXPRESSION_OPERATORS:
        raise ExpressionError(messages.EXPR_TOO_MANY_OPERATORS.format(count=parser.operators))
    return ast.Parsed(root, parser.redundant)


def parse_condition(text: str) -> ast.Parsed:
    """Condition, Filter and KeyCondition expressions. Raises ExpressionError."""
    check_size(text)
    parser = _Parser(text, _CONDITION_KEYWORDS)
    return _finish(parser, parser.condition())


def parse_update(text: str) -> ast.Parsed:
    check_size(text)
    parser = _Parser(text, _UPDATE_KEYWORDS)
    root = parser.update()
    return _finish(parser, root)


def parse_projection(text: str) -> ast.Parsed:
    check_size(text)
    parser = _Parser(text, frozenset())
    return _finish(parser, parser.projection())


def parse(kind: str, text: str) -> ast.Parsed:
    """Dispatch on the request parameter name (``ConditionExpression`` ... ``ProjectionExpression``)."""
    if kind == "UpdateExpression":
        return parse_update(text)
    if kind == "ProjectionExpression":
        return parse_projection(text)
    return parse_condition(text)
