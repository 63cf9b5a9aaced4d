"""Requests generated from botocore's model of DynamoDB, with every length and range probed at its bounds, and
generic mutations of any request's JSON tree (wrong JSON types, dropped and duplicated members)."""

from __future__ import annotations

import copy
import random
from functools import cache
from typing import Any

import botocore.session

from tests.fuzz import values
from tests.fuzz.tables import Table

_AV_SHAPES = frozenset(("AttributeValue",))


@cache
def _model() -> Any:
    return botocore.session.get_session().get_service_model("dynamodb")


def _bounded(rng: random.Random, low: int | None, high: int | None, default_high: int) -> int:
    choices = [rng.randrange(0, 4)]
    if low is not None:
        choices += [low, max(low - 1, 0)]
    if high is not None:
        choices += [high, high + 1]
    else:
        choices.append(rng.randrange(default_high))
    return rng.choice(choices)


def _generate(rng: random.Random, shape: Any, tables: tuple[Table, ...], depth: int) -> Any:
    name = shape.name
    if name in _AV_SHAPES:
        return values.attribute_value(rng)
    if name == "TableName" or name == "TableArn":
        return (
            rng.choice(tables).name if rng.random() < 0.9 else values.sized_text(rng, rng.choice((0, 2, 3, 255, 256)))
        )
    if name == "AttributeName":
        return values.attribute_name(rng)
    kind = shape.type_name
    meta = shape.metadata
    if kind == "structure":
        out: dict[str, Any] = {}
        required = set(shape.required_members)
        for member_name, member in shape.members.items():
            if depth > 6:
                break
            if member_name in required or rng.random() < 0.35:
                out[member_name] = _generate(rng, member, tables, depth + 1)
        return out
    if kind == "list":
        count = _bounded(rng, meta.get("min"), meta.get("max"), 4)
        return [_generate(rng, shape.member, tables, depth + 1) for _ in range(min(count, 120))]
    if kind == "map":
        count = min(_bounded(rng, meta.get("min"), meta.get("max"), 4), 6)
        return {
            str(_generate(rng, shape.key, tables, depth + 1)): _generate(rng, shape.value, tables, depth + 1)
            for _ in range(count)
        }
    if kind == "string":
        if shape.enum:
            return rng.choice([*shape.enum, "BOGUS", ""])
        length = _bounded(rng, meta.get("min"), meta.get("max"), 20)
        return values.sized_text(rng, min(length, 70000))
    if kind in ("integer", "long"):
        return values.long_value(rng, meta.get("min"), meta.get("max"))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "blob":
        return values.blob(rng, rng.randrange(16))
    if kind in ("double", "float"):
        return rng.choice((0.0, 1.5, -1.0, 1e308))
    return None


def from_model(rng: random.Random, operation: str, tables: tuple[Table, ...]) -> dict[str, Any]:
    """A request for ``operation`` built by walking botocore's input shape."""
    shape = _model().operation_model(operation).input_shape
    body = _generate(rng, shape, tables, 0)
    return body if isinstance(body, dict) else {}


_JUNK: tuple[Any, ...] = (None, 0, -1, 1.5, "", "x", True, [], {}, [None], {"": None}, "\u0000", 10**30)


def mutate(rng: random.Random, body: Any, count: int) -> Any:
    """Replace, drop or duplicate ``count`` random nodes of a JSON tree (in place where possible)."""
    for _ in range(count):
        containers: list[Any] = []
        _collect(body, containers, 0)
        if not containers:
            return body
        node = rng.choice(containers)
        if isinstance(node, dict) and node:
            member = rng.choice(list(node))
            roll = rng.random()
            if roll < 0.4:
                del node[member]
            elif roll < 0.8:
                node[member] = copy.deepcopy(rng.choice(_JUNK))
            else:
                node[str(member) + rng.choice(("", "x", "S", "N"))] = node[member]
        elif isinstance(node, list) and node:
            index = rng.randrange(len(node))
            roll = rng.random()
            if roll < 0.4:
                del node[index]
            elif roll < 0.8:
                node[index] = copy.deepcopy(rng.choice(_JUNK))
            else:
                node.append(node[index])
    return body


def _collect(node: Any, out: list[Any], depth: int) -> None:
    if depth > 40 or len(out) > 500:
        return
    if isinstance(node, dict):
        out.append(node)
        for child in node.values():
            _collect(child, out, depth + 1)
    elif isinstance(node, list):
        out.append(node)
        for child in node:
            _collect(child, out, depth + 1)
