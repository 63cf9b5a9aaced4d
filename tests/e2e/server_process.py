"""Start `dynastore serve` as a real process and find its port."""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

_LISTENING = re.compile(r"listening on (https?)://([\d.]+):(\d+)")


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
        self.url = f"{match.group(1)}://{self.host}:{self.port}"

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        self._close()
        return code

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


def _limit_descriptors(count: int) -> None:
    """In the child before it runs the server: soft and hard descriptor limit ``count``."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))
