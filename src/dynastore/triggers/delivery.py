"""Where a trigger's batches go: a local command, an HTTP endpoint or a Python callable.

Each kind is an async ``deliver(event_json) -> None`` that raises ``DeliveryFailed`` when the batch failed. None
blocks the event loop: the command runs as an asyncio subprocess, the HTTP request and a plain callable in a worker
thread, a coroutine function on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine
from typing import Any

import orjson

from dynastore.triggers.spec import TriggerSpec

__all__ = ["Deliver", "DeliveryFailed", "delivery_for"]

Deliver = Callable[[bytes], Coroutine[Any, Any, None]]
_OUTPUT_KEPT = 500  # characters of a failed command's output kept as its error


class DeliveryFailed(Exception):
    """The batch was not processed; the text says why (exit status, HTTP status, the exception raised)."""


def delivery_for(spec: TriggerSpec) -> Deliver:
    if spec.command is not None:
        command = spec.command
        return lambda body: _run_command(command, body, spec.timeout)
    if spec.url is not None:
        url = spec.url
        return lambda body: _post(url, body, spec.timeout)
    assert spec.handler is not None
    handler = spec.handler
    return lambda body: _call(handler, body)


async def _run_command(command: tuple[str, ...], body: bytes, timeout: float) -> None:
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as e:
        raise DeliveryFailed(f"cannot run {command[0]}: {e.strerror}") from None
    try:
        _, err = await asyncio.wait_for(process.communicate(body), timeout)
    except TimeoutError:
        await _end(process)
        raise DeliveryFailed(f"timed out after {timeout:g} s") from None
    except asyncio.CancelledError:
        await _end(process)
        raise
    if process.returncode != 0:
        tail = err.decode(errors="replace").strip()[-_OUTPUT_KEPT:]
        raise DeliveryFailed(f"exit status {process.returncode}" + (f": {tail}" if tail else ""))


async def _end(process: asyncio.subprocess.Process) -> None:
    """Kill the command unless it has exited already, and reap it. It may have exited while its output was still
    being read (a process it started holds the pipe, or the loop has not read the end yet): killing it then raises
    ProcessLookupError (uvloop), which would replace the cancellation of a stopping server by an error, and the
    trigger would go on running instead of stopping."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    await process.wait()


def _post_blocking(url: str, body: bytes, timeout: float) -> None:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the operator's own URL
            status = response.status
    except urllib.error.HTTPError as answered:
        status = answered.code
    except (urllib.error.URLError, OSError) as unreachable:  # (a name of its own: mypyc types each name once)
        reason = getattr(unreachable, "reason", unreachable)
        raise DeliveryFailed(f"POST {url} failed: {reason}") from None
    if not 200 <= status < 300:
        raise DeliveryFailed(f"POST {url} answered HTTP {status}")


async def _post(url: str, body: bytes, timeout: float) -> None:
    await asyncio.to_thread(_post_blocking, url, body, timeout)


async def _call(handler: Callable[[dict[str, Any]], Any], body: bytes) -> None:
    event = orjson.loads(body)
    try:
        if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(type(handler).__call__):
            await handler(event)
        else:
            await asyncio.to_thread(handler, event)
    except Exception as e:  # the handler's error is the batch's failure, whatever it is
        raise DeliveryFailed(f"{type(e).__name__}: {e}") from None
