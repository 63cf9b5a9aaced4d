"""A process run inside a namespace that the nemesis can kill, stop, resume and start again."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tests.cluster.netns import in_namespace


class Service:
    """One long-running program (an etcd member or a dynastore node) of one host; its output goes to ``log``."""

    def __init__(self, name: str, namespace: str, argv: list[str], log: Path, env: dict[str, str] | None = None):
        self.name = name
        self.namespace = namespace
        self.argv = argv
        self.log = log
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.paused = False

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        if self.running:
            return
        with self.log.open("ab") as out:
            out.write(f"--- {self.name} started: {' '.join(self.argv)}\n".encode())
            out.flush()
            # A session of its own: a signal the harness's terminal gets does not reach the cluster.
            self.process = subprocess.Popen(in_namespace(self.namespace, *self.argv), stdout=out,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self.env, start_new_session=True)  # fmt: skip
        self.paused = False

    def signal(self, number: signal.Signals) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, number)

    def kill(self) -> None:
        """kill -9: no chance to flush or say goodbye."""
        self.signal(signal.SIGKILL)
        self.wait(10)
        self.paused = False

    def pause(self) -> None:
        self.signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self.signal(signal.SIGCONT)
        self.paused = False

    def stop(self, grace: float = 10) -> None:
        """SIGTERM (after SIGCONT, so that a stopped process can act on it), then kill -9 past ``grace`` seconds."""
        if not self.running:
            return
        self.resume()
        self.signal(signal.SIGTERM)
        if not self.wait(grace):
            self.kill()

    def wait(self, seconds: float) -> bool:
        if self.process is None:
            return True
        try:
            self.process.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
