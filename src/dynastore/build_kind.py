"""Whether this installation runs the compiled modules or pure Python.

An install compiles the modules with mypyc when the machine has a C compiler (setup.py); without one it installs
the same package as pure Python. The server says which it runs, so that a slower pure-Python install is never a
mystery.
"""

from __future__ import annotations

import importlib.util

# A module that is always compiled when the package is (it is on the request path: setup.py's COMPILED).
_PROBE = "dynastore.model.values"

PURE_PYTHON_NOTICE = (
    "dynastore: running as pure Python (installed without a C compiler, or with DYNASTORE_PURE_PYTHON=1 or as an "
    "editable install); it works the same with 10-20% more CPU per request"
)


def is_compiled() -> bool:
    spec = importlib.util.find_spec(_PROBE)
    origin = spec.origin if spec is not None else None
    return origin is not None and not origin.endswith(".py")


def build_kind() -> str:
    return "compiled" if is_compiled() else "pure Python"
