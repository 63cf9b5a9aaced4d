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
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, LinkError

SOURCE = Path("src")

# Compiled: the modules that every item request runs through (PutItem, GetItem, Query, Scan, BatchWriteItem,
# BatchGetItem, UpdateItem, DeleteItem, and a PartiQL statement once parsed: ExecuteStatement's SELECT by key is to
# cost what GetItem costs, docs/performance.md "PartiQL key lookups"), from the HTTP connection to storage, and
# nothing else: where a profile of the request benchmark finds the server's CPU (docs/performance.md "Install: only
# the request path compiled"). Left as Python: what runs once, in the background or only on failure (table and backup
# management, exports and imports, PartiQL's parser, transactions, triggers, the console, the commands, replication,
# the error classes, policy evaluation: security/policy_documents.py, policy_evaluation.py, conditions.py):
# about 1% of the package's CPU time under the benchmark, and more than half of the C to compile. A module not
# listed here stays Python, so new code starts interpreted. Never listed: the top package (it answers attribute
# look-ups lazily, which a compiled module cannot), start-up code, modules whose classes tests replace parts of
# (compiled classes are closed), storage/image_copier.py, which runs as a
# program of its own (python -m), and a module with a class that inherits from an interpreted module's class (or
# the other way round: tests/test_install.py checks it).
COMPILED = frozenset(
    {
        "dynastore/build_kind.py",
        "dynastore/api/__init__.py",
        "dynastore/engine/__init__.py",
        "dynastore/engine/capacity/__init__.py",
        "dynastore/expressions/__init__.py",
        "dynastore/model/__init__.py",
        "dynastore/protocol/__init__.py",
        "dynastore/security/__init__.py",
        "dynastore/storage/__init__.py",
        "dynastore/util/__init__.py",
        "dynastore/util/kept_matches.py",
        "dynastore/limits.py",
        "dynastore/protocol/connections.py",
        "dynastore/protocol/cors.py",
        "dynastore/protocol/dispatch.py",
        "dynastore/protocol/encoding.py",
        "dynastore/protocol/hosts.py",
        "dynastore/protocol/http_server.py",
        "dynastore/protocol/metrics.py",
        "dynastore/protocol/prometheus.py",
        "dynastore/protocol/protocol.py",
        "dynastore/protocol/request_log.py",
        "dynastore/protocol/targets.py",
        "dynastore/api/batch_get_item.py",
        "dynastore/api/batch_write_item.py",
        "dynastore/api/consumed_capacity.py",
        "dynastore/api/delete_item.py",
        "dynastore/api/get_item.py",
        "dynastore/api/item_requests.py",
        "dynastore/api/put_item.py",
        "dynastore/api/query.py",
        "dynastore/api/read_requests.py",
        "dynastore/api/scan.py",
        "dynastore/api/update_item.py",
        "dynastore/api/execute_statement.py",  # a parsed statement's request path (PartiQL's parser stays Python)
        "dynastore/api/partiql_reads.py",
        "dynastore/api/partiql_requests.py",
        "dynastore/partiql/__init__.py",
        "dynastore/partiql/translate.py",
        "dynastore/partiql/bind.py",
        "dynastore/partiql/cache.py",
        "dynastore/validation/__init__.py",
        "dynastore/validation/attribute_values.py",
        "dynastore/validation/common.py",
        "dynastore/validation/constraints.py",
        "dynastore/validation/shapes.py",
        "dynastore/validation/typecheck.py",
        "dynastore/engine/changelog.py",
        "dynastore/engine/context.py",
        "dynastore/engine/gsi_propagation.py",
        "dynastore/engine/item_reads.py",
        "dynastore/engine/key_spaces.py",
        "dynastore/engine/keys.py",
        "dynastore/engine/log_consumers.py",  # every write to a table with a stream places its record in a shard
        "dynastore/engine/pages.py",
        "dynastore/engine/shard_index.py",  # a stream read indexes each new record of the log
        "dynastore/engine/stream_shards.py",
        "dynastore/engine/transaction_locks.py",
        "dynastore/engine/writes.py",
        "dynastore/engine/capacity/admission.py",
        "dynastore/engine/capacity/buckets.py",
        "dynastore/engine/capacity/contributors.py",
        "dynastore/engine/capacity/partitions.py",
        "dynastore/engine/capacity/state.py",
        "dynastore/engine/capacity/units.py",
        "dynastore/expressions/ast.py",
        "dynastore/expressions/cache.py",
        "dynastore/expressions/evaluate.py",
        "dynastore/expressions/key_condition.py",
        "dynastore/expressions/projection.py",
        "dynastore/expressions/resolve.py",
        "dynastore/expressions/update.py",
        "dynastore/model/item_size.py",
        "dynastore/model/namespace.py",
        "dynastore/model/table_schema.py",
        "dynastore/model/values.py",
        "dynastore/storage/catalog.py",
        "dynastore/storage/durability.py",
        "dynastore/storage/group_commit.py",
        "dynastore/storage/itemcodec.py",
        "dynastore/storage/keycodec.py",
        "dynastore/storage/keyspace.py",
        "dynastore/storage/kv.py",
        "dynastore/storage/lmdb_kv.py",
        "dynastore/storage/lmdb_layout.py",
        "dynastore/storage/lmdb_log_sync.py",
        "dynastore/storage/lmdb_txn.py",
        "dynastore/storage/local_log.py",
        "dynastore/storage/memory_kv.py",
        # The log's append and the sync helper's hand-off: every loop turn with a durable write runs them.
        "dynastore/storage/syncer.py",
        "dynastore/storage/wal.py",
        "dynastore/security/authenticator.py",
        "dynastore/security/caller.py",
        "dynastore/security/sigv4.py",
        # --auth sigv4: what every authenticated item request runs through (its credentials' and policies' look-up,
        # a kept allow); the evaluation of policies itself stays Python (a decision is kept, docs/performance.md
        # "Authentication").
        "dynastore/security/credentials.py",
        "dynastore/security/identity_policies.py",
        "dynastore/security/authorization.py",
        "dynastore/api/authorization.py",
        "dynastore/util/arn.py",
        "dynastore/util/clock.py",
    }
)

