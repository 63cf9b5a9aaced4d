"""Projection: keep only the given document paths of an item, as DynamoDB projects.

Nested paths keep their enclosing maps (``a.b`` -> ``{"a": {"M": {"b": ...}}}``); list indexes keep
their list, with the selected elements in index order and without gaps (``a[3], a[1]`` ->
``{"a": {"L": [a[1], a[3]]}}``). Paths that do not exist are skipped. Selected values are shared
with the input item, not copied.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dynastore.expressions.ast import ResolvedPath, ResolvedProjection
from dynastore.expressions.evaluate import lookup
from dynastore.model.values import AttributeValue, Item

__all__ = ["project", "project_paths"]


class _Leaf:
    __slots__ = ("value",)

    def __init__(self, value: AttributeValue) -> None:
        self.value = value


def _build(node: Any) -> AttributeValue:
    if isinstance(node, _Leaf):
        return node.value
    kind, children = node
    if kind == "L":
        return {"L": [_build(children[index]) for index in sorted(children)]}
    return {"M": {key: _build(child) for key, child in children.items()}}


def project_paths(item: Item, paths: Iterable[ResolvedPath]) -> Item:
    top: dict[Any, Any] = {}
    for path in paths:
        value = lookup(item, path)
        if value is None:
            continue
        if len(path) == 1:
            top[path[0]] = _Leaf(value)
            continue
        children = top
        blocked = False
        for position, element in enumerate(path[:-1]):
            node = children.get(element)
            if isinstance(node, _Leaf):
                blocked = True  # an enclosing value is already projected whole
                break
            if node is None:
                node = ("L" if isinstance(path[position + 1], int) else "M", {})
                children[element] = node
            children = node[1]
        if not blocked:
            children[path[-1]] = _Leaf(value)
    return {name: _build(node) for name, node in top.items()}


def project(item: Item, projection: ResolvedProjection) -> Item:
    """The projected copy of ``item`` (top-level dict is new; leaf values are shared)."""
    return project_paths(item, projection.paths)
