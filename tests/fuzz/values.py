"""Limit-aware generators of AttributeValues, attribute names, numbers and key values.

Every generator takes a ``random.Random`` so a run is reproducible from its seed. Values are chosen at and just
past DynamoDB's limits (docs/operations.md "Limits"): numbers' 38 digits and exponent range, key sizes, name
sizes, nesting depth, set rules.
"""

from __future__ import annotations

import base64
import random
from typing import Any

from dynastore import limits

AV = dict[str, Any]

# Characters of 1, 2, 3 and 4 UTF-8 bytes: sizes are counted in bytes, so limits are probed with each.
WIDE_CHARS = ("a", "é", "€", "😀")


def sized_text(rng: random.Random, size_bytes: int) -> str:
    """A string of about ``size_bytes`` UTF-8 bytes, exactly that many when it is made of one kind of character."""
    char = rng.choice(WIDE_CHARS)
    width = len(char.encode())
    text = char * (size_bytes // width)
    return text + "a" * (size_bytes - len(text.encode()))


def around(rng: random.Random, limit: int) -> int:
    """A size at, just under or just past ``limit`` (sometimes 0 or far past it)."""
    return max(0, rng.choice((limit - 1, limit, limit, limit + 1, limit + 1, 0, 1, limit * 2 + rng.randrange(9))))


# Where a JSON number stops fitting DynamoDB's Integer and Long members (Java's int and long) and the fuzzed
# server's own 64-bit fields: at, just under and just past each.
WIDTH_EDGES = (2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30)


def long_value(rng: random.Random, low: int | None = None, high: int | None = None) -> Any:
    """A number for an Integer or Long member: at and just past its own bounds (``low`` / ``high``), at and past
    every width edge (both signs), small ones, and sometimes a fraction."""
    edges: list[Any] = [0, 1, -1, rng.randrange(100)]
    for bound in (low, high):
        if bound is not None:
            edges += [bound - 1, bound, bound + 1]
    edge = rng.choice(WIDTH_EDGES)
    edges += [edge, -edge, -edge - 1]
    value = rng.choice(edges)
    return value + 0.5 if rng.random() < 0.03 else value


def attribute_name(rng: random.Random) -> Any:
    """Mostly ordinary names; sometimes empty, at 65,535 bytes, just past it, or not a string."""
    roll = rng.random()
    if roll < 0.9:
        return rng.choice(("a", "b", "c", "attr", "x.y", "#n", ":v", "ünï", "n" * rng.randrange(1, 40)))
    if roll < 0.95:
        return ""
    if roll < 0.97:
        return sized_text(rng, around(rng, limits.MAX_ATTRIBUTE_NAME_BYTES))
    return rng.choice(("\u0000", " ", "😀" * 16384))


def number_text(rng: random.Random) -> Any:
    """Numbers around DynamoDB's range (1E-130 .. 9.99E+125) and 38 significant digits, and malformed ones."""
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(
            ("", "-", ".", "e5", "1e", "1e+", "--1", "+1", "1.2.3", "abc", "NaN", "Infinity", " 1", "1 ", "0x10")
        )
    if roll < 0.07:
        return rng.choice((1, 1.5, None, True, [], {}))
    digits = "".join(rng.choice("0123456789") for _ in range(around(rng, limits.NUMBER_MAX_DIGITS) or 1))
    sign = rng.choice(("", "", "-", "+"))
    if rng.random() < 0.3:
        point = rng.randrange(len(digits) + 1)
        digits = digits[:point] + "." + digits[point:]
        if digits == ".":
            digits = "0."
    if rng.random() < 0.6:
        exponent = rng.choice(
            (
                limits.NUMBER_MAX_EXPONENT,
                limits.NUMBER_MAX_EXPONENT + 1,
                limits.NUMBER_MIN_EXPONENT,
                limits.NUMBER_MIN_EXPONENT - 1,
                -limits.NUMBER_MAX_DIGITS - 130,
                100000000,
                -100000000,
                10**20,
                -(10**20),
                rng.randrange(-200, 200),
            )
        )
        mark = rng.choice(("e", "E"))
        padding = "0" * rng.choice((0, 0, 0, 0, 0, 0, 5, 5000))
        exponent_text = ("-" if exponent < 0 else rng.choice(("", "+"))) + padding + str(abs(exponent))
        return sign + digits + mark + exponent_text
    return sign + digits


def blob(rng: random.Random, size: int) -> str:
    return base64.b64encode(bytes(rng.randrange(256) for _ in range(min(size, 64))) * (size // 64 + 1))[
        : ((size + 2) // 3) * 4
    ].decode()


def scalar(rng: random.Random, depth: int = 0) -> AV:
    kind = rng.choice(("S", "N", "B", "BOOL", "NULL"))
    if kind == "S":
        return {"S": rng.choice(("", "x", "hello", sized_text(rng, rng.randrange(64))))}
    if kind == "N":
        return {"N": number_text(rng)}
    if kind == "B":
        return {"B": blob(rng, rng.randrange(32))}
    if kind == "BOOL":
        return {"BOOL": rng.random() < 0.5}
    return {"NULL": rng.random() < 0.9}


def attribute_value(rng: random.Random, depth: int = 0) -> Any:
    """Any AttributeValue, sometimes malformed (empty, several types, bad sets, deep nesting, wrong JSON types)."""
    roll = rng.random()
    if roll < 0.5 or depth > 3:
        return scalar(rng)
    if roll < 0.6:
        return {"L": [attribute_value(rng, depth + 1) for _ in range(rng.randrange(4))]}
    if roll < 0.7:
        return {"M": {attribute_name(rng): attribute_value(rng, depth + 1) for _ in range(rng.randrange(4))}}
    if roll < 0.8:
        kind = rng.choice(("SS", "NS", "BS"))
        count = rng.choice((0, 1, 2, 3, 100))
        if kind == "SS":
            members: list[Any] = [rng.choice(("a", "b", "", "c" * rng.randrange(5))) for _ in range(count)]
        elif kind == "NS":
            members = [number_text(rng) for _ in range(count)]
        else:
            members = [blob(rng, rng.randrange(4)) for _ in range(count)]
        if members and rng.random() < 0.1:
            members.append(None)
        return {kind: members}
    if roll < 0.85:
        return nested(rng, around(rng, limits.MAX_NESTING_DEPTH))
    if roll < 0.95:
        return scalar(rng)
    if roll < 0.98:
        return rng.choice(({}, {"S": "a", "N": "1"}, {"X": "y"}, {"S": None}, {"L": {}}, {"M": []}, {"NULL": False}))
    return rng.choice((None, "a", 1, [], True, {"S": 1}, {"N": 1}, {"B": "!!"}, {"BOOL": "x"}))


def nested(rng: random.Random, depth: int) -> AV:
    """A value nested ``depth`` levels deep (DynamoDB allows 32)."""
    value: AV = scalar(rng)
    for _ in range(depth):
        value = {"L": [value]} if rng.random() < 0.5 else {"M": {"k": value}}
    return value


def nested_maps(depth: int) -> AV:
    """Maps nested ``depth`` levels under the key "k": a shape updates can reach with ``deep.k.k...``."""
    value: AV = {"N": "1"}
    for _ in range(depth):
        value = {"M": {"k": value}}
    return value


def key_value(rng: random.Random, kind: str, limit: int) -> Any:
    """A key value of type ``kind`` ("S", "N" or "B"): valid, empty, at or past ``limit`` bytes, or mistyped."""
    roll = rng.random()
    if roll < 0.75:
        if kind == "S":
            return {"S": rng.choice(("k1", "k2", "k3", "key", "ü"))}
        if kind == "N":
            return {"N": rng.choice(("1", "2", "3", "-7", "3.14"))}
        return {"B": rng.choice(("AQ==", "AgM=", "BAUG"))}
    if roll < 0.92:
        size = around(rng, limit)
        if kind == "S":
            return {"S": sized_text(rng, size)}
        if kind == "N":
            return {"N": number_text(rng)}
        return {"B": blob(rng, size)}
    if roll < 0.97:
        return attribute_value(rng)
    return {"S": ""} if kind != "S" else {"N": "1"}
