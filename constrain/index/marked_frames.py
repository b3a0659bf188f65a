"""Helpers shared by the matchers that keep a context per frame of marked rules
(distinct_calls.py for array items, distinct_keys.py for object keys)."""

from __future__ import annotations

from typing import Any, Iterable

DEAD = object()  # a context that no continuation can save
_MAX_MEMO = 100_000


class MarkedFrames:
    """(depth, is the top) of each frame of a `marked` rule in a stack, bottom to top; memoized,
    as the same stacks recur at every character of an item or key."""

    def __init__(self, marked: Iterable[int]) -> None:
        self.marked = frozenset(marked)
        self._memo: dict[Any, tuple] = {}

    def __call__(self, stack: Any) -> tuple[tuple[int, bool], ...]:
        hit = self._memo.get(stack)
        if hit is not None:
            return hit
        out = []
        f = stack
        top = True
        marked = self.marked
        while f is not None:
            if f[0] in marked:
                out.append((f[3], top))
            f = f[2]
            top = False
        out.reverse()
        if len(self._memo) > _MAX_MEMO:
            self._memo.clear()
        hit = self._memo[stack] = tuple(out)
        return hit
