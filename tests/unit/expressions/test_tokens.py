from dynastore.expressions.tokens import tokenize


def kinds(text: str) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in tokenize(text)]


def test_tokens_skip_whitespace_and_end_with_eof() -> None:
    assert kinds(" a.b[12] <= :v ") == [
        ("name", "a"),
        ("op", "."),
        ("name", "b"),
        ("op", "["),
        ("num", "12"),
        ("op", "]"),
        ("op", "<="),
        ("vref", ":v"),
        ("eof", "<EOF>"),
    ]


def test_tokens_keep_spans() -> None:
    tokens = tokenize("  #n<>x")
    assert [(t.start, t.end) for t in tokens] == [(2, 4), (4, 6), (6, 7), (7, 7)]


def test_unknown_characters_become_bad_tokens() -> None:
    assert kinds("a / b") == [("name", "a"), ("bad", "/"), ("name", "b"), ("eof", "<EOF>")]
    assert kinds("#") == [("bad", "#"), ("eof", "<EOF>")]
