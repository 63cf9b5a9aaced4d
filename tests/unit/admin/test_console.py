"""The console's files (admin/console.py) and the paths the protocol hands to the extension for them."""

from __future__ import annotations

import re

import orjson
import pytest

from dynastore.admin import console, routes
from dynastore.protocol.protocol import Protocol, RawResponse, is_extension_path
from tests.unit.api.operations import make_ctx


def test_every_shipped_file_is_found_with_its_type() -> None:
    files = console.files()
    assert {"index.html", "style.css", "js/app.js", "js/api.js", "js/partitions.js"} <= set(files)
    assert all(name.endswith((".html", ".css", ".js")) for name in files)


def test_the_page_loads_only_files_that_exist() -> None:
    """Every module a console file imports and every file index.html names is served (a typo is a 404 in the
    browser, which the browser tests would see only on the pages they open)."""
    files = console.files()
    index = files["index.html"].decode()
    wanted = set(re.findall(r'(?:src|href)="([^":#]+)"', index))
    for name, body in files.items():
        if name.endswith(".js"):
            folder = name.rpartition("/")[0]
            wanted |= {f"{folder}/{m[2:]}" for m in re.findall(r'from "(\./[^"]+)"', body.decode())}
    assert wanted and wanted <= set(files), sorted(wanted - set(files))


@pytest.mark.parametrize(
    ("path", "name", "content_type"),
    [
        ("/console/", "index.html", "text/html; charset=utf-8"),
        ("/console/?x=1", "index.html", "text/html; charset=utf-8"),
        ("/console/style.css", "style.css", "text/css; charset=utf-8"),
        ("/console/js/app.js", "js/app.js", "text/javascript; charset=utf-8"),
    ],
)
def test_a_file_is_served_with_its_type_and_a_strict_policy(path: str, name: str, content_type: str) -> None:
    response = console.serve("GET", path)
    assert (response.status, response.content_type, response.body) == (200, content_type, console.files()[name])
    headers = dict(response.headers)
    assert headers["Content-Security-Policy"].startswith("default-src 'self';")
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_the_bare_path_redirects_so_that_relative_paths_resolve() -> None:
    response = console.serve("GET", "/console")
    assert (response.status, dict(response.headers)["Location"]) == (301, "/console/")


@pytest.mark.parametrize("path", ["/console/nope.js", "/console/js/../../routes.py", "/console/js", "/console/README"])
def test_anything_else_is_not_found(path: str) -> None:
    response = console.serve("GET", path)
    assert (response.status, response.body) == (404, b"no such console file\n")


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "HEAD"])
def test_only_get(method: str) -> None:
    response = console.serve(method, "/console/")
    assert (response.status, dict(response.headers)["Allow"]) == (405, "GET")


@pytest.mark.parametrize(
    ("path", "extension"),
    [
        ("/console", True),
        ("/console/", True),
        ("/console?a=b", True),
        ("/console/js/app.js", True),
        ("/dynastore/clock", True),
        ("/consoles", False),
        ("/console.html", False),
        ("/", False),
        ("/dynastore", False),
    ],
)
def test_which_paths_are_the_extensions(path: str, extension: bool) -> None:
    assert is_extension_path(path) is extension


def test_the_protocol_hands_console_paths_to_the_extension_without_cors() -> None:
    seen: list[str] = []

    def extension(method: str, headers: dict[str, str], path: str, body: bytes) -> RawResponse:
        seen.append(path)
        return console.serve(method, path)

    protocol = Protocol({}, region="eu-west-1", commit_seq=lambda: 0, extension=extension)
    response = protocol.handle("GET", {"origin": "https://elsewhere.example"}, b"", "/console/js/app.js")
    assert (response.status, seen) == (200, ["/console/js/app.js"])
    assert not [name for name, _ in response.headers if name.startswith("Access-Control")]
    other = protocol.handle("GET", {}, b"", "/consoles")
    assert (other.status, other.body, seen) == (404, b"<UnknownOperationException/>\n", ["/console/js/app.js"])


def test_the_admin_routes_serve_the_console_before_their_own_checks() -> None:
    """A GET of a console file needs no JSON content type, and a POST to it is refused as the console's 405."""
    ctx, _, _ = make_ctx()  # a real context (a compiled build checks the type), which the console never reaches
    response = routes.handle(ctx, "GET", {}, "/console/index.html", b"")
    assert (response.status, response.body) == (200, console.files()["index.html"])
    refused = routes.handle(ctx, "POST", {}, "/console/", b"")
    assert refused.status == 405


def test_the_page_learns_whether_its_server_is_a_cluster_node() -> None:
    assert orjson.loads(console.serve("GET", "/console/server.json").body) == {
        "verifies_signatures": False,
        "clustered": False,
    }
    ctx, _, _ = make_ctx()
    answer = routes.handle(ctx, "GET", {}, "/console/server.json", b"", cluster_status=lambda: {"node": "n1"})
    assert orjson.loads(answer.body) == {"verifies_signatures": False, "clustered": True}


def test_the_cluster_endpoint_answers_the_node_s_status_and_only_on_a_cluster_node() -> None:
    ctx, _, _ = make_ctx()
    status = {"node": "n1", "role": "leader", "leader": "n1", "logHead": 7}
    answer = routes.handle(ctx, "GET", {}, "/dynastore/cluster", b"", cluster_status=lambda: status)
    assert (answer.status, orjson.loads(answer.body)) == (200, status)
    posted = routes.handle(
        ctx, "POST", {"content-type": "application/json"}, "/dynastore/cluster", b"{}", cluster_status=lambda: status
    )
    assert (posted.status, orjson.loads(posted.body)) == (405, {"error": "POST is not supported here"})
    alone = routes.handle(ctx, "GET", {}, "/dynastore/cluster", b"")
    assert (alone.status, orjson.loads(alone.body)) == (
        404,
        {"error": "this server is not part of a cluster (it was started without --cluster)"},
    )
