from typing import Any

from dynastore.expressions import ExpressionContext, evaluate

ITEM: dict[str, Any] = {
    "s": {"S": "hello"},
    "n": {"N": "10"},
    "b": {"B": "AAEC"},  # bytes 00 01 02
    "ss": {"SS": ["x", "y"]},
    "ns": {"NS": ["1", "2.5"]},
    "l": {"L": [{"S": "a"}, {"N": "3"}, {"M": {"k": {"S": "v"}}}]},
    "m": {"M": {"deepmap": {"M": {"deep": {"N": "7"}}}}},
    "t": {"BOOL": True},
    "z": {"NULL": True},
}
VALUES: dict[str, Any] = {
    ":s": {"S": "hello"},
    ":he": {"S": "he"},
    ":ell": {"S": "ell"},
    ":x": {"S": "x"},
    ":a": {"S": "a"},
    ":n10": {"N": "10.0"},
    ":n9": {"N": "9"},
    ":n11": {"N": "11"},
    ":n5": {"N": "5"},
    ":n3": {"N": "3"},
    ":n7": {"N": "7"},
    ":n2": {"N": "2.50"},
    ":ten": {"S": "10"},
    ":b01": {"B": "AAE="},
    ":tS": {"S": "S"},
    ":tL": {"S": "L"},
    ":true": {"BOOL": True},
    ":map": {"M": {"k": {"S": "v"}}},
}


def check(text: str, item: dict[str, Any] | None = ITEM) -> bool:
    ctx = ExpressionContext({"#n": "n", "#dot": "a.b"}, VALUES)
    return evaluate(ctx.condition("ConditionExpression", text), item)


def test_equality_numbers_by_value_and_types_never_equal() -> None:
    assert check("n = :n10")
    assert not check("n = :ten")  # N vs S
    assert check("#n <> :ten")
    assert check("t = :true")


def test_ordering_only_same_type_scalars() -> None:
    assert check("n > :n9") and check("n >= :n10") and check("n < :n11") and check("n <= :n10")
    assert not check("n < :ten") and not check("n > :ten")
    assert check("s > :he") and not check("s < :he")


def test_missing_attribute_comparisons() -> None:
    assert not check("absent = :s")
    assert not check("absent < :s")
    assert check("absent <> :s")  # <> is the negation of =
    assert not check("absent BETWEEN :n5 AND :n11")
    assert not check("absent IN (:s, :n5)")


def test_between_and_in() -> None:
    assert check("n BETWEEN :n9 AND :n11") and check("n BETWEEN :n10 AND :n10")
    assert not check("n BETWEEN :n5 AND :n9")
    assert check("n IN (:n5, :n10)") and not check("n IN (:n5, :n9)")


def test_functions() -> None:
    assert check("attribute_exists(m.deepmap.deep)") and not check("attribute_exists(m.deepmap.nope)")
    assert check("attribute_not_exists(#dot)") and check("attribute_not_exists(l[5])")
    assert check("attribute_type(s, :tS)") and check("attribute_type(l, :tL)") and not check("attribute_type(n, :tS)")
    assert check("begins_with(s, :he)") and not check("begins_with(s, :ell)") and not check("begins_with(n, :he)")
    assert check("begins_with(b, :b01)")
    assert check("contains(s, :ell)") and check("contains(ss, :x)") and not check("contains(ss, :a)")
    assert check("contains(ns, :n2)") and check("contains(l, :a)") and check("contains(l, :map)")
    assert check("contains(l, :n3)") and not check("contains(n, :n10)")


def test_size() -> None:
    assert check("size(s) = :n5") and check("size(l) = :n3") and check("size(ss) < :n3")
    assert check("size(b) = :n3") and check("size(m.deepmap) < :n2")
    assert not check("size(n) = :n2") and not check("size(absent) = :n2")


def test_nested_paths_and_indexes() -> None:
    assert check("m.deepmap.deep = :n7") and check("l[1] = :n3") and check("l[2].k = :x") is False
    assert not check("s[0] = :s") and not check("l.k = :s")


def test_logic_and_no_item() -> None:
    assert check("n = :n10 AND (s = :x OR NOT s = :x)")
    assert not check("attribute_exists(n)", None)
    assert check("attribute_not_exists(n)", None)


def test_evaluation_does_not_mutate_item() -> None:
    before = repr(ITEM)
    check("size(l) = :n3 AND contains(l, :map)")
    assert repr(ITEM) == before
