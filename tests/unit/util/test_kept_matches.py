"""KeptMatches: the texts a pattern fully matched, kept up to a bound."""

from __future__ import annotations

from dynastore.util.kept_matches import KeptMatches


def test_it_answers_as_the_pattern_does_and_keeps_only_matches() -> None:
    keys = KeptMatches(r":[A-Za-z0-9_]+")
    assert keys.matches(":p") and keys.matches(":p")  # the second answer comes from the kept set
    assert not keys.matches("p") and not keys.matches(":p-") and not keys.matches(":") and not keys.matches(":p\n")
    assert len(keys) == 1


def test_a_stream_of_new_texts_keeps_at_most_the_bound() -> None:
    names = KeptMatches(r"[a-z0-9]+", limit=3)
    for number in range(10):
        assert names.matches(f"table{number}")
        assert len(names) <= 3
    assert names.matches("table0") and not names.matches("table;")
