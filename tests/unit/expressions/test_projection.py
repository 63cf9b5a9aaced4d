from typing import Any

from dynastore.expressions import ExpressionContext, project

ITEM: dict[str, Any] = {
    "a": {"S": "x"},
    "l": {"L": [{"N": "0"}, {"M": {"k": {"S": "v"}, "j": {"S": "w"}}}, {"N": "2"}, {"N": "3"}]},
    "m": {"M": {"p": {"N": "1"}, "q": {"N": "2"}}},
}


def proj(text: str, names: dict[str, str] | None = None) -> dict[str, Any]:
    return project(ITEM, ExpressionContext(names, None).projection(text))


def test_top_level_and_missing() -> None:
    assert proj("a, nothing") == {"a": {"S": "x"}}


def test_nested_map_paths_keep_enclosing_maps() -> None:
    assert proj("m.q, #x", {"#x": "a"}) == {"m": {"M": {"q": {"N": "2"}}}, "a": {"S": "x"}}


def test_list_indexes_are_compacted_in_index_order() -> None:
    assert proj("l[3], l[1].k, l[9]") == {"l": {"L": [{"M": {"k": {"S": "v"}}}, {"N": "3"}]}}


def test_projection_returns_new_top_level_dict() -> None:
    result = proj("a")
    result["b"] = {"S": "y"}
    assert "b" not in ITEM
