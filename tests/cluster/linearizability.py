"""A linearizability checker: Wing & Gong's search with Lowe's memoization (as Porcupine does it).

A history is linearizable when every operation can be given a point between its invocation and its completion
such that, taken in the order of those points, the operations are a run of the sequential model. The search walks
the history's call and return events in time order; at a call it tries to linearize that operation now (the model
must accept it from the current state); at a return whose operation is not linearized yet it backtracks. A
configuration (the set of operations linearized, the model's state) already explored is never explored again,
which keeps the search near linear for histories of low concurrency.

An operation whose outcome is unknown (in doubt) has no completion (infinity): it may take effect at any point after
its invocation, or never. The model expresses "or never" by offering the unchanged state among its next states.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

O = TypeVar("O")  # noqa: E741 (an operation, as the model knows it)
S = TypeVar("S", bound=Hashable)


@dataclass(frozen=True)
class Timed(Generic[O]):
    """An operation with its real-time bounds (``complete`` is infinite when its outcome is unknown)."""

    invoke: float
    complete: float
    op: O


@dataclass(frozen=True)
class Verdict(Generic[O]):
    """``ok`` None means the search ran out of its budget before deciding."""

    ok: bool | None
    linearized: int  # the most operations a partial linearization reached
    stuck_at: Timed[O] | None = None  # the operation that could not be placed at that point
    explored: int = 0

    def describe(self, total: int) -> str:
        if self.ok:
            return f"linearizable ({total} operations, {self.explored} configurations explored)"
        if self.ok is None:
            return f"undecided: search budget exhausted after {self.explored} configurations"
        stuck = self.stuck_at
        assert stuck is not None
        return (f"NOT linearizable: {stuck.op!r} (invoked {stuck.invoke:.3f} s, completed {stuck.complete:.3f} s) "
                f"cannot be placed after {self.linearized} of {total} operations")  # fmt: skip


class _Events:
    """The history's call and return events in time order, as a doubly linked list operations can be lifted out
    of and put back in (in the reverse order: dancing links)."""

    def __init__(self, history: Sequence[Timed[O]]) -> None:
        # (time, 0 for a call / 1 for a return, op index): at equal times calls come first (the lenient choice).
        order = sorted([(t.invoke, 0, i) for i, t in enumerate(history)] + [(t.complete, 1, i) for i, t in
                       enumerate(history)])  # fmt: skip
        self.is_call = [kind == 0 for _, kind, _ in order]
        self.op_of = [i for _, _, i in order]
        self.return_of = [0] * len(history)
        for position, (_, kind, i) in enumerate(order):
            if kind == 1:
                self.return_of[i] = position
        size = len(order)
        self.head = size  # a sentinel before the first event
        self.next = list(range(1, size + 1)) + [0]
        self.prev = [size] + list(range(0, size - 1)) + [size - 1]
        self.next[self.head] = 0 if size else -1
        if size:
            self.next[size - 1] = -1

    def first(self) -> int:
        return self.next[self.head]

    def _remove(self, e: int) -> None:
        self.next[self.prev[e]] = self.next[e]
        if self.next[e] != -1:
            self.prev[self.next[e]] = self.prev[e]

    def _restore(self, e: int) -> None:
        self.next[self.prev[e]] = e
        if self.next[e] != -1:
            self.prev[self.next[e]] = e

    def lift(self, call: int) -> None:
        self._remove(call)
        self._remove(self.return_of[self.op_of[call]])

    def unlift(self, call: int) -> None:
        self._restore(self.return_of[self.op_of[call]])
        self._restore(call)


def check(
    history: Sequence[Timed[O]],
    initial: S,
    step: Callable[[S, O], Iterable[S]],
    budget: int = 500_000,  # configurations: a bad history can make the search exponential
) -> Verdict[O]:
    """Whether ``history`` is linearizable for the model that starts in ``initial`` and moves by ``step`` (the
    states an operation may lead to from a state; none when the model cannot perform it there)."""
    events = _Events(history)
    cache: set[tuple[int, S]] = set()
    stack: list[tuple[int, S]] = []
    linearized, state = 0, initial
    best, stuck_at = 0, None
    entry = events.first()
    while entry != -1:
        if len(cache) > budget:
            return Verdict(None, best, explored=len(cache))
        i = events.op_of[entry]
        if events.is_call[entry]:
            chosen = _untried(cache, linearized | (1 << i), step(state, history[i].op))
            if chosen is None:
                entry = events.next[entry]
                continue
            stack.append((entry, state))
            linearized, state = linearized | (1 << i), chosen
            events.lift(entry)
            entry = events.first()
            continue
        # A return whose operation was never placed: what was placed before it must be placed otherwise.
        if len(stack) >= best:
            best, stuck_at = len(stack), history[i]
        if not stack:
            return Verdict(False, best, stuck_at, len(cache))
        entry, state = stack.pop()
        linearized &= ~(1 << events.op_of[entry])
        events.unlift(entry)  # and try that same operation's other outcomes, or a later one
    return Verdict(True, len(history), explored=len(cache))


def _untried(cache: set[tuple[int, S]], linearized: int, states: Iterable[S]) -> S | None:
    for state in states:
        if (linearized, state) not in cache:
            cache.add((linearized, state))
            return state
    return None
