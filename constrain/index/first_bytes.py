"""Masks after a greedy rule's return: the same walks, less what starts with a byte it reads.

A greedy rule (a Lark terminal, automata/stack_semantics.py) returns only before a byte it cannot
read, so the tops its return reaches may not read such a byte first. Their masks are their usual
cached walks from the root, less the tokens that start with a forbidden byte, and their
boundaries less the nodes under one: one vocabulary row per set of forbidden bytes (few: one
per greedy rule state) and one first-byte array per trie, kept per vocabulary.
"""

from __future__ import annotations

import threading
from typing import Optional, Sequence

import numpy as np

from .boundaries import Boundaries
from .trie import TokenTrie


class FirstBytes:
    """Per vocabulary: `token_first` (per token its first byte, 256 for none) and the tries
    (the full one, then the slices' rest tries) whose node ids boundaries hold."""

    def __init__(self, token_first: np.ndarray, tries: Sequence[TokenTrie]) -> None:
        self._token_first = token_first
        self._tries = tuple(tries)
        self._node_first: dict[int, np.ndarray] = {}
        self._rows: dict[int, np.ndarray] = {}
        self._allowed: dict[int, np.ndarray] = {}
        self._padded: Optional[np.ndarray] = None
        self._lock = threading.Lock()

    def allowed(self, forbidden: int) -> np.ndarray:
        """Bool per byte: not in `forbidden` (one bit per byte)."""
        hit = self._allowed.get(forbidden)
        if hit is None:
            hit = np.array([not forbidden >> b & 1 for b in range(256)], dtype=np.bool_)
            self._allowed[forbidden] = hit
        return hit

    def starting_with(self, forbidden: int) -> np.ndarray:
        """uint32 words: the tokens whose first byte is in `forbidden`."""
        hit = self._rows.get(forbidden)
        if hit is None:
            refused = np.zeros(257, dtype=np.bool_)  # (257th: no byte, and the last word's padding)
            np.logical_not(self.allowed(forbidden), out=refused[:256])
            hit = np.packbits(refused[self._first_padded()], bitorder="little").view(np.uint32)
            with self._lock:
                hit = self._rows.setdefault(forbidden, hit)
        return hit

    def bounds_without(self, tid: int, bounds: Boundaries, forbidden: int, memo: dict) -> Boundaries:
        """`bounds` less the nodes of trie `tid` under a forbidden first byte, kept in `memo`
        (the automaton's, per boundaries object: a walk's cached boundaries are met again and again)."""
        key = (tid, id(bounds), forbidden)
        found = memo.get(key)
        if found is not None and found[0] is bounds:
            return found[1]
        nodes, states, node_bytes = bounds.flat
        keep = self.allowed(forbidden)[self._first_of_nodes(tid)[nodes]]
        hit = Boundaries.of(nodes[keep], states[keep], node_bytes[keep])
        memo[key] = (bounds, hit)  # (holding `bounds` keeps its id from being reused)
        return hit

    def _first_padded(self) -> np.ndarray:
        """`token_first` as indices, padded with 256 to whole words: one gather makes a row
        (0.1 ms at 128k tokens; 0.5 ms through a resize and a mask of the padding)."""
        hit = self._padded
        if hit is None:
            n = self._token_first.shape[0]
            hit = np.full((n + 31) // 32 * 32, 256, dtype=np.intp)
            hit[:n] = self._token_first
            self._padded = hit
        return hit

    def _first_of_nodes(self, tid: int) -> np.ndarray:
        hit = self._node_first.get(tid)
        if hit is None:
            trie = self._tries[tid]
            hit = np.zeros(trie.n_nodes, dtype=np.uint8)
            for b in range(256):
                c = int(trie.root[b])
                if c >= 0:
                    hit[c : trie.end[c]] = b
            self._node_first[tid] = hit
        return hit
