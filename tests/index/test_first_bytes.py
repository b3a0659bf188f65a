"""Rows and boundaries after a greedy return: what starts with a forbidden byte is left out."""

from __future__ import annotations

import numpy as np

from constrain import Compiler
from constrain.index.boundaries import Boundaries


def test_rows_and_boundaries_leave_out_forbidden_first_bytes(llama3):
    index = Compiler(llama3).index
    fb = index.first_bytes
    forbidden = sum(1 << b for b in b" \t\n")
    row = fb.starting_with(forbidden)
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")[: llama3.size].astype(bool)
    expected = np.array([bool(t) and t[0] in b" \t\n" for t in llama3.token_bytes])
    assert np.array_equal(bits, expected) and expected.any()
    assert not fb.allowed(forbidden)[ord(" ")] and fb.allowed(forbidden)[ord("a")]

    trie = index.trie
    nodes = np.array([trie.root[ord(" ")] + 1, trie.root[ord("a")] + 1, trie.root[ord("\n")]], dtype=np.int32)
    bounds = Boundaries.of(nodes, np.array([3, 3, 4], dtype=np.int32), trie.byte[nodes])
    memo: dict = {}
    kept = fb.bounds_without(0, bounds, forbidden, memo)
    assert [(q, n.tolist()) for q, n, _ in kept.groups] == [(3, [int(nodes[1])])]
    assert fb.bounds_without(0, bounds, forbidden, memo) is kept
