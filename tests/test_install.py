"""The install as a newcomer runs it: a new virtual environment and `pip install`, here on a machine whose C compiler
is missing. The compiled install is what .ci/run proves (it runs the README's commands in a new venv, then this
suite against that install: the split between compiled and interpreted modules is checked on it here)."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dynastore
from dynastore.build_kind import PURE_PYTHON_NOTICE, build_kind, is_compiled

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"


def _compiled_by_setup() -> set[str]:
    """setup.py's COMPILED, read without running setup.py (running it would build)."""
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] == ["COMPILED"]:
            assert isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "frozenset"
            return set(ast.literal_eval(node.value.args[0]))
    raise AssertionError("setup.py has no COMPILED")


def _written_in_c() -> set[str]:
    """The modules with a C twin written by hand (dynastore/security/sigv4_hashing.py beside its .c), which setup.py
    builds under the module's name when it compiles."""
    source = ROOT / "src"
    return {path.relative_to(source).with_suffix(".py").as_posix() for path in source.rglob("*.c")}


def _module_name(relative: str) -> str:
    dotted = relative.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def _package_modules() -> list[str]:
    """Every module of the source tree, as setup.py names them (dynastore/engine/writes.py)."""
    source = ROOT / "src"
    return sorted(path.relative_to(source).as_posix() for path in source.rglob("*.py"))


