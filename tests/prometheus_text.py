"""A strict reader of the Prometheus text format (0.0.4) for tests: every sample must follow its family's HELP
and TYPE lines, names and labels must be well formed, and each series appears once."""

from __future__ import annotations

import re

_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')
_SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count", ""), "counter": ("",)}

Series = tuple[str, tuple[tuple[str, str], ...]]


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def _labels(text: str | None) -> tuple[tuple[str, str], ...]:
    if not text:
        return ()
    out = []
    position = 0
    while position < len(text):
        m = _LABEL.match(text, position)
        assert m is not None, f"bad labels: {text!r}"
        out.append((m.group(1), _unescape(m.group(2))))
        position = m.end()
    return tuple(sorted(out))


def parse(page: str) -> tuple[dict[Series, float], dict[str, str]]:
    """(value of each series, type of each family)."""
    assert page.endswith("\n")
    types: dict[str, str] = {}
    helped: set[str] = set()
    values: dict[Series, float] = {}
    family = ""
    for line in page.splitlines():
        if line.startswith("# HELP "):
            family = line.split()[2]
            assert family not in helped, f"two HELP lines for {family}"
            helped.add(family)
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert name == family and name not in types, line
            assert kind in ("counter", "gauge", "histogram", "summary"), line
            types[name] = kind
        else:
            m = _SAMPLE.fullmatch(line)
            assert m is not None, f"bad sample line: {line!r}"
            name = m.group(1)
            suffixes = _SUFFIXES.get(types.get(family, ""), ("",))
            assert any(name == family + s for s in suffixes), f"{name} outside its family {family}"
            series = (name, _labels(m.group(2)))
            assert series not in values, f"series twice: {series}"
            values[series] = float(m.group(3))
    return values, types


def value(values: dict[Series, float], name: str, **labels: str) -> float:
    return values[(name, tuple(sorted(labels.items())))]
