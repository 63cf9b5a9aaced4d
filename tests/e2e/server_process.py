"""Start `dynastore serve` as a real process and find its port; ``server_fixture`` makes a test module's fixture of
one (docs/development.md "End-to-end servers")."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.e2e.conftest import ADMIN, make_client, make_streams_client

_LISTENING = re.compile(r"listening on (https?)://([\d.]+):(\d+)")
# How long a server may take to exit after SIGTERM (it finishes its requests and closes its store first).
STOP_TIMEOUT = 30


class ServerProcess:
    def __init__(
        self,
        *args: str,
        data_dir: Path | None = None,
        own_group: bool = False,
        nofile: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        command = [sys.executable, "-m", "dynastore", "serve", "--port", "0"]
        command += ["--data-dir", str(data_dir)] if data_dir is not None else ["--in-memory"]
        command += list(args)
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        # The server's log goes to a file: a pipe nobody reads would fill up and block it.
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process, closed in _close
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
            start_new_session=own_group,
            preexec_fn=None if nofile is None else lambda: _limit_descriptors(nofile),
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = _LISTENING.search(line)
        if match is None:
            self.kill()
            raise RuntimeError(f"server did not start: {line!r} {self.log_text()}")
        self.host, self.port = match.group(2), int(match.group(3))
        self.last_words = ""  # what it had written to stderr when it had to be killed (close)
        self.url = f"{match.group(1)}://{self.host}:{self.port}"

    @cached_property
    def ddb(self) -> Any:
        """A DynamoDB client of this server (client-side validation and retries off)."""
        return make_client(self.url)

    @cached_property
    def streams(self) -> Any:
        """A DynamoDB Streams client of this server."""
        return make_streams_client(self.url)

    def admin(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """The JSON answer of one of dynastore's own endpoints: a GET, or a POST of ``body``."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method="GET" if body is None else "POST", headers=ADMIN
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def advance(self, seconds: float) -> float:
        """Move the clock of a server started with --manual-clock; its time now."""
        now: float = self.admin("/dynastore/clock", {"advance": seconds})["now"]
        return now

    def now(self) -> float:
        """The time of a server started with --manual-clock."""
        now: float = self.admin("/dynastore/clock")["now"]
        return now

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=STOP_TIMEOUT)
        self._close()
        return code

    def close(self) -> bool:
        """Stop the server if it still runs: SIGTERM, then SIGKILL when it has not exited in time. Never leaves the
        process running; whether it exited without SIGKILL (a server that ignores SIGTERM has a bug: a test that
        stops servers this way asserts it)."""
        exited = True
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                exited = False
                self.last_words = self.log_text()
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT)
        self._close()
        return exited

    def children(self) -> list[int]:
        """The server's child processes (the sync helper)."""
        pid = self.process.pid
        found: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
        return found

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        self._close()

    def log_text(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def _close(self) -> None:
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()


def server_fixture(
    *flags: str,
    scope: Literal["function", "module"] = "module",
    data_dir: bool = False,
    env: dict[str, str] | None = None,
) -> Any:
    """A fixture giving a running ``ServerProcess``, to assign to the fixture's name in a test module
    (``server = server_fixture("--manual-clock")``): started with ``flags`` and ``env`` (added to this process's
    environment), in memory or (``data_dir``) on a new data directory, for each test (``scope="function"``) or once
    for the module's tests, and closed after them."""

    def start(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
        directory = request.getfixturevalue("tmp_path_factory").mktemp("data") if data_dir else None
        server = ServerProcess(*flags, data_dir=directory, env=env)
        try:
            yield server
        finally:
            server.close()

    return pytest.fixture(scope=scope)(start)


def _limit_descriptors(count: int) -> None:
    """In the child before it runs the server: soft and hard descriptor limit ``count``."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))
