"""sparse_or.py: a sparse row OR-ed into a whole one, pair by pair, warmed for both index types."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.index.sparse_or import or_sparse, warm_or_sparse


@settings(deadline=None)  # (numba: the first call loads the kernel)
@given(st.lists(st.tuples(st.integers(0, 39), st.integers(0, 2**32 - 1)), max_size=60), st.sampled_from([np.int64, np.int32]))
def test_or_sparse_ors_each_pair_in_turn(pairs, dtype):
    words = np.arange(40, dtype=np.uint32) * np.uint32(0x01010101)
    expected = words.copy()
    for w, b in pairs:  # (repeated indices too: each OR counts, unlike numpy's fancy |=)
        expected[w] |= np.uint32(b)
    idx = np.array([w for w, _ in pairs], dtype=dtype)
    bits = np.array([b for _, b in pairs], dtype=np.uint32)
    or_sparse(words, idx, bits)
    assert words.tolist() == expected.tolist()


def test_or_sparse_is_warmed_for_both_index_types():
    warm_or_sparse()
    before = list(or_sparse.signatures)
    words = np.zeros(4, dtype=np.uint32)
    bits = np.ones(2, dtype=np.uint32)
    for idx in (np.array([0, 3]), np.array([1, 2], dtype=np.int32), np.nonzero(words == 0)[0][:2]):
        or_sparse(words, idx, bits)
    assert list(or_sparse.signatures) == before
    assert words.tolist() == [1, 1, 1, 1]
