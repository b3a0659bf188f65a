"""The boundaries one cached walk met, grouped by the rule state that met them.

A frame's summary (frame_summaries.py) expands a walk's boundaries state by state: where the
state accepts, its nodes are pops; where it calls, its callees read on from them. So a walk's
boundaries are grouped by state once, when the walk is cached, not at every expansion.
"""

from __future__ import annotations

import numpy as np


class Boundaries:
    """`groups`: (state, nodes, their bytes) per state that met boundaries. Build with `of`."""

    __slots__ = ("groups", "flat")

    @staticmethod
    def of(nodes: np.ndarray, states: np.ndarray, node_bytes: np.ndarray) -> Boundaries:
        """Most walks meet no boundary: they share one empty instance."""
        return Boundaries(nodes, states, node_bytes) if nodes.size else NO_BOUNDARIES

    def __init__(self, nodes: np.ndarray, states: np.ndarray, node_bytes: np.ndarray) -> None:
        """`flat`: (nodes, states, bytes) ordered as the groups are, for passes over all of them."""
        if not nodes.size:
            self.groups: tuple[tuple[int, np.ndarray, np.ndarray], ...] = ()
        elif (states == states[0]).all():
            self.groups = ((int(states[0]), nodes, node_bytes),)
        else:  # by state, ascending, nodes in walk order within each (one sort, not a pass per state)
            if (states[1:] < states[:-1]).any():  # (a filtered Boundaries' flat arrays are sorted)
                order = np.argsort(_narrow(states), kind="stable")
                nodes, states, node_bytes = nodes[order], states[order], node_bytes[order]
            cuts = (np.flatnonzero(states[1:] != states[:-1]) + 1).tolist()
            starts = [0, *cuts]
            ends = [*cuts, len(states)]
            self.groups = tuple(
                (s, nodes[i:j], node_bytes[i:j]) for s, i, j in zip(states[starts].tolist(), starts, ends)
            )
        self.flat = (nodes, states, node_bytes)


def _narrow(states: np.ndarray) -> np.ndarray:
    """The states as int16 where they fit: numpy's stable sort of 16-bit ints is a radix sort
    (2,000 boundaries of 20 states: 55 against 13 us; 10,000 of 40: 397 against 51)."""
    if states.dtype != np.int16 and int(states.max()) < 32768 and int(states.min()) >= 0:
        return states.astype(np.int16)
    return states


NO_BOUNDARIES = Boundaries(np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32))
