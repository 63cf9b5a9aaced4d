"""The delivery kinds: a command gets the batch on stdin (non-zero exit fails), an HTTP endpoint as a POST (non-2xx
fails), a Python callable (raising fails); timeouts fail too."""

from __future__ import annotations

import asyncio
import http.server
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvloop

from dynastore.triggers.delivery import DeliveryFailed, delivery_for
from dynastore.triggers.spec import TriggerSpec

BODY = b'{"Records": [{"eventName": "INSERT"}]}'


def deliver(spec: TriggerSpec, body: bytes = BODY) -> None:
    asyncio.run(delivery_for(spec)(body))


def test_a_command_reads_the_batch_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got"
    code = f"import sys; open({str(out)!r}, 'wb').write(sys.stdin.buffer.read())"
    deliver(TriggerSpec(name="c", table="t", command=(sys.executable, "-c", code)))
    assert out.read_bytes() == BODY


def test_a_command_failing_fails_the_batch_with_its_status_and_output() -> None:
    code = "import sys; sys.stdin.read(); print('no room', file=sys.stderr); sys.exit(3)"
    with pytest.raises(DeliveryFailed, match="exit status 3: no room"):
        deliver(TriggerSpec(name="c", table="t", command=(sys.executable, "-c", code)))


def test_a_command_that_does_not_exist_or_takes_too_long_fails() -> None:
    with pytest.raises(DeliveryFailed, match="cannot run /nonexistent/handler"):
        deliver(TriggerSpec(name="c", table="t", command=("/nonexistent/handler",)))
    slow = (sys.executable, "-c", "import time; time.sleep(30)")
    with pytest.raises(DeliveryFailed, match="timed out after 0.2 s"):
        deliver(TriggerSpec(name="c", table="t", command=slow, timeout=0.2))


def _reaped(pid: int) -> bool:
    """Whether process ``pid`` has exited and been reaped (a zombie still takes signal 0)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _dead(pid: int) -> bool:
    """Whether process ``pid`` has exited (its descriptors closed), reaped or not."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_command_cancelled_after_it_exited_ends_cancelled_on_the_servers_loop(tmp_path: Path) -> None:
    """A stop (the delivery cancelled) that comes once the command has exited but before its output has been read
    to the end (here a process it left behind holds its stderr) ends the delivery as cancelled, on uvloop (the
    server's loop) too, where killing an exited process raises ProcessLookupError: the trigger must see the
    cancellation, or it goes on running and the server never stops."""
    shell, left = tmp_path / "shell.pid", tmp_path / "left.pid"
    script = f"sleep 60 & echo $! > {left}; echo $$ > {shell}; exit 0"
    spec = TriggerSpec(name="c", table="t", command=("/bin/sh", "-c", script), timeout=300)

    async def main() -> None:
        delivery = asyncio.ensure_future(delivery_for(spec)(BODY))
        while not (shell.exists() and shell.read_text().strip() and _reaped(int(shell.read_text()))):
            await asyncio.sleep(0.01)  # the loop reaps the command meanwhile
        assert not delivery.done()  # still reading the output the process left behind holds open
        delivery.cancel()
        try:
            with pytest.raises(asyncio.CancelledError):
                await delivery
        finally:
            # The process left behind goes, and the loop reads the end of the pipe it held before it closes.
            pid = int(left.read_text())
            os.kill(pid, signal.SIGKILL)
            while not _dead(pid):
                await asyncio.sleep(0.01)
            for _ in range(10):
                await asyncio.sleep(0.01)

    uvloop.run(main())


class _Hook(http.server.BaseHTTPRequestHandler):
    received: list[bytes] = []
    status = 200

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        length = int(self.headers["Content-Length"])
        type(self).received.append(self.rfile.read(length))
        self.send_response(type(self).status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def hook() -> Iterator[tuple[str, type[_Hook]]]:
    handler = type("Hook", (_Hook,), {"received": [], "status": 200})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", handler
    finally:
        server.shutdown()
        server.server_close()


def test_an_http_endpoint_gets_a_post_and_a_non_2xx_fails(hook: tuple[str, type[_Hook]]) -> None:
    url, handler = hook
    deliver(TriggerSpec(name="h", table="t", url=url))
    assert handler.received == [BODY]
    handler.status = 503
    with pytest.raises(DeliveryFailed, match=r"answered HTTP 503"):
        deliver(TriggerSpec(name="h", table="t", url=url))


def test_an_unreachable_endpoint_fails() -> None:
    with pytest.raises(DeliveryFailed, match="POST http://127.0.0.1:1/ failed"):
        deliver(TriggerSpec(name="h", table="t", url="http://127.0.0.1:1/"))


def test_a_plain_callable_runs_in_a_thread_and_raising_fails() -> None:
    threads: list[str] = []

    def handler(event: dict[str, Any]) -> None:
        threads.append(threading.current_thread().name)
        if event["Records"][0]["eventName"] == "REMOVE":
            raise KeyError("gone")

    deliver(TriggerSpec(name="p", table="t", handler=handler))
    assert threads and threads[0] != threading.main_thread().name
    with pytest.raises(DeliveryFailed, match="KeyError: 'gone'"):
        deliver(TriggerSpec(name="p", table="t", handler=handler), b'{"Records": [{"eventName": "REMOVE"}]}')
