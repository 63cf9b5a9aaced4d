from dynastore.expressions.reserved import RESERVED_WORDS, is_reserved


def test_reserved_word_list_is_complete() -> None:
    assert len(RESERVED_WORDS) == 573
    assert {"ABORT", "STATUS", "NAME", "ZONE"} <= RESERVED_WORDS


def test_reserved_check_is_case_insensitive() -> None:
    assert is_reserved("status") and is_reserved("Status")
    assert not is_reserved("statuses")
