"""The web console's files (``/console/``): static HTML, CSS and ES modules shipped in ``admin/static/``.

The page talks to the server it came from: DynamoDB's JSON API at ``POST /`` and the admin endpoints under
``/dynastore/`` (admin/routes.py), so it needs nothing of its own on the server beyond these files. They are read
once, on first request, and kept: a console is a handful of small files. Every answer forbids framing and
foreign scripts (the page may only load its own files and call its own origin), and ``/console`` redirects to
``/console/`` so that the page's relative module paths resolve.

``/console/server.json`` says what the page must know of the server before it calls anything:
``{"verifies_signatures": true}`` on a server with ``--auth sigv4`` (the page then offers to sign in), false
otherwise, and ``"clustered"``: true on a cluster node (the page then shows its Cluster page). Like the files, it
is served without a signature: an unsigned request would learn as much from its refusal.
"""

from __future__ import annotations

from importlib import resources

import orjson

from dynastore.protocol.protocol import CONSOLE_PREFIX, RawResponse

__all__ = ["files", "serve"]

_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
}
_SECURITY_HEADERS = (
    ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
)
_files: dict[str, bytes] | None = None
SERVER_FILE = "server.json"


def serve(method: str, path: str, verifies_signatures: bool = False, clustered: bool = False) -> RawResponse:
    """The console file ``path`` names (``/console/`` is ``index.html``), or ``server.json``; 404 for anything
    else."""
    if method != "GET":
        return _text(405, f"{method} is not supported here\n", [("Allow", "GET")])
    name = path.split("?", 1)[0][len(CONSOLE_PREFIX) :]
    if name == "":
        return _text(301, "see /console/\n", [("Location", CONSOLE_PREFIX + "/")])
    name = name.lstrip("/") or "index.html"
    if name == SERVER_FILE:
        answer = orjson.dumps({"verifies_signatures": verifies_signatures, "clustered": clustered})
        return RawResponse(200, answer, "application/json", list(_SECURITY_HEADERS))
    body = files().get(name)
    content_type = _CONTENT_TYPES.get(name[name.rfind(".") :]) if "." in name else None
    if body is None or content_type is None:
        return _text(404, "no such console file\n")
    return RawResponse(200, body, content_type, list(_SECURITY_HEADERS))


def files() -> dict[str, bytes]:
    """Every console file by its path under ``admin/static/`` (``index.html``, ``js/app.js``, ...)."""
    global _files
    if _files is None:
        found: dict[str, bytes] = {}
        _collect(resources.files("dynastore.admin").joinpath("static"), "", found)
        _files = found
    return _files


def _collect(folder: resources.abc.Traversable, prefix: str, found: dict[str, bytes]) -> None:
    for entry in folder.iterdir():
        if entry.is_dir():
            _collect(entry, f"{prefix}{entry.name}/", found)
        elif entry.name[entry.name.rfind(".") :] in _CONTENT_TYPES:
            found[prefix + entry.name] = entry.read_bytes()


def _text(status: int, text: str, headers: list[tuple[str, str]] | None = None) -> RawResponse:
    return RawResponse(status, text.encode(), "text/plain; charset=utf-8", headers)
