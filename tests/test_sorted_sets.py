"""sorted_unique is np.unique without its hashing: the same values, dtype and order, by a sort or
(values under a known bound, many of them) by a bitmap."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from constrain.sorted_sets import sorted_unique


@given(hnp.arrays(st.sampled_from([np.int32, np.int64, np.uint8]), st.integers(0, 300), elements=st.integers(0, 255)))
def test_sorted_unique_is_np_unique(values):
    got = sorted_unique(values)
    want = np.unique(values)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


@given(hnp.arrays(st.sampled_from([np.int32, np.int64]), st.integers(0, 300), elements=st.integers(0, 99)),
       st.sampled_from([None, 100, 1000, 10**6]))
def test_sorted_unique_under_a_bound_is_np_unique(values, bound):
    got = sorted_unique(values, bound)
    want = np.unique(values)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)
