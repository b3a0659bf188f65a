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


FEW_BYTES = 8  # a forbidden set of at most this many bytes: its row is their rows OR-ed


class FirstBytes:
    """Per vocabulary: `token_first` (per token its first byte, 256 for none) and the tries
    (the full one, then the slices' rest tries) whose node ids boundaries hold."""

    def __init__(self, token_first: np.ndarray, tries: Sequence[TokenTrie]) -> None:
        self._token_first = token_first
        self._tries = tuple(tries)
        # (per trie, made with the index: a first mask that needs it would pay ~0.3 ms a trie)
        self._node_first = tuple(_node_first_bytes(t) for t in self._tries)
        self._rows: dict[int, np.ndarray] = {}
        self._allowed: dict[int, np.ndarray] = {}
        self._padded: Optional[np.ndarray] = None
        self._byte_rows: dict[int, np.ndarray] = {}
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
            if forbidden.bit_count() <= FEW_BYTES:  # (the bytes' own rows, OR-ed: a few us each)
                hit = np.zeros(self._n_words(), dtype=np.uint32)
                for b in range(256):
                    if forbidden >> b & 1:
                        hit |= self._byte_row(b)
            else:  # (one gather over all tokens: 0.1 ms at 128k)
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
        keep = self.nodes_allowed(tid, nodes, forbidden)
        hit = Boundaries.of(nodes[keep], states[keep], node_bytes[keep])
        memo[key] = (bounds, hit)  # (holding `bounds` keeps its id from being reused)
        return hit

    def nodes_allowed(self, tid: int, nodes: np.ndarray, forbidden: int) -> np.ndarray:
        """Bool per node of trie `tid`: is its token's first byte not in `forbidden`?"""
        return self.allowed(forbidden)[self._node_first[tid][nodes]]

    def _n_words(self) -> int:
        return (self._token_first.shape[0] + 31) // 32

    def _byte_row(self, b: int) -> np.ndarray:
        """uint32 words: the tokens whose first byte is b (kept per byte)."""
        hit = self._byte_rows.get(b)
        if hit is None:
            hit = np.packbits(self._first_padded() == b, bitorder="little").view(np.uint32)
            self._byte_rows[b] = hit
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


def _node_first_bytes(trie: TokenTrie) -> np.ndarray:
    """Per node of `trie`, the first byte of the tokens under it (the root: 0). The subtrees of
    the root's children lie end to end in node order, so one repeat writes them all."""
    out = np.zeros(trie.n_nodes, dtype=np.uint8)
    firsts = np.sort(trie.root[trie.root >= 0])
    if firsts.size:
        sizes = trie.end[firsts] - firsts
        out[firsts[0] : firsts[0] + int(sizes.sum())] = np.repeat(trie.byte[firsts].astype(np.uint8), sizes)
    return out
