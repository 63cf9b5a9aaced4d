"""State an engine module keeps for each server, built on first use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

from dynastore.api.context import Context

T = TypeVar("T")


class PerServer(Generic[T]):
    """``state(ctx)``: the ``factory(ctx)`` object of ``ctx``'s server, made once and kept while the server (its
    catalog) lives. Tests run several servers in one process, so module-level state would be shared wrongly."""

    def __init__(self, factory: Callable[[Context], T]) -> None:
        self._factory = factory
        self._states: WeakKeyDictionary[Any, T] = WeakKeyDictionary()
        self._last: tuple[Any, T] | None = None  # one identity test on the hot path

    def __call__(self, ctx: Context) -> T:
        catalog = ctx.catalog
        last = self._last
        if last is not None and last[0] is catalog:
            return last[1]
        state = self._states.get(catalog)
        if state is None:
            state = self._states[catalog] = self._factory(ctx)
        self._last = (catalog, state)
        return state
