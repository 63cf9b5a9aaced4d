"""``dynastore`` as its command line runs it, plus two signals that write where a node is to its output:

SIGUSR1  every thread's stack (faulthandler: works even while the interpreter is stuck in a C call)
SIGUSR2  every asyncio task's stack (what each coroutine is awaiting), and how tasks that died ended

The harness sends both to the nodes when they do not catch up after a run, so that the log says why.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import signal
import sys
import traceback
from types import FrameType

from dynastore.cli import main


def _dump_tasks(signum: int, frame: FrameType | None) -> None:
    loop = asyncio.events._get_running_loop()
    if loop is None:
        print("--- no running event loop", file=sys.stderr, flush=True)
        return
    print("--- asyncio tasks", file=sys.stderr, flush=True)
    for task in asyncio.all_tasks(loop):
        task.print_stack(file=sys.stderr)
    # Tasks that ended with an exception nobody retrieved: a loop that died says why here.
    for obj in gc.get_objects():
        if not isinstance(obj, asyncio.Task) or not obj.done():
            continue
        if obj.cancelled():
            print(f"--- task {obj.get_name()} ({obj.get_coro()!r}) was cancelled", file=sys.stderr)
        elif obj.exception() is not None:
            print(f"--- task {obj.get_name()} ({obj.get_coro()!r}) ended with:", file=sys.stderr)
            traceback.print_exception(obj.exception(), file=sys.stderr)
    sys.stderr.flush()


if __name__ == "__main__":
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    signal.signal(signal.SIGUSR2, _dump_tasks)
    main()
