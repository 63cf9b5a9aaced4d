"""The two forms of a module written in C by hand (docs/design.md, "Compiled modules"), for the tests that hold
them to the same results: the C file compiled here from the source tree, as setup.py builds it (so a checkout that
runs the Python forms tests the C ones too), and the .py loaded as it is, whichever of the two is installed."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import shlex
import shutil
import subprocess
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src" / "dynastore"


def _load(name: str, path: Path, loader: Any) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def compiled_here(relative: str, directory: Path) -> ModuleType:
    """``src/dynastore/<relative>.c`` built into ``directory`` with the compiler Python was built with (skips the
    test where there is none: the C twin is never built there, the Python module serves)."""
    command = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if shutil.which(command[0]) is None:
        pytest.skip("no C compiler: the C twin is never built on this machine, the Python module serves")
    name = Path(relative).name
    target = directory / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    flags = shlex.split(sysconfig.get_config_var("CFLAGS") or "")
    include = sysconfig.get_paths()["include"]
    source = SOURCE / f"{relative}.c"
    subprocess.run(
        [*command, *flags, "-Werror", "-shared", "-fPIC", "-I", include, str(source), "-o", str(target)], check=True
    )
    return _load(name, target, importlib.machinery.ExtensionFileLoader(name, str(target)))


def in_python(relative: str) -> ModuleType:
    """``src/dynastore/<relative>.py`` loaded as Python, under a name of its own."""
    name = Path(relative).name + "_in_python"
    path = SOURCE / f"{relative}.py"
    return _load(name, path, importlib.machinery.SourceFileLoader(name, str(path)))
