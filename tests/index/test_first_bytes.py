"""Rows and boundaries after a greedy return: what starts with a forbidden byte is left out."""

from __future__ import annotations

import numpy as np

from constrain import Compiler
from constrain.index import first_bytes
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


def test_boundaries_of_many_states_keep_each_group_s_allowed_nodes(llama3):
    """States out of order, several groups, a forbidden set of many bytes: the groups each
    filtered on their own."""
    index = Compiler(llama3).index
    fb = index.first_bytes
    trie = index.trie
    rng = np.random.default_rng(3)
    nodes = np.sort(rng.choice(np.arange(1, trie.n_nodes), 500, replace=False)).astype(np.int32)
    states = rng.integers(0, 9, nodes.size).astype(np.int32)
    bounds = Boundaries.of(nodes, states, trie.byte[nodes])
    forbidden = sum(1 << b for b in b"abcdefghijklmnopqrstuvwxyz_0123456789")
    kept = fb.bounds_without(0, bounds, forbidden, {})
    first = np.array([_first_byte(trie, int(n)) for n in nodes])
    want = {}
    for n, q, b in zip(nodes.tolist(), states.tolist(), first.tolist()):
        if not forbidden >> b & 1:
            want.setdefault(q, []).append(n)
    assert [(q, g.tolist()) for q, g, _ in kept.groups] == sorted(want.items())
    row = fb.starting_with(forbidden)
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")
    expected = np.array([bool(t) and bool(forbidden >> t[0] & 1) for t in llama3.token_bytes])
    assert np.array_equal(bits[: llama3.size].astype(bool), expected) and not bits[llama3.size :].any()


def _first_byte(trie, node: int) -> int:
    """The byte of the depth-1 node whose subtree holds `node`."""
    roots = trie.root[trie.root >= 0]
    return int(trie.byte[roots[(roots <= node) & (trie.end[roots] > node)][0]])


def test_rows_of_few_bytes_and_of_many_agree(llama3, monkeypatch):
    """A few forbidden bytes are OR-ed from per-byte rows, many gathered at once: the same rows
    (special tokens, whose first byte is their virtual spelling's, included)."""
    index = Compiler(llama3).index
    token_first, tries = index.first_bytes._token_first, (index.trie, *(sl.rest for sl in index.slices))
    few = first_bytes.FirstBytes(token_first, tries)  # (fresh: no rows kept from other tests)
    gathered = first_bytes.FirstBytes(token_first, tries)
    for text in (b"=", b"=>", b"<>=!", b"\x00\xff", b"abcdefgh", b" \xf5\xf6\xf7\xf8"):
        forbidden = sum(1 << b for b in text)
        monkeypatch.setattr(first_bytes, "FEW_BYTES", 8)
        row = few.starting_with(forbidden)
        monkeypatch.setattr(first_bytes, "FEW_BYTES", -1)
        assert np.array_equal(row, gathered.starting_with(forbidden)), text
    assert len(few._byte_rows) > 10 and not gathered._byte_rows


def test_each_node_knows_its_tokens_first_byte(llama3):
    """Per trie (the full one and each slice's rest): each node that ends a token has that
    token's first byte."""
    index = Compiler(llama3).index
    special = set(llama3.special_ids)
    for tid, trie in enumerate((index.trie, *(sl.rest for sl in index.slices))):
        first = index.first_bytes._node_first[tid]
        assert first.shape == (trie.n_nodes,)
        checked = 0
        for n in range(0, trie.n_nodes, 7):
            for t in trie.tok_ids[trie.tok_ptr[n] : trie.tok_ptr[n + 1]].tolist():
                if t not in special and llama3.token_bytes[t]:
                    assert first[n] == llama3.token_bytes[t][0], (tid, n, t)
                    checked += 1
        assert checked > 1000 or tid > 0
