"""Node-set loops (index/node_sets.py) against numpy: the same sets, int32 through the numba
loops and other dtypes through numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.index.node_sets import ascending, merged

_SETS = st.lists(st.integers(0, 400), max_size=60).map(lambda v: np.array(sorted(set(v)), dtype=np.int32))


@settings(deadline=None)  # (the first example compiles the loop)
@given(_SETS, _SETS)
def test_merged_is_the_union(a, b):
    got = merged(a, b)
    assert got.dtype == np.int32
    assert np.array_equal(got, np.union1d(a, b))
    assert np.array_equal(merged(a.astype(np.int64), b.astype(np.int64)), np.union1d(a, b))


@settings(deadline=None)
@given(st.lists(st.integers(0, 50), max_size=30))
def test_ascending_means_increasing_without_repeats(values):
    want = all(x < y for x, y in zip(values, values[1:]))
    assert ascending(np.array(values, dtype=np.int32)) == want
    assert ascending(np.array(values, dtype=np.int64)) == want
