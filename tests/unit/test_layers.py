"""The import layers of ``src/dynastore``: nothing imports a higher layer, and no modules or packages import
each other in a cycle.

Every module is parsed with ``ast`` (nothing is imported) and every import of a dynastore module counts:
module level, inside functions, and inside ``if TYPE_CHECKING:`` blocks (a type-only import is still a
dependency). ``from dynastore.x import y`` is an import of the module ``dynastore.x.y`` when that module exists,
else of ``dynastore.x``; importing a module does not count as importing its parent packages.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src"
ROOT = "dynastore"

# A unit is a subpackage (``dynastore.engine``) or a top-level module (``dynastore.errors``). An import from one
# unit into another is allowed only downwards or sideways: rank(importer) >= rank(imported).
#
# rank  units                                               what they are
# ----  --------------------------------------------------  ------------------------------------------------
#   7   dynastore (package), __main__, cli, server,         entry points: command line, server assembly, the
#       partitions_cli, app, admin, testing, triggers,      lazily imported Server; host-side features, the
#       pytest_plugin, replication                          in-process host and the pytest plugin; a cluster
#                                                           node, which hosts a whole dynastore when it leads
#   6   protocol                                            HTTP, JSON, signing, dispatch to the operations
#   5   api                                                 one module per DynamoDB operation, the Context
#   4   engine, global_tables                               pages, item reads, writes, indexes, transactions, capacity;
#                                                           replicas of tables in other regions
#   3   expressions, partiql                                expression parsing, resolution and evaluation; PartiQL
#                                                           parsing and translation into resolved expressions
#   2   storage, validation                                 the KV and its key layout; request validation
#   1   model                                               table schemas, attribute values, item sizes
#   0   errors, messages, limits, util, config, build_kind  shared by everything
#
# expressions sits above validation because it checks the attribute values and names it resolves with
# validation's rules; storage and validation share a rank and never import each other.
RANKS: dict[str, int] = {
    "dynastore": 7,
    "__main__": 7,
    "cli": 7,
    "server": 7,
    "partitions_cli": 7,
    "app": 7,
    "admin": 7,
    "testing": 7,
    "triggers": 7,
    "pytest_plugin": 7,
    "replication": 7,
    "protocol": 6,
    "api": 5,
    "engine": 4,
    "global_tables": 4,
    "expressions": 3,
    "security": 3,
    "partiql": 3,
    "storage": 2,
    "validation": 2,
    "model": 1,
    "errors": 0,
    "messages": 0,
    "limits": 0,
    "util": 0,
    "config": 0,
    "build_kind": 0,
}

# Accepted exceptions, each "importer -> imported" (modules for layer breaks and module cycles, units for unit
# cycles). There are none, and there should be none: fix the code instead. An entry that no longer occurs fails
# the test too, so the list cannot go stale.
KNOWN_VIOLATIONS: frozenset[str] = frozenset()


# ---------------------------------------------------------------- the import graph


class Import:
    __slots__ = ("importer", "imported", "path", "line")

    def __init__(self, importer: str, imported: str, path: Path, line: int) -> None:
        self.importer = importer
        self.imported = imported
        self.path = path
        self.line = line

    def where(self) -> str:
        return f"{self.path.relative_to(SOURCE.parent)}:{self.line}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SOURCE / ROOT).rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The dynastore module ``name`` names, or its nearest existing parent; None outside dynastore."""
    if name != ROOT and not name.startswith(ROOT + "."):
        return None
    while name not in known:
        name = name.rpartition(".")[0]
    return name


