"""Items: where a frame's reading resumes, interned as small ints (frame_summaries.py).

An item is a set of trie nodes of one trie (the next byte to read is each node's own), or the
root, less the tokens whose first byte is forbidden (after a greedy rule's return). A node item
may carry a check on the byte after its nodes' (checked_items.py; 0: none).
"""

from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from ..sorted_sets import sorted_unique
from .node_sets import ascending as nodes_ascending

ROOT = 0  # the item "the whole trie": a frame reading from a token's first byte
EMPTY = -1  # no item: no node left to read from


class Items:
    """Interned items: a small int per (trie, sorted nodes) or per root with forbidden bytes."""

    def __init__(self, node_counts: tuple[int, ...] = ()) -> None:
        """`node_counts`: per trie id, its number of nodes (a bound that lets many nodes be
        ordered by a bitmap rather than a sort: sorted_sets.py)."""
        self._ids: dict[tuple, int] = {(-1, 0): ROOT}
        self._items: list[tuple[int, Optional[np.ndarray], int]] = [(-1, None, 0)]
        self._lock = threading.Lock()
        self._node_counts = node_counts

    def get(self, item: int) -> tuple[int, Optional[np.ndarray], int]:
        """(trie id, nodes, check; or -1, None, forbidden first bytes as one bit each)."""
        return self._items[item]

    def root(self, forbidden: int) -> int:
        return self._intern((-1, forbidden), (-1, None, forbidden))

    def nodes(self, tid: int, nodes: np.ndarray, ascending: bool = False, check: int = 0) -> int:
        """The item of these nodes, kept ascending without repeats. Walks meet nodes ascending,
        but a walk from nested starts (a node and its descendant) meets the shared subtree's
        boundaries twice: repeated nodes would be walked twice, and each walk from them repeats
        its own boundaries again (lua.lark: 1,310 nodes, then 37,082, then 10^6, 10^8...).
        `ascending`: the caller knows they are (a walk's pops, part of an item): not checked.
        `check`: the item's check (checked_items.py), its nodes at one depth."""
        if not ascending and nodes.size > 1 and not nodes_ascending(nodes):
            nodes = sorted_unique(nodes, self._node_counts[tid] if tid < len(self._node_counts) else None)
        return self._intern(_node_key(tid, nodes, check), (tid, nodes, check))

    def _intern(self, key: tuple, value: tuple) -> int:
        hit = self._ids.get(key)
        if hit is None:
            with self._lock:
                hit = self._ids.get(key)
                if hit is None:
                    hit = self._ids[key] = len(self._items)
                    self._items.append(value)
        return hit

    def __len__(self) -> int:
        return len(self._items)

    def entries(self) -> list[tuple[int, Optional[np.ndarray], int]]:
        """Every item past ROOT, in id order (a snapshot: items are only ever appended)."""
        return self._items[1 : len(self._items)]

    @classmethod
    def of(cls, entries: list[tuple[int, Optional[np.ndarray], int]], node_counts: tuple[int, ...] = ()) -> "Items":
        """Items whose ids 1, 2, ... are `entries` (as `entries()` gave them), interned again."""
        items = cls(node_counts)
        for tid, nodes, forbidden in entries:
            key = (-1, forbidden) if nodes is None else _node_key(tid, nodes, forbidden)
            if key in items._ids:
                raise ValueError(f"item {len(items._items)} repeats an earlier one")
            items._ids[key] = len(items._items)
            items._items.append((tid, nodes, forbidden))
        return items


def _node_key(tid: int, nodes: np.ndarray, check: int) -> tuple:
    """A node item's interning key (a checked one's holds its check)."""
    return (tid, nodes.tobytes(), check) if check else (tid, nodes.tobytes())
