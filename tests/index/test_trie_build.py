"""index/trie_build.py: the node arrays equal those of a trie of nested dicts laid out
depth-first, children by ascending byte (an oracle sharing no code with the numba pass)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.index.trie_build import sorted_nodes


def _dict_trie(tokens: list[bytes], ids: list[int]) -> tuple[list[int], ...]:
    root: dict = {}
    for tb, tid in zip(tokens, ids):
        node = root
        for b in tb:
            node = node.setdefault(b, {})
        node.setdefault(None, []).append(tid)
    byte, depth, end, count, tok_ids = [], [], [], [], []

    def visit(node: dict, b: int, d: int) -> None:
        i = len(byte)
        byte.append(b)
        depth.append(d)
        end.append(0)
        here = sorted(node.get(None, []))
        count.append(len(here))
        tok_ids.extend(here)
        for child in sorted(k for k in node if k is not None):
            visit(node[child], child, d + 1)
        end[i] = len(byte)

    visit(root, 0, 0)
    return byte, depth, end, count, tok_ids


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=7), max_size=60), st.randoms(use_true_random=False))
def test_nodes_equal_a_dict_tries_depth_first_layout(tokens, rnd):
    ids = sorted(rnd.sample(range(3 * len(tokens)), len(tokens)))  # (ascending, as the trie gives them; with gaps)
    got = sorted_nodes(tokens, ids)
    want = _dict_trie(tokens, ids)
    for name, g, w in zip(("byte", "depth", "end", "count", "tok_ids"), got, want):
        assert g.tolist() == w, name
    assert all(a.dtype == np.int32 for a in got)


def test_no_tokens_is_the_root_alone():
    byte, depth, end, count, tok_ids = sorted_nodes([], [])
    assert byte.tolist() == [0] and depth.tolist() == [0] and end.tolist() == [1] and count.tolist() == [0]
    assert tok_ids.size == 0


def test_a_real_vocabulary(llama3):
    tokens = [b for b in llama3.token_bytes if b]
    ids = [i for i, b in enumerate(llama3.token_bytes) if b]
    byte, depth, end, count, tok_ids = sorted_nodes(tokens, ids)
    assert int(count.sum()) == len(tokens) == tok_ids.size
    assert sorted(tok_ids.tolist()) == ids
    assert byte.size == 1 + len({tb[:k] for tb in tokens for k in range(1, len(tb) + 1)})  # one node per distinct prefix