# The setup commands that produce installable code; metadata and editable builds compile nothing.
_BUILDING = {"bdist_wheel", "build", "build_ext", "install"}

_PURE_NOTICE = "dynastore: {why}; installing pure Python (it works the same, with 10-20% more CPU per request)"


def _say_pure(why: str) -> None:
    print(_PURE_NOTICE.format(why=why), file=sys.stderr, flush=True)


def _progress(step: str) -> None:
    """One line per step of the compile (pip shows them with -v), so that a long build never looks hung."""
    print(f"dynastore: {step}", file=sys.stderr, flush=True)


def _compiled_modules() -> list[str]:
    missing = sorted(name for name in COMPILED if not (SOURCE / name).is_file())
    if missing:  # a module renamed or removed: it would silently stop being compiled
        raise SystemExit(f"setup.py: COMPILED names modules that do not exist: {', '.join(missing)}")
    return [str(SOURCE / name) for name in sorted(COMPILED)]


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

        if len(pending) > 1:  # the shared library (a module's own extension is one file, counted apart)
            _progress(f"compiling {len(pending)} C files on {workers} cores")
        with ThreadPoolExecutor(max_workers=workers) as pool:
            running = [pool.submit(compile_one, obj) for obj in pending]
            for done, future in enumerate(as_completed(running), start=1):
                future.result()
                if len(pending) > 1:
                    _progress(f"compiled {done}/{len(pending)} C files")
        return list(objects)

    return compile_sources


class _FallbackBuildExt(build_ext):
    """Builds the compiled modules on every core, and falls back to the pure-Python package when the C build
    fails (the .py files are in the wheel either way, so removing the half-built extensions is enough)."""

    def build_extensions(self) -> None:
        workers = os.cpu_count() or 1
        if hasattr(self.compiler, "_setup_compile") and hasattr(self.compiler, "_compile"):
            self.compiler.compile = _compile_in_parallel(self.compiler, workers)
        # Besides the C files of the one shared library, mypyc makes a small extension per compiled module that
        # only points Python's import at that library: built one after another they took 12 of the 28 minutes
        # of a build of every module on a busy machine. setuptools builds extensions in parallel when asked; the
        # shared library goes first, being the longest.
        self.parallel = workers
        self.extensions.sort(key=lambda extension: -len(extension.sources))
        self._built = 0
        self._counting = threading.Lock()
        try:
            super().build_extensions()
        except (CCompilerError, CompileError, LinkError, OSError) as error:
            for extension in self.extensions:
                Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)
            _say_pure(f"the C build failed ({type(error).__name__}: {error})")

    def build_extension(self, ext: Any) -> None:
        super().build_extension(ext)  # compiles nothing when an earlier build in build/ is up to date
        with self._counting:
            self._built += 1
            _progress(f"{self._built}/{len(self.extensions)} extension modules ready ({ext.name})")


def _extensions() -> list[object]:
    if os.environ.get("DYNASTORE_PURE_PYTHON") or not _BUILDING.intersection(sys.argv[1:]):
        return []
    problem = _compiler_problem()
    if problem is not None:
        _say_pure(problem)
        return []
    from mypyc.build import mypycify

    modules = _compiled_modules()
    _progress(f"compiling the {len(modules)} modules of the request path with mypyc: type check and C code first")
    started = time.monotonic()
    # One group: calls between modules stay direct C calls. One C file per module (multi_file) so that every core
    # compiles; a single C file built on one core took about 1.5x as long for no measurable gain per request.
    extensions = mypycify(
        ["--config-file", "pyproject.toml", *modules],
        opt_level="3",
        debug_level="0",
        multi_file=True,
    )
    _progress(f"type-checked and wrote the C code in {time.monotonic() - started:.0f} s")
    return [*extensions, *_HAND_WRITTEN]


# Modules written in C by hand, each beside the .py of the same name and results that serves without a compiler
# (Python imports the extension first). SigV4's hashing: mypyc compiles Python, whose hashlib makes an object and
# an OpenSSL context copy per step of the four digests a signed request needs. The common request's head: read
# in one loop over its bytes, where compiled string methods cost more than the parser's callbacks they replace
# (docs/performance.md).
_HAND_WRITTEN = [
    Extension("dynastore.security.sigv4_hashing", [str(SOURCE / "dynastore/security/sigv4_hashing.c")]),
    Extension("dynastore.protocol.request_head", [str(SOURCE / "dynastore/protocol/request_head.c")]),
]


setup(ext_modules=_extensions(), cmdclass={"build_ext": _FallbackBuildExt})
