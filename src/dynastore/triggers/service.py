"""The triggers of one dynastore: one runner per configured trigger, run on the host's event loop.

``Triggers.start(loop)`` begins one task per trigger (a round, then a pause of ``POLL_INTERVAL`` unless the
round moved something), ``stop()`` cancels them: a batch in flight is abandoned, not checkpointed, and delivered
again after the next start (an HTTP request or a plain callable already running in a worker thread finishes
there, within the trigger's timeout for HTTP). Nothing runs while the store is read-only (after a storage failure).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from dynastore.engine.context import Context
from dynastore.triggers.delivery import delivery_for
from dynastore.triggers.runner import TriggerRunner
from dynastore.triggers.spec import TriggerSpec, check_unique

__all__ = ["POLL_INTERVAL", "Triggers"]

log = logging.getLogger("dynastore.triggers")

POLL_INTERVAL = 0.25  # seconds between two rounds of a trigger with nothing to do (Lambda polls 4 times a second)


class Triggers:
    def __init__(self, ctx: Context, specs: list[TriggerSpec] | None = None) -> None:
        self._ctx = ctx
        self.runners: list[TriggerRunner] = []
        self._tasks: list[asyncio.Task[None]] = []
        for spec in specs or []:
            self.add(spec)

    def add(self, spec: TriggerSpec) -> TriggerRunner:
        """A trigger more (before ``start``)."""
        check_unique([r.spec for r in self.runners] + [spec])
        runner = TriggerRunner(spec, self._ctx, delivery_for(spec))
        self.runners.append(runner)
        return runner

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._tasks = [loop.create_task(self._run(runner)) for runner in self.runners]

    async def stop(self) -> None:
        """Cancel every trigger and wait until each has let go (a command in flight is killed)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, runner: TriggerRunner) -> None:
        kv = self._ctx.kv
        while True:
            moved = False
            if kv.writable:
                try:
                    moved = await runner.step()
                except Exception as e:
                    if _stopping():
                        # Cancelled (stop), and the round ended with another error on its way out: the trigger
                        # stops all the same (caught here, the cancellation would be lost and stop() would wait
                        # forever for a runner that goes on).
                        raise asyncio.CancelledError from e
                    runner.last_error = f"{type(e).__name__}: {e}"
                    log.exception("trigger %s failed", runner.spec.name)
            await asyncio.sleep(0 if moved else POLL_INTERVAL)

    def view(self) -> list[dict[str, Any]]:
        return [runner.view() for runner in self.runners]


def _stopping() -> bool:
    """Whether the running task has been asked to stop (cancelled), even if what it awaited did not raise
    CancelledError."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
