"""walk.py's trie helpers against numpy (the mask walks themselves are checked through every
index test: test_token_index, test_stack_index, test_pushdown_walk)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.index.trie import TokenTrie
from constrain.index.walk import readable_subtrees_within

_TRIE = TokenTrie([b"a", b"ab", b"abc", b"b", b"ba", b"c", b"ca", b"cab", b"cb", b"\xe2\x82", b"\xe2\x82\xac", b"x y"])


def _numpy(nodes, trie, reads, limit) -> bool:
    read = nodes[reads[trie.byte[nodes]]]
    return int((trie.end[read] - read).sum()) + nodes.size // 8 <= limit


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, _TRIE.n_nodes - 1), max_size=40, unique=True),
    st.sets(st.integers(0, 255), max_size=8),
    st.integers(-1, 30),
)
def test_readable_subtrees_within_is_the_numpy_count(picked, readable, limit):
    nodes = np.array(sorted(picked), dtype=np.int32)
    reads = np.zeros(256, dtype=np.bool_)
    reads[list(readable | {ord("a"), ord("c")})] = True
    assert readable_subtrees_within(nodes, _TRIE.byte, _TRIE.end, reads, limit) == _numpy(nodes, _TRIE, reads, limit)


def test_readable_subtrees_within_on_the_real_vocabulary(llama3):
    trie = TokenTrie(llama3.token_bytes, llama3.special_ids)
    rng = np.random.default_rng(5)
    reads = rng.random(256) < 0.3
    for size in (1, 50, 2000, 20000):
        nodes = np.unique(rng.integers(1, trie.n_nodes, size)).astype(np.int32)
        for limit in (0, 100, 16384, 10**7):
            assert readable_subtrees_within(nodes, trie.byte, trie.end, reads, limit) == _numpy(nodes, trie, reads, limit)
