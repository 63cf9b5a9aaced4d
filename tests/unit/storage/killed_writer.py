"""Run a writer script in its own process, read the line it prints once its writes are durable, then kill -9 it
while it keeps writing."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[3] / "src")  # for the script's sys.path


def first_line_then_kill_9(script: str) -> str:
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        time.sleep(0.05)  # it is committing more, never made durable
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return line