def _imports_of(module: str, path: Path, known: dict[str, Path]) -> Iterator[Import]:
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, known)
                if target is not None:
                    yield Import(module, target, path, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                target = _resolve(f"{base}.{alias.name}", known) if f"{base}.{alias.name}" in known else None
                target = target or _resolve(base, known)
                if target is not None:
                    yield Import(module, target, path, node.lineno)


def imports() -> list[Import]:
    known = modules()
    found = [imp for name, path in known.items() for imp in _imports_of(name, path, known)]
    return [imp for imp in found if imp.importer != imp.imported]


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


# ---------------------------------------------------------------- cycles


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def cycles(edges: list[Import], node: Callable[[str], str]) -> dict[str, list[Import]]:
    """Each cycle of the graph of ``edges`` with modules mapped by ``node``: "a <-> b <-> c" and its imports."""
    graph: dict[str, set[str]] = {}
    for imp in edges:
        a, b = node(imp.importer), node(imp.imported)
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    found = {}
    for component in strongly_connected(graph):
        members = set(component)
        inside = [
            imp
            for imp in edges
            if node(imp.importer) in members
            and node(imp.imported) in members
            and node(imp.importer) != node(imp.imported)
        ]
        found[" <-> ".join(component)] = inside
    return found


# ---------------------------------------------------------------- the checks


def violations() -> dict[str, list[Import]]:
    """Every violation, keyed like KNOWN_VIOLATIONS, with the imports that make it."""
    edges = imports()
    found: dict[str, list[Import]] = {}
    for imp in edges:
        if RANKS[unit_of(imp.importer)] < RANKS[unit_of(imp.imported)]:
            found.setdefault(f"layer: {imp.importer} -> {imp.imported}", []).append(imp)
    for members, inside in cycles(edges, lambda module: module).items():
        found[f"module cycle: {members}"] = inside
    for members, inside in cycles(edges, unit_of).items():
        # the imports that close the cycle: those not going downwards
        closing = [imp for imp in inside if RANKS[unit_of(imp.importer)] <= RANKS[unit_of(imp.imported)]]
        found[f"unit cycle: {members}"] = closing or inside
    return found


def test_every_unit_has_a_rank() -> None:
    units = {unit_of(m) for m in modules()}
    assert units <= set(RANKS), f"give these a rank in RANKS: {sorted(units - set(RANKS))}"


def test_no_new_layer_violations_or_cycles() -> None:
    new = {k: v for k, v in violations().items() if k not in KNOWN_VIOLATIONS}
    lines = [f"{k}  ({', '.join(dict.fromkeys(imp.where() for imp in v))})" for k, v in sorted(new.items())]
    assert not new, "imports against the layers (see RANKS in tests/unit/test_layers.py):\n" + "\n".join(lines)


def test_known_violations_still_exist() -> None:
    gone = KNOWN_VIOLATIONS - set(violations())
    assert not gone, f"fixed, so delete from KNOWN_VIOLATIONS: {sorted(gone)}"


def test_api_reaches_storage_only_through_the_engine() -> None:
    """The engine owns every read and write: an operation's handler never opens the store, encodes a key or
    decodes an item itself (it may name what it needs through ``engine.context.Context``)."""
    direct = [imp.where() for imp in imports() if unit_of(imp.importer) == "api" and unit_of(imp.imported) == "storage"]
    assert not direct, "api/ imports storage/ directly: " + ", ".join(direct)


# Units of the request side that rank below the engine but that the engine never needs: the PartiQL dialect (api/
# translates a statement to the engine's typed calls) and authentication and authorization (api/ and protocol/
# ask them; the engine takes an authorized call).
REQUEST_SIDE = frozenset({"partiql", "security"})


def test_the_engine_imports_nothing_of_the_request_side() -> None:
    """The engine holds only the engine: its components and calls use neither PartiQL nor security (their caches
    and policies are the request side's, api/services.py)."""
    found = [
        f"{imp.imported} ({imp.where()})"
        for imp in imports()
        if unit_of(imp.importer) == "engine" and unit_of(imp.imported) in REQUEST_SIDE
    ]
    assert not found, "engine/ imports the request side: " + ", ".join(found)


# ---------------------------------------------------------------- the checker itself


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_every_kind_of_import_is_seen(tmp_path: Path) -> None:
    known = modules()
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import dynastore.storage.kv\n"
        "from dynastore import messages\n"
        "from dynastore.engine import pages as r\n"
        "from dynastore.errors import ValidationException\n"
        "if TYPE_CHECKING:\n"
        "    from dynastore.api.item_requests import write_condition\n"
        "def f() -> None:\n"
        "    from dynastore.protocol import encoding\n",
        encoding="utf-8",
    )
    found = [(imp.imported, imp.line) for imp in _imports_of("dynastore.model.probe", source, known)]
    assert sorted(found) == [
        ("dynastore.api.item_requests", 7),
        ("dynastore.engine.pages", 4),
        ("dynastore.errors", 5),
        ("dynastore.messages", 3),
        ("dynastore.protocol.encoding", 9),
        ("dynastore.storage.kv", 2),
    ]


@pytest.mark.parametrize(
    ("module", "path_name", "statement", "expected"),
    [
        ("dynastore.engine.pages", "pages.py", "from . import writes", "dynastore.engine.writes"),
        ("dynastore.engine.pages", "pages.py", "from ..storage import kv", "dynastore.storage.kv"),
        ("dynastore.engine", "__init__.py", "from .pages import x", "dynastore.engine.pages"),
    ],
)
def test_relative_imports_resolve(tmp_path: Path, module: str, path_name: str, statement: str, expected: str) -> None:
    source = tmp_path / path_name
    source.write_text(statement + "\n", encoding="utf-8")
    assert [imp.imported for imp in _imports_of(module, source, modules())] == [expected]
