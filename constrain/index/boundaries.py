"""The boundaries one cached walk met, grouped by the rule state that met them.

The same walk's boundaries are expanded at position after position (each new character of a
string meets the closing quote's boundaries again), with a different stack below but mostly the
same readers. So the nodes each reader (a rule state) can continue from are picked once per walk
and remembered: an expansion costs a dict lookup per reader, not a pass over the nodes.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np


class Boundaries:
    """`groups`: (state, nodes, their bytes) per state that met boundaries. Build with `of`."""

    __slots__ = ("groups", "_picked", "_key", "_bits")

    @staticmethod
    def of(nodes: np.ndarray, states: np.ndarray, node_bytes: np.ndarray) -> Boundaries:
        """Most walks meet no boundary: they share one empty instance."""
        return Boundaries(nodes, states, node_bytes) if nodes.size else NO_BOUNDARIES

    def __init__(self, nodes: np.ndarray, states: np.ndarray, node_bytes: np.ndarray) -> None:
        if not nodes.size:
            self.groups: tuple[tuple[int, np.ndarray, np.ndarray], ...] = ()
        elif (states == states[0]).all():
            self.groups = ((int(states[0]), nodes, node_bytes),)
        else:  # by state, ascending, nodes in walk order within each (one sort, not a pass per state)
            order = np.argsort(states, kind="stable")
            by_state = states[order]
            cuts = (np.flatnonzero(by_state[1:] != by_state[:-1]) + 1).tolist()
            nodes, node_bytes = nodes[order], node_bytes[order]
            starts = [0, *cuts]
            ends = [*cuts, len(order)]
            self.groups = tuple(
                (s, nodes[i:j], node_bytes[i:j]) for s, i, j in zip(by_state[starts].tolist(), starts, ends)
            )
        self._picked: dict[tuple[int, int, int], np.ndarray] = {}
        self._key: Optional[tuple] = None
        self._bits: Optional[list[int]] = None

    def byte_bits(self, i: int) -> int:
        """The bytes of group i's nodes, one bit each: a reader that reads none of them needs
        no pass over the nodes (most of a stack's tops, at most boundaries)."""
        bits = self._bits
        if bits is None:
            bits = self._bits = [sum(1 << b for b in np.unique(g[2]).tolist()) for g in self.groups]
        return bits[i]

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
            hit = nodes[reads(*reader)[node_bytes]]
            self._picked[key] = hit
        return hit


NO_BOUNDARIES = Boundaries(np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32))
