"""row_bits.py: the nonzero words and the token ids of a bitmask row."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from constrain.index.row_bits import nonzero_words, token_ids


@given(st.sets(st.integers(0, 32 * 40 - 1)))
def test_token_ids_are_the_set_bits(ids):
    words = np.zeros(40, dtype=np.uint32)
    for t in ids:
        words[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    assert token_ids(words) == sorted(ids)
    assert nonzero_words(words).tolist() == sorted({t >> 5 for t in ids})
