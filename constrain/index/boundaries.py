"""The boundaries one cached walk met, grouped by the rule state that met them.

The same walk's boundaries are expanded at position after position (each new character of a
string meets the closing quote's boundaries again), with a different stack below but mostly the
same readers. So the nodes each reader (a rule state) can continue from are picked once per walk
and remembered: an expansion costs a dict lookup per reader, not a pass over the nodes.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..sorted_sets import sorted_unique


# A group with more nodes than this first checks a reader against its distinct bytes: a Lark
# stack meets hundreds of readers at a name's end, most reading none of its bytes; JSON's groups
# are small, where the check would cost more than the pass it spares.
LARGE_GROUP = 256


class Boundaries:
    """`groups`: (state, nodes, their bytes) per state that met boundaries. Build with `of`."""

    __slots__ = ("groups", "flat", "_picked", "_key", "_distinct_bytes")

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
                order = np.argsort(states, kind="stable")
                nodes, states, node_bytes = nodes[order], states[order], node_bytes[order]
            cuts = (np.flatnonzero(states[1:] != states[:-1]) + 1).tolist()
            starts = [0, *cuts]
            ends = [*cuts, len(states)]
            self.groups = tuple(
                (s, nodes[i:j], node_bytes[i:j]) for s, i, j in zip(states[starts].tolist(), starts, ends)
            )
        self.flat = (nodes, states, node_bytes)
        self._picked: dict[tuple[int, int, int], np.ndarray] = {}
        self._key: Optional[tuple] = None
        self._distinct_bytes: Optional[dict[int, np.ndarray]] = None

    @property
    def key(self) -> tuple:
        """The groups' states and nodes, hashable: walks from different states of one rule
        often meet the same boundaries (every character of a key meets its closing quote)."""
        key = self._key
        if key is None:
            key = self._key = tuple((q, nodes.tobytes()) for q, nodes, _ in self.groups)
        return key

    def picked(self, state: int, nodes: np.ndarray, node_bytes: np.ndarray, reader: tuple[int, int],
               reads: Callable[[int, int], np.ndarray]) -> np.ndarray:
        """The nodes of `state`'s group whose byte `reader` (rule, state) can read; `reads`
        gives a reader's bool-per-byte row. Races only recompute the same array."""
        key = (state, *reader)
        hit = self._picked.get(key)
        if hit is None:
            readable = reads(*reader)
            if node_bytes.size > LARGE_GROUP and not readable[self._distinct(state, node_bytes)].any():
                hit = nodes[:0]  # (a large group and a reader of none of its few distinct bytes)
            else:
                hit = nodes[readable[node_bytes]]
            self._picked[key] = hit
        return hit

    def _distinct(self, state: int, node_bytes: np.ndarray) -> np.ndarray:
        distinct = self._distinct_bytes
        if distinct is None:
            distinct = self._distinct_bytes = {}
        hit = distinct.get(state)
        if hit is None:
            hit = distinct[state] = sorted_unique(node_bytes)
        return hit


NO_BOUNDARIES = Boundaries(np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32))
