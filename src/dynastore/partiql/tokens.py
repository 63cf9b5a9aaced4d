"""PartiQL tokens: one compiled regular expression splits a statement into spanned tokens.

Comments (``--`` to the end of the line, ``/* ... */``) and whitespace are dropped. A statement that cannot be
split (an unterminated string, quoted name or block comment, a character the dialect does not know) fails with
DynamoDB's "wasn't well formed" text and nothing after the colon, as DynamoDB answers a statement its lexer
refuses.
"""

from __future__ import annotations

import re
from typing import Final

from dynastore import messages

__all__ = ["PartiQLSyntaxError", "Token", "tokenize"]


class PartiQLSyntaxError(Exception):
    """A statement DynamoDB's parser refuses; ``message`` is the client-visible text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def malformed(detail: str) -> PartiQLSyntaxError:
    return PartiQLSyntaxError(messages.PARTIQL_NOT_WELL_FORMED.format(detail=detail))


class Token:
    """``kind``: ``ident`` (bare name or keyword), ``qident`` (double-quoted name), ``str``, ``num``, ``op``
    (punctuation), ``param`` (``?``) or ``eof``; ``text`` is the unquoted value; ``start`` the offset in the
    statement (0-based, characters) and ``length`` the characters it spans."""

    __slots__ = ("kind", "text", "start", "length")

    def __init__(self, kind: str, text: str, start: int, length: int) -> None:
        self.kind: Final = kind
        self.text: Final = text
        self.start: Final = start
        self.length: Final = length

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "ident" else ""

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start})"


_TOKEN: Final = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<line_comment>--[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<qident>"(?:[^"]|"")*")
  | (?P<str>'(?:[^']|'')*')
  | (?P<op><<|>>|<=|>=|<>|!=|[=<>()\[\]{},.*?:+\-;])
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``eof`` token; raises PartiQLSyntaxError."""
    tokens: list[Token] = []
    append = tokens.append
    position = 0
    end = len(text)
    match = _TOKEN.match
    while position < end:
        found = match(text, position)
        if found is None:
            raise malformed("")
        kind = found.lastgroup
        assert kind is not None
        start, position = position, found.end()
        if kind in ("space", "line_comment", "block_comment"):
            continue
        raw = found.group()
        if kind == "qident":
            append(Token(kind, raw[1:-1].replace('""', '"'), start, len(raw)))
        elif kind == "str":
            append(Token(kind, raw[1:-1].replace("''", "'"), start, len(raw)))
        elif kind == "op" and raw == "?":
            append(Token("param", raw, start, 1))
        else:
            append(Token(kind, raw, start, len(raw)))
    append(Token("eof", "", end, 0))
    return tokens
