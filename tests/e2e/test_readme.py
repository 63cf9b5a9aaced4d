"""The README's first examples work on a machine never set up for AWS (no ~/.aws, no AWS_* variables)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.server_process import ServerProcess, server_fixture

README = Path(__file__).resolve().parents[2] / "README.md"
DEFAULT_URL = "http://127.0.0.1:8000"


server = server_fixture()


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BOTO", "DYNASTORE_"))}
    env.update(HOME=str(home), AWS_CONFIG_FILE=str(home / "none"), AWS_SHARED_CREDENTIALS_FILE=str(home / "none"))
    env.update(extra)
    return env


def readme_exports() -> dict[str, str]:
    """The variables the README exports before its `aws dynamodb` command."""
    text = README.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.strip().startswith("export AWS_"))
    assert re.search(r"\n\s+aws dynamodb list-tables --endpoint-url http://127\.0\.0\.1:8000\n", text)
    return dict(pair.split("=", 1) for pair in line.split()[1:])


def readme_python() -> str:
    """The README's boto3 example (the indented block after "from Python:")."""
    text = README.read_text(encoding="utf-8").split("from Python:", 1)[1]
    block = re.match(r"\s*\n((?: {4}.*\n|\n)+)", text)
    assert block is not None
    return "\n".join(line[4:] for line in block.group(1).splitlines())


LIST_TABLES = (
    "import boto3, sys\nprint(boto3.client('dynamodb', endpoint_url=sys.argv[1]).list_tables()['TableNames'])\n"
)


def test_the_exported_dummy_credentials_are_all_a_client_needs(server: ServerProcess, tmp_path: Path) -> None:
    exports = readme_exports()
    assert set(exports) == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"}
    ran = subprocess.run(
        [sys.executable, "-c", LIST_TABLES, server.url],
        env=clean_env(tmp_path, **exports),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "[]\n"


def test_without_them_a_clean_machine_cannot_call(server: ServerProcess, tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", LIST_TABLES, server.url],
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode != 0
    assert "NoRegionError" in ran.stderr or "NoCredentialsError" in ran.stderr


def test_the_python_example_runs_as_written(server: ServerProcess, tmp_path: Path) -> None:
    code = readme_python()
    assert DEFAULT_URL in code
    ran = subprocess.run(
        [sys.executable, "-c", code.replace(DEFAULT_URL, server.url)],
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "[]\n"
