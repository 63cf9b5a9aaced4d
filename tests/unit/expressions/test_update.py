from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, apply_update, updated_view

VALUES: dict[str, Any] = {
    ":n1": {"N": "1"},
    ":n5": {"N": "5"},
    ":s": {"S": "v"},
    ":l": {"L": [{"N": "9"}]},
    ":ss": {"SS": ["b", "c"]},
    ":ns": {"NS": ["1.0", "3"]},
    ":ssa": {"SS": ["a"]},
    ":big": {"N": "9" + "0" * 125},
}


def run(text: str, item: dict[str, Any]) -> dict[str, Any]:
    update = ExpressionContext({"#k": "k"}, VALUES).update(text)
    new, _ = apply_update(update, item)
    return new


def error(text: str, item: dict[str, Any]) -> str:
    with pytest.raises(ValidationException) as info:
        run(text, item)
    assert info.value.message is not None
    return info.value.message


def test_set_top_level_nested_and_arithmetic() -> None:
    item = {"a": {"N": "2"}, "m": {"M": {"x": {"L": [{"N": "0"}]}}}}
    new = run("SET b = :s, a = a + :n5, m.x[0] = :n1, m.y = a - :n1", item)
    assert new == {
        "a": {"N": "7"},
        "b": {"S": "v"},
        "m": {"M": {"x": {"L": [{"N": "1"}]}, "y": {"N": "1"}}},
    }
    assert item == {"a": {"N": "2"}, "m": {"M": {"x": {"L": [{"N": "0"}]}}}}  # input untouched


def test_set_list_index_past_end_appends_and_functions() -> None:
    item = {"l": {"L": [{"N": "0"}]}}
    assert run("SET l[7] = :n1", item) == {"l": {"L": [{"N": "0"}, {"N": "1"}]}}
    assert run("SET l = list_append(l, :l)", item) == {"l": {"L": [{"N": "0"}, {"N": "9"}]}}
    assert run("SET l = list_append(:l, l)", item) == {"l": {"L": [{"N": "9"}, {"N": "0"}]}}
    assert run("SET c = if_not_exists(c, :n5), l = if_not_exists(l, :n5)", item) == {
        "l": {"L": [{"N": "0"}]},
        "c": {"N": "5"},
    }


def test_remove() -> None:
    item = {
        "a": {"S": "x"},
        "l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]},
        "m": {"M": {"k": {"N": "1"}}},
    }
    assert run("REMOVE a, l[1], l[3], m.k, m.absent, nothing, l[10]", item) == {
        "l": {"L": [{"N": "0"}, {"N": "2"}]},
        "m": {"M": {}},
    }


def test_add_and_delete() -> None:
    item = {"n": {"N": "1"}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1"]}}
    assert run("ADD n :n5, ss :ss, ns :ns, fresh :n1", item) == {
        "n": {"N": "6"},
        "ss": {"SS": ["a", "b", "c"]},
        "ns": {"NS": ["1", "3"]},
        "fresh": {"N": "1"},
    }
    assert run("DELETE ss :ss, absent :ss", item) == {
        "n": {"N": "1"},
        "ss": {"SS": ["a"]},
        "ns": {"NS": ["1"]},
    }
    assert "ns" not in run("DELETE ns :ns", item)


def test_runtime_errors() -> None:
    item = {"s": {"S": "x"}, "m": {"M": {}}, "l": {"L": []}, "ns": {"NS": ["1"]}}
    assert error("SET a = absent", item) == (
        "The provided expression refers to an attribute that does not exist in the item"
    )
    assert error("SET a = s + :n1", item) == "An operand in the update expression has an incorrect data type"
    assert error("SET a = list_append(s, :l)", item) == "An operand in the update expression has an incorrect data type"
    assert error("ADD ns :ssa", item) == "An operand in the update expression has an incorrect data type"
    assert error("DELETE ns :ssa", item) == "An operand in the update expression has an incorrect data type"
    invalid = "The document path provided in the update expression is invalid for update"
    assert error("SET y.a = :n1", item) == invalid
    assert error("SET s[1] = :n1", item) == invalid
    assert error("SET m[1] = :n1", item) == invalid
    assert error("SET l.a = :n1", item) == invalid
    assert error("REMOVE y.a", item) == invalid
    assert error("ADD y.a :n1", item) == invalid
    assert error("SET a = :big + :big", item) == (
        "Number overflow. Attempting to store a number with magnitude larger than supported range"
    )


def test_updated_paths_and_view() -> None:
    item: dict[str, Any] = {"a": {"N": "1"}, "m": {"M": {"x": {"N": "1"}, "y": {"N": "2"}}}, "keep": {"S": "k"}}
    update = ExpressionContext(None, VALUES).update("SET m.x = :n5 REMOVE a")
    new, paths = apply_update(update, item)
    assert paths == (("m", "x"), ("a",))
    assert updated_view(item, paths) == {"m": {"M": {"x": {"N": "1"}}}, "a": {"N": "1"}}
    assert updated_view(new, paths) == {"m": {"M": {"x": {"N": "5"}}}}
