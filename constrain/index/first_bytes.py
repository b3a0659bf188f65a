"""Masks after a greedy rule's return: the same walks, less what starts with a byte it reads.

A greedy rule (a Lark terminal, automata/stack_semantics.py) returns only before a byte it cannot
read, so the tops its return reaches may not read such a byte first. Their masks are their usual
cached walks from the root, less the tokens that start with a forbidden byte, and their
boundaries less the nodes under one: one vocabulary row per set of forbidden bytes (few: one
per greedy rule state) and one first-byte array per trie, kept per vocabulary.
"""

from __future__ import annotations

import threading
from typing import Sequence

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
            refused = ~np.append(self.allowed(forbidden), True)[self._token_first]  # (256: no byte)
            n_words = (refused.size + 31) // 32
            bits = np.packbits(np.resize(refused, n_words * 32) & (np.arange(n_words * 32) < refused.size), bitorder="little")
            hit = bits.view(np.uint32).copy()
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
        first = self._first_of_nodes(tid)
        allowed = self.allowed(forbidden)
        nodes, states, node_bytes = [], [], []
        for q, group_nodes, group_bytes in bounds.groups:
            keep = allowed[first[group_nodes]]
            nodes.append(group_nodes[keep])
            node_bytes.append(group_bytes[keep])
            states.append(np.full(int(keep.sum()), q, dtype=np.int32))
        hit = Boundaries.of(np.concatenate(nodes), np.concatenate(states), np.concatenate(node_bytes))
        memo[key] = (bounds, hit)  # (holding `bounds` keeps its id from being reused)
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
