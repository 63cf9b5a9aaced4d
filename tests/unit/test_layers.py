"""The layering rule: protocol / admin -> api -> engine -> storage / expressions / validation -> model / util.

Nothing imports upward, so every DynamoDB wire shape (built in api/) stays out of the engine and below, and a
lower layer can be used (and compiled, tested) without the ones above it. Imports inside functions and under
``TYPE_CHECKING`` count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dynastore

SOURCE = Path(dynastore.__file__).parent

# A package's rank: its modules may import packages of the same or a lower rank only. The top-level modules
# (app.py the composition root, server.py, cli.py) come above every package.
RANKS = {
    "model": 0,
    "util": 0,
    "storage": 1,
    "expressions": 1,
    "validation": 1,
    "engine": 2,
    "api": 3,
    "protocol": 4,
    "admin": 4,
}
TOP = {"app": 5, "server": 5, "cli": 5, "__main__": 5}


def _imported(path: Path) -> set[str]:
    """The dynastore packages and top-level modules ``path`` imports (first name after ``dynastore.``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            names = [node.module]
            if node.module == "dynastore":
                names = [f"dynastore.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "dynastore" and len(parts) > 1:
                found.add(parts[1])
    return found


def _modules() -> list[tuple[str, Path]]:
    return [(package, path) for package in RANKS for path in sorted((SOURCE / package).rglob("*.py"))]


@pytest.mark.parametrize(("package", "path"), _modules(), ids=lambda value: str(value))
def test_nothing_imports_upward(package: str, path: Path) -> None:
    rank = RANKS[package]
    upward = sorted(name for name in _imported(path) if RANKS.get(name, TOP.get(name, -1)) > rank)
    assert upward == [], f"{path.relative_to(SOURCE)} ({package}) imports {upward}"


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from dynastore.api import x\nimport dynastore.engine.reads\nfrom dynastore import app\n"
        "def f():\n    from dynastore.protocol import y\n"
    )
    assert _imported(module) == {"api", "engine", "app", "protocol"}
