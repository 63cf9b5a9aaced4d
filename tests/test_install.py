"""The install as a newcomer runs it: a new virtual environment and `pip install`, here on a machine whose C compiler
is missing. The compiled install is what .ci/run proves (it runs the README's commands in a new venv)."""

from __future__ import annotations

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
