"""The container's instructions: no registry publishes the image, so the README and docs/container.md build it
before they run it, and docs/container.md says what of it was verified (and the CI script it names exists)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = "docker build -t dynastore ."
RUN = "docker run -p 8000:8000 dynastore"


def _built_before_run(text: str) -> bool:
    return BUILD in text and RUN in text and text.index(BUILD) < text.index(RUN)


def test_the_readme_builds_the_image_before_it_runs_it() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "built locally first" in readme
    assert _built_before_run(readme)


def test_docs_container_says_what_was_verified_and_how() -> None:
    text = (ROOT / "docs" / "container.md").read_text()
    assert _built_before_run(text)
    assert "**What was verified, in short**" in text and "**Not verified:**" in text
    assert "## How this file was verified" in text
    assert (ROOT / ".ci" / "container").is_file() and "bash .ci/container" in (ROOT / ".ci" / "run").read_text()


COMPOSE = ROOT / "compose.cluster.yaml"


def test_the_cluster_compose_file_uses_only_variables_the_server_reads() -> None:
    text = COMPOSE.read_text()
    config_source = (ROOT / "src" / "dynastore" / "config.py").read_text()
    names = {line.split(":")[0].strip() for line in text.splitlines() if line.strip().startswith("DYNASTORE_")}
    assert {"DYNASTORE_CLUSTER", "DYNASTORE_NODE_NAME", "DYNASTORE_ADVERTISE_URL"} <= names
    assert all(f'"{name}"' in config_source for name in names), names


def test_the_cluster_compose_file_runs_etcd_as_the_nodes_expect() -> None:
    from dynastore.replication.etcd_config import ETCD_MEMBER_FLAGS

    text = COMPOSE.read_text()
    for flag in ETCD_MEMBER_FLAGS:
        name, _, value = flag.removeprefix("--").partition("=")
        if name in ("logger", "log-level"):
            continue  # how a member logs is the container's business
        variable = "ETCD_" + name.upper().replace("-", "_")
        assert f'{variable}: "{value}"' in text, flag
