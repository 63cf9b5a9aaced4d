"""The `dynastore` command as a newcomer meets it: --version, serve --help, and starts that fail (a port in use, a
data directory that cannot be made) as one line on stderr that leaves nothing behind."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import dynastore
from dynastore.build_kind import build_kind
from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess, server_fixture


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DYNASTORE_")}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, env=environ, cwd=cwd, timeout=60
    )


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_version_is_the_package_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout == f"dynastore {dynastore.__version__} ({build_kind()})\n"  # compiled or pure Python
    assert dynastore.__version__ == importlib.metadata.version("dynastore")


def _option_help(help_text: str) -> dict[str, str]:
    """--flag -> its help text on one line."""
    options = help_text.split("options:", 1)[1]
    out = {}
    for chunk in re.split(r"\n  (?=-)", options)[1:]:
        flag = chunk.split()[0].rstrip(",")
        out[flag] = " ".join(chunk.split())
    return out


def test_serve_help_shows_every_default_and_its_environment_variable() -> None:
    env = {
        "COLUMNS": "200",
        "DYNASTORE_PORT": "9123",
        "DYNASTORE_IN_MEMORY": "1",
        "DYNASTORE_CAPACITY": "report",
        "DYNASTORE_ADAPTIVE_DELAY": "12.5",
        "DYNASTORE_ALLOWED_HOSTS": "db.example, dev.example",
    }
    result = run("serve", "--help", env=env)
    assert result.returncode == 0
    options = _option_help(result.stdout)
    expected = {
        "--host": "127.0.0.1",
        "--port": "9123",
        "--data-dir": "dynastore-data",
        "--in-memory": "on",
        "--crash-safe": "off",
        "--disk-reserve": str(32 * 1024**2),
        "--region": "us-east-1",
        "--shared-namespace": "off",
        "--create-table-delay": "0",
        "--update-table-delay": "0",
        "--delete-table-delay": "0",
        "--transaction-lock-hold": "0",
        "--capacity": "report",
        "--partition-size-limit": str(10 * 1024**3),
        "--partition-max-rcu": "3000",
        "--partition-max-wcu": "1000",
        "--adaptive-delay": "12.5",
        "--manual-clock": "off",
        "--item-collection-size-limit": str(10 * 1024**3),
        "--gsi-propagation-delay": "0",
        "--gsi-backfill-interval": "0",
        "--gsi-backfill-chunk": "256",
        "--log-requests": "off",
        "--log-format": "text",
        "--max-header-bytes": "16384",
        "--max-url-bytes": "8192",
        "--idle-timeout": "60",
        "--header-timeout": "10",
        "--body-timeout": "60",
        "--max-connections": "4096",
        "--reserved-descriptors": "64",
        "--max-buffered-request-bytes": str(256 * 1024**2),
        "--write-buffer-bytes": str(1024**2),
        "--shutdown-grace": "5",
        "--trigger": "none",
        "--triggers-file": "none",
        "--no-metrics": "off",
        "--metrics-port": "none",
        "--policies-file": "none",
        "--auth": "none",
        "--users-file": "none",
        "--tls-cert": "none",
        "--tls-key": "none",
        "--allowed-hosts": "db.example,dev.example",
        # export and import's buckets (docs/backups.md "Export and import")
        "--s3-endpoint-url": "none",
        "--s3-root": "none",
        "--s3-region": "none",
        "--s3-access-key-id": "none",
        # a replicated node (docs/cluster.md)
        "--cluster": "none",
        "--node-name": "none",
        "--advertise-url": "none",
        # global tables (docs/global-tables.md)
        "--tombstone-retention-seconds": "86400",
        "--peer": "none",
        "--strong-etcd": "none",
    }
    assert set(options) == {"-h", *expected}
    for flag, default in expected.items():
        # --trigger is repeatable; its variable holds a JSON array of them
        plural = {"--trigger": "DYNASTORE_TRIGGERS", "--peer": "DYNASTORE_PEERS"}
        env_name = plural.get(flag) or "DYNASTORE_" + flag[2:].upper().replace("-", "_")
        switch = "=1" if default in ("on", "off") else ""
        assert f"(default: {default}; {env_name}{switch})" in options[flag], options[flag]


def test_a_port_in_use_is_one_line_and_creates_nothing(tmp_path: Path, taken_port: int) -> None:
    data = tmp_path / "data"
    result = run("serve", "--port", str(taken_port), "--data-dir", str(data), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"dynastore: error: cannot listen on 127.0.0.1:{taken_port}: Address already in use\n"
    assert list(tmp_path.iterdir()) == []


def test_a_port_taken_from_the_environment_is_reported_too(tmp_path: Path, taken_port: int) -> None:
    result = run("serve", cwd=tmp_path, env={"DYNASTORE_PORT": str(taken_port)})
    assert result.returncode == 1
    assert result.stderr == f"dynastore: error: cannot listen on 127.0.0.1:{taken_port}: Address already in use\n"
    assert list(tmp_path.iterdir()) == []  # not even the default ./dynastore-data


def test_a_metrics_port_in_use_is_one_line_and_creates_nothing(tmp_path: Path, taken_port: int) -> None:
    result = run("serve", "--port", "0", "--metrics-port", str(taken_port), "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"dynastore: error: cannot listen on 127.0.0.1:{taken_port}: Address already in use\n"
    assert list(tmp_path.iterdir()) == []


def test_a_data_directory_under_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = run("serve", "--port", "0", "--data-dir", str(tmp_path / "file" / "data"))
    assert result.returncode == 1
    assert result.stdout == ""
    assert (
        result.stderr == f"dynastore: error: cannot create the data directory {tmp_path}/file/data: Not a directory\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_a_data_directory_the_system_refuses_is_one_line() -> None:
    # /sys refuses new directories to every user, root included (a chmod would not stop root).
    result = run("serve", "--port", "0", "--data-dir", "/sys/dynastore-test/data")
    assert result.returncode == 1
    assert result.stdout == ""
    assert re.fullmatch(
        r"dynastore: error: cannot create the data directory /sys/dynastore-test/data: .+\n", result.stderr
    )
    assert not os.path.exists("/sys/dynastore-test")


def test_a_data_directory_in_use_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServerProcess(data_dir=data)
    try:
        before = sorted(p.name for p in data.iterdir())
        result = run("serve", "--port", "0", "--data-dir", str(data))
        assert result.returncode == 1
        assert result.stdout == ""
        assert result.stderr == (
            f"dynastore: error: cannot open the store: the data directory {data} is in use by another dynastore "
            "process\n"
        )
        assert sorted(p.name for p in data.iterdir()) == before
    finally:
        assert first.stop() == 0


# ---------------------------------------------------------------- dynastore partitions


server = server_fixture()


@pytest.fixture(scope="module")
def table(server: ServerProcess) -> str:
    return create_table(make_client(server.url))


def test_partitions_finds_the_server_as_serve_was_configured(server: ServerProcess, table: str) -> None:
    # DYNASTORE_HOST=0.0.0.0 makes serve listen everywhere; the client then asks the loopback address.
    env = {"DYNASTORE_HOST": "0.0.0.0", "DYNASTORE_PORT": str(server.port)}
    result = run("partitions", table, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"table {table} (PAY_PER_REQUEST, capacity enforce): 0 items, 0 bytes\n")


def test_partitions_takes_host_and_port_without_a_scheme(server: ServerProcess, table: str) -> None:
    result = run("partitions", table, "--endpoint", f"{server.host}:{server.port}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"table {table} ")


def test_partitions_explains_its_columns(server: ServerProcess, table: str) -> None:
    result = run("partitions", table, "--endpoint", server.url)
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("# hash range"))
    columns = re.split(r"\s{2,}|(?<=#) ", header.strip())
    legend = result.stdout.split("\ncolumns (", 1)[1]
    labels = [re.split(r"\s{2,}", line.strip())[0] for line in legend.splitlines()[1:]]
    explained = {name for label in labels for name in label.split(", ")}
    assert set(columns) <= explained, set(columns) - explained
    assert "adaptive" in explained


def test_partitions_says_it_changes_the_server_and_counts_in_words(server: ServerProcess, table: str) -> None:
    shown = run("partitions", table, "--endpoint", server.url)
    assert "table: 8 partitions, on-demand" in shown.stdout
    assert "changed on the server" not in shown.stdout + shown.stderr
    changed = run("partitions", table, "--endpoint", server.url, "--set-as-if", "1")
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.startswith(
        f"changed on the server: table {table} now behaves as if it held 1 partition (`--set-as-if 0` returns to its "
        f"real partitions)\ntable {table} (PAY_PER_REQUEST, capacity enforce, as if 1 partition): 0 items, 0 bytes\n"
        "table: 1 partition, on-demand"
    )
    as_json = run("partitions", table, "--endpoint", server.url, "--set-as-if", "0", "--json")
    assert json.loads(as_json.stdout)["as_if"] is None
    assert as_json.stderr == f"changed on the server: table {table} has its real partitions again\n"
    assert "--as-if" not in run("partitions", "--help").stdout  # only --set-as-if, in the group of changes


def test_partitions_of_an_unknown_table_is_one_line(server: ServerProcess) -> None:
    result = run("partitions", "no_such_table", "--endpoint", server.url)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        "dynastore partitions: error: Requested resource not found: Table: no_such_table not found\n"
    )


def test_partitions_without_a_server_is_one_line() -> None:
    # A socket that listens but never answers would hang; a port with nothing bound refuses at once.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    result = run("partitions", "t_table", "--endpoint", f"127.0.0.1:{free}")
    assert result.returncode == 1
    assert result.stderr == (
        f"dynastore partitions: error: cannot reach http://127.0.0.1:{free}: [Errno 111] Connection refused: "
        "is `dynastore serve` running there?\n"
    )


def test_a_wrong_number_in_the_environment_is_one_line(tmp_path: Path) -> None:
    result = run("serve", env={"DYNASTORE_PORT": "eighty"}, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "dynastore: error: DYNASTORE_PORT must be a whole number (such as 8000), not 'eighty'\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("DYNASTORE_ADAPTIVE_DELAY", "soon", "DYNASTORE_ADAPTIVE_DELAY must be a number (such as 300), not 'soon'"),
        ("DYNASTORE_IDLE_TIMEOUT", "1m", "DYNASTORE_IDLE_TIMEOUT must be a number (such as 60), not '1m'"),
        ("DYNASTORE_METRICS_PORT", "x", "DYNASTORE_METRICS_PORT must be a whole number (such as 9090), not 'x'"),
        ("DYNASTORE_GSI_BACKFILL_CHUNK", "1e3", "DYNASTORE_GSI_BACKFILL_CHUNK must be a whole number (such as 256), "
         "not '1e3'"),
    ],
)  # fmt: skip
def test_a_wrong_number_names_its_variable_whatever_the_command(
    tmp_path: Path, variable: str, value: str, expected: str
) -> None:
    for command in (["serve"], ["users", "list"], ["partitions", "t"]):
        result = run(*command, env={variable: value}, cwd=tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"dynastore: error: {expected}\n")
    assert list(tmp_path.iterdir()) == []


def test_users_list_of_a_data_directory_that_does_not_exist_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    for command in (["list"], ["remove", "bob"], ["rotate-key", "bob"]):
        result = run("users", *command, "--data-dir", str(missing))
        assert result.returncode == 1
        assert result.stderr == (
            f"dynastore users: error: the data directory {missing} does not exist (give the server's with --data-dir "
            "or DYNASTORE_DATA_DIR)\n"
        )
    assert not missing.exists()


def test_a_wrong_choice_in_the_environment_is_refused(tmp_path: Path) -> None:
    result = run("serve", env={"DYNASTORE_LOG_FORMAT": "xml"}, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.endswith(
        "dynastore serve: error: DYNASTORE_LOG_FORMAT: invalid choice: 'xml' (choose from text, json)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_wrong_trigger_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    result = run("serve", "--port", "0", "--trigger", '{"Table": "t", "Command": "cat", "BatchSize": 0}', cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == ("dynastore serve: error: trigger 't': BatchSize must be from 1 to 10000")
    result = run("serve", "--port", "0", cwd=tmp_path, env={"DYNASTORE_TRIGGERS": "[{"})
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith(
        "dynastore serve: error: --trigger (or DYNASTORE_TRIGGERS): not JSON"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "env", "error"),
    [
        (["--cluster", "bogus"], {}, "--cluster: expected etcd://HOST:PORT[,HOST:PORT...], got 'bogus'"),
        (
            [],
            {"DYNASTORE_CLUSTER": "etcd://a:b"},
            "--cluster: expected etcd://HOST:PORT[,HOST:PORT...], got 'etcd://a:b'",
        ),
        (
            ["--cluster", "etcd://127.0.0.1:2379", "--in-memory"],
            {},
            "--cluster keeps the node's replica on disk: it cannot be combined with --in-memory",
        ),
    ],
)
def test_a_cluster_node_badly_named_is_one_line_and_creates_nothing(
    tmp_path: Path, args: list[str], env: dict[str, str], error: str
) -> None:
    data = tmp_path / "data"
    result = run("serve", "--port", "0", "--data-dir", str(data), *args, env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"dynastore serve: error: {error}"
    assert not data.exists()
