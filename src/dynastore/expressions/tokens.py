"""Tokenizer for every expression kind: one compiled regex, spans kept for DynamoDB's "near" text.

Whitespace is matched but not returned; the parser needs only significant tokens, and the source
spans are enough to rebuild the ``near`` excerpt of a syntax error. A trailing ``eof`` token
(text ``<EOF>``) closes every token list. Characters outside the language become ``bad`` tokens so
that the parser reports them as the offending token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dynastore import messages

__all__ = ["EOF", "ExprSyntaxError", "ExpressionError", "Token", "tokenize"]

TOKEN_RE = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<name>[A-Za-z][A-Za-z0-9_]*)"  # not "_": DynamoDB's lexer makes a lone "_" a bad token
    r"|(?P<nref>#[A-Za-z0-9_]+)"
    r"|(?P<vref>:[A-Za-z0-9_]+)"
    r"|(?P<num>[0-9]+)"
    r"|(?P<op><>|<=|>=|[=<>(),.\[\]+-])"
    r"|(?P<bad>.)",
    re.DOTALL,
)

EOF = "eof"


class ExpressionError(Exception):
    """Internal: an expression is invalid. ``detail`` is DynamoDB's text without the context prefix.

    ``prefixed`` is False for the few texts DynamoDB sends without ``Invalid <Kind>: `` in front
    (key-condition shape errors).
    """

    def __init__(self, detail: str, *, prefixed: bool = True) -> None:
        super().__init__(detail)
        self.detail = detail
        self.prefixed = prefixed


class ExprSyntaxError(ExpressionError):
    def __init__(self, token: str, near: str) -> None:
        super().__init__(messages.EXPR_SYNTAX.format(token=token, near=near))
        self.token = token
        self.near = near


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # name | nref | vref | num | op | bad | eof
    text: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """Significant tokens of ``text`` followed by one ``eof`` token."""
    tokens: list[Token] = []
    append = tokens.append
    for match in TOKEN_RE.finditer(text):
        kind = match.lastgroup
        assert kind is not None
        if kind != "ws":
            append(Token(kind, match.group(), match.start(), match.end()))
    append(Token(EOF, "<EOF>", len(text), len(text)))
    return tokens
