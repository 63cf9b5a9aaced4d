"""Build: a wheel compiles dynastore's modules to C extensions with mypyc (the code is mypy --strict typed).

Compiled, the server spends about a tenth less CPU per request (docs/performance.md). Editable installs stay
pure Python so that an edit takes effect without a rebuild, and DYNASTORE_PURE_PYTHON=1 skips compiling anywhere.
A machine without a working C compiler (or without Python's headers) gets the pure-Python package too, with one
line saying so: the install never fails for want of a compiler. Either way the package behaves the same: CI runs
the tests against the compiled wheel, a developer's editable checkout against the interpreted code.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, LinkError

SOURCE = Path("src")

# Left as Python: the top package (it answers attribute look-ups lazily, which a compiled module cannot),
# start-up code that runs once, and modules whose classes tests replace parts of (compiled classes are closed).
INTERPRETED = {
    "dynastore/__init__.py",
    "dynastore/__main__.py",
    "dynastore/cli.py",
    "dynastore/admin/partitions_cli.py",
    "dynastore/admin/policies_cli.py",
    "dynastore/app.py",
    "dynastore/server.py",
    "dynastore/testing.py",  # test aids: botocore and pytest inspect and call their functions as Python's
    "dynastore/pytest_plugin.py",
    "dynastore/storage/syncer.py",
    "dynastore/storage/wal.py",
    "dynastore/security/users.py",  # dynastore users: command-line code that runs once
    "dynastore/security/users_cli.py",
    "dynastore/storage/image_copier.py",  # run as a program of its own (python -m): a compiled module cannot be
    "dynastore/admin/recovery_cli.py",  # dynastore backup / restore: command-line code that runs once
    "dynastore/admin/transfers_cli.py",  # dynastore export / import: the same
    "dynastore/admin/streams_cli.py",  # dynastore streams tail: the same (its help is its module's docstring)
    "dynastore/admin/api_clients.py",  # the boto3 clients of those commands
}
# Packages kept whole as Python: a cluster node's replication (docs/cluster.md) runs beside the request path,
# and talks to etcd through a library without type information.
INTERPRETED_PACKAGES = ("dynastore/replication/",)

# The setup commands that produce installable code; metadata and editable builds compile nothing.
_BUILDING = {"bdist_wheel", "build", "build_ext", "install"}

_PURE_NOTICE = "dynastore: {why}; installing pure Python (it works the same, with 10-20% more CPU per request)"


def _say_pure(why: str) -> None:
    print(_PURE_NOTICE.format(why=why), file=sys.stderr, flush=True)


def _compiled_modules() -> list[str]:
    modules = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        if relative not in INTERPRETED and not relative.startswith(INTERPRETED_PACKAGES):
            modules.append(str(path))
    return modules


def _compiler_problem() -> str | None:
    """Why this machine cannot compile a C extension for this Python, or None when it can.

    Checked before mypyc runs, so that a machine without a compiler does not spend half a minute type-checking
    for nothing. Only POSIX compilers are probed here; anywhere else the build itself is the test (see
    _FallbackBuildExt).
    """
    if os.name != "posix":
        return None
    command = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if not command or shutil.which(command[0]) is None:
        return f"no C compiler found ({' '.join(command) or 'CC is empty'})"
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch, "probe.c")
        probe.write_text("#include <Python.h>\nint dynastore_probe(void) { return Py_IsInitialized(); }\n")
        include = sysconfig.get_paths()["include"]
        result = subprocess.run(
            [*command, "-c", str(probe), "-I", include, "-o", str(Path(scratch, "probe.o"))],
            capture_output=True,
            check=False,
        )
    if result.returncode != 0:
        return f"the C compiler ({command[0]}) cannot build against Python's headers ({include})"
    return None


def _compile_in_parallel(compiler: Any, workers: int) -> Callable[..., list[str]]:
    """The compiler's compile(), with one process per core: mypyc writes one C file per module (multi-file mode)
    and the stock compile() builds them one after another."""

    def compile_sources(
        sources: Sequence[str],
        output_dir: str | None = None,
        macros: Any = None,
        include_dirs: Any = None,
        debug: bool = False,
        extra_preargs: Any = None,
        extra_postargs: Any = None,
        depends: Any = None,
    ) -> list[str]:
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs
        )
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
        # The largest files first, so that no core is left with one big file at the end.
        pending = sorted((obj for obj in objects if obj in build), key=lambda obj: -os.path.getsize(build[obj][0]))

        def compile_one(obj: str) -> None:
            source, extension = build[obj]
            compiler._compile(obj, source, extension, cc_args, extra_postargs, pp_opts)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for _ in pool.map(compile_one, pending):
                pass
        return list(objects)

    return compile_sources


class _FallbackBuildExt(build_ext):
    """Builds the compiled modules on every core, and falls back to the pure-Python package when the C build
    fails (the .py files are in the wheel either way, so removing the half-built extensions is enough)."""

    def build_extensions(self) -> None:
        workers = os.cpu_count() or 1
        if hasattr(self.compiler, "_setup_compile") and hasattr(self.compiler, "_compile"):
            self.compiler.compile = _compile_in_parallel(self.compiler, workers)
        try:
            super().build_extensions()
        except (CCompilerError, CompileError, LinkError, OSError) as error:
            for extension in self.extensions:
                Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)
            _say_pure(f"the C build failed ({type(error).__name__}: {error})")


def _extensions() -> list[object]:
    if os.environ.get("DYNASTORE_PURE_PYTHON") or not _BUILDING.intersection(sys.argv[1:]):
        return []
    problem = _compiler_problem()
    if problem is not None:
        _say_pure(problem)
        return []
    from mypyc.build import mypycify

    # One group: calls between modules stay direct C calls. One C file per module (multi_file) so that every core
    # compiles; a single C file built on one core took about 1.5x as long for no measurable gain per request.
    return list(
        mypycify(
            ["--config-file", "pyproject.toml", *_compiled_modules()],
            opt_level="3",
            debug_level="0",
            multi_file=True,
        )
    )


setup(ext_modules=_extensions(), cmdclass={"build_ext": _FallbackBuildExt})
