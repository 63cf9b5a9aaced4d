"""Build: a wheel compiles dynastore's modules to C extensions with mypyc (the code is mypy --strict typed).

Compiled, the server spends about a tenth less CPU per request (docs/performance.md). Editable installs stay
pure Python so that an edit takes effect without a rebuild, and DYNASTORE_PURE_PYTHON=1 skips compiling anywhere
(a machine without a C compiler). Either way the package behaves the same: CI runs the tests against the
compiled wheel, a developer's editable checkout against the interpreted code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup

SOURCE = Path("src")

# Left as Python: the top package (it answers attribute look-ups lazily, which a compiled module cannot),
# start-up code that runs once, and modules whose classes tests replace parts of (compiled classes are closed).
INTERPRETED = {
    "dynastore/__init__.py",
    "dynastore/__main__.py",
    "dynastore/cli.py",
    "dynastore/partitions_cli.py",
    "dynastore/server.py",
    "dynastore/storage/syncer.py",
    "dynastore/storage/wal.py",
}

# The setup commands that produce installable code; metadata and editable builds compile nothing.
_BUILDING = {"bdist_wheel", "build", "build_ext", "install"}


def _compiled_modules() -> list[str]:
    modules = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        if relative not in INTERPRETED:
            modules.append(str(path))
    return modules


def _extensions() -> list[object]:
    if os.environ.get("DYNASTORE_PURE_PYTHON") or not _BUILDING.intersection(sys.argv[1:]):
        return []
    from mypyc.build import mypycify

    # One C file for all modules: calls between them are then direct C calls (compiling each module on its own
    # builds faster on several cores but gave back about half of the gain).
    return list(mypycify(["--config-file", "pyproject.toml", *_compiled_modules()], opt_level="3", debug_level="0"))


setup(ext_modules=_extensions())
