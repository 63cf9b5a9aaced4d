"""State an engine module keeps for each server, built on first use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, cast

from dynastore.api.context import Context

T = TypeVar("T")


class PerServer(Generic[T]):
    """``state(ctx)``: the ``factory(ctx)`` object of ``ctx``'s server, made once and kept in its context (its
    lifetime is the server's). Tests run several servers in one process, so module-level state would be shared
    wrongly."""

    def __init__(self, factory: Callable[[Context], T]) -> None:
        self._factory = factory

    def __call__(self, ctx: Context) -> T:
        state = ctx.states.get(self)
        if state is None:
            state = ctx.states[self] = self._factory(ctx)
        return cast(T, state)