def _is_extension(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return not spec.origin.endswith(".py")


def _imported_names(tree: ast.Module, package: str) -> dict[str, str]:
    """Each name a module imports from dynastore, mapped to what it names (dynastore.errors.DynamoError)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parent = package.split(".")[: len(package.split(".")) - max(node.level - 1, 0)] if node.level else []
            origin = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                names[alias.asname or alias.name] = f"{origin}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name] = alias.name
    return names


def _class_bases() -> list[tuple[str, str, str]]:
    """(module, class, the module defining a base) for every class whose base is a class of the package."""
    source = ROOT / "src"
    modules = {_module_name(relative): relative for relative in _package_modules()}
    trees = {name: ast.parse((source / relative).read_text()) for name, relative in modules.items()}
    classes = {
        f"{name}.{node.name}": name
        for name, tree in trees.items()
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }
    found = []
    for name, tree in trees.items():
        package = name if modules[name].endswith("__init__.py") else name.rpartition(".")[0]
        imported = _imported_names(tree, package)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                head, _, rest = ast.unparse(base).partition(".")
                dotted = f"{imported.get(head, f'{name}.{head}')}{'.' + rest if rest else ''}"
                if dotted in classes:
                    found.append((modules[name], node.name, modules[classes[dotted]]))
    return found


def _copy_project(target: Path) -> None:
    """The files a source install reads, and nothing built before (a stale build/ would be packed again)."""
    for name in ("setup.py", "pyproject.toml", "README.md", "constraints.txt"):
        shutil.copy2(ROOT / name, target / name)
    shutil.copytree(ROOT / "src", target / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info"))


def test_build_kind_matches_the_installed_modules() -> None:
    package = Path(str(dynastore.__file__)).parent
    has_extensions = any(package.rglob("*.so")) or any(package.rglob("*.pyd"))
    assert is_compiled() is has_extensions
    assert build_kind() == ("compiled" if has_extensions else "pure Python")


def test_compiled_modules_are_the_request_path_and_nothing_else() -> None:
    compiled = _compiled_by_setup()
    assert compiled <= set(_package_modules()), sorted(compiled - set(_package_modules()))
    # Where every PutItem, GetItem, Query and BatchWriteItem spends its CPU: compiled.
    for module in (
        "dynastore/protocol/http_server.py",
        "dynastore/api/put_item.py",
        "dynastore/api/query.py",
        "dynastore/api/batch_write_item.py",
        "dynastore/validation/attribute_values.py",
        "dynastore/engine/writes.py",
        "dynastore/engine/item_reads.py",
        "dynastore/engine/capacity/admission.py",
        "dynastore/expressions/evaluate.py",
        "dynastore/storage/lmdb_kv.py",
        "dynastore/model/values.py",  # build_kind's probe
        "dynastore/api/partiql_reads.py",  # a SELECT by key costs what GetItem costs
        "dynastore/partiql/translate.py",
        "dynastore/engine/log_consumers.py",  # a write to a table with a stream
        "dynastore/engine/stream_shards.py",
        "dynastore/storage/wal.py",  # the log's append: every loop turn with a durable write
        "dynastore/storage/syncer.py",
    ):
        assert module in compiled, module
    # Work that runs once or in the background, and code that cannot be compiled: interpreted.
    for module in (
        "dynastore/__init__.py",  # answers attribute look-ups lazily
        "dynastore/cli.py",
        "dynastore/app.py",
        "dynastore/testing.py",
        "dynastore/storage/image_copier.py",  # run with python -m
        "dynastore/engine/backups.py",
        "dynastore/engine/restore.py",
        "dynastore/engine/exports.py",
        "dynastore/engine/imports.py",
        "dynastore/engine/transfers.py",
        "dynastore/api/create_table.py",
        "dynastore/security/policy_documents.py",
        "dynastore/admin/routes.py",
        "dynastore/admin/recovery_cli.py",
        "dynastore/triggers/runner.py",
    ):
        assert module not in compiled, module
    assert not [module for module in compiled if module.startswith(("dynastore/replication/", "dynastore/admin/"))]


def test_the_installed_modules_are_compiled_as_setup_says() -> None:
    """Against the compiled install (CI's) exactly setup.py's COMPILED are extensions; a pure-Python install has
    none."""
    expected = _compiled_by_setup() | _written_in_c() if is_compiled() else set()
    extensions = {module for module in _package_modules() if _is_extension(_module_name(module))}
    assert extensions == expected


def test_each_module_written_in_c_is_built_and_never_compiled_from_python() -> None:
    setup_text = (ROOT / "setup.py").read_text()
    assert _written_in_c() == {"dynastore/security/sigv4_hashing.py", "dynastore/protocol/request_head.py"}
    for module in _written_in_c():
        assert f'Extension("{_module_name(module)}", [str(SOURCE / "{module.removesuffix(".py")}.c")])' in setup_text
        assert module not in _compiled_by_setup()  # one extension per module name


def test_no_class_inherits_across_the_compiled_and_interpreted_modules() -> None:
    """A compiled class is closed to interpreted subclasses, and a class compiled against an interpreted base would
    be a different kind of class in the two builds: a base stays in the same kind of module as its subclasses."""
    compiled = _compiled_by_setup()
    bases = _class_bases()
    assert ("dynastore/errors.py", "ValidationException", "dynastore/errors.py") in bases  # the check sees bases
    crossing = [(module, name, base) for module, name, base in bases if (module in compiled) != (base in compiled)]
    assert crossing == []


@pytest.mark.slow
def test_without_a_c_compiler_the_install_is_pure_python_and_says_so(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _copy_project(project)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["CC"] = str(tmp_path / "no-such-compiler")
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-v", "-c", str(CONSTRAINTS), "."],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    output = install.stdout + install.stderr
    assert install.returncode == 0, output[-3000:]
    notices = [line for line in output.splitlines() if "installing pure Python" in line]
    assert len(notices) == 1, notices
    assert re.search(r"dynastore: no C compiler found \(.*no-such-compiler\); installing pure Python", notices[0])
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert (site / "dynastore" / "model" / "values.py").is_file()
    console = site / "dynastore" / "admin" / "static"  # the web console's files are package data
    assert (console / "index.html").is_file() and (console / "js" / "app.js").is_file()
    assert not list((site / "dynastore").rglob("*.so"))

    version = subprocess.run([str(venv / "bin" / "dynastore"), "--version"], env=env, capture_output=True, text=True)
    assert version.stdout == f"dynastore {dynastore.__version__} (pure Python)\n"

    server = subprocess.Popen(
        [str(venv / "bin" / "dynastore"), "serve", "--port", "0", "--in-memory"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stderr is not None
        assert "listening on http://127.0.0.1:" in server.stdout.readline()
        assert server.stderr.readline().rstrip("\n") == PURE_PYTHON_NOTICE
    finally:
        server.terminate()
        server.communicate(timeout=30)
