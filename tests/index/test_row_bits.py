"""row_bits.py: the nonzero words and the token ids of a bitmask row, and the row of given ids."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from constrain.index.row_bits import nonzero_words, token_id_array, token_ids, words_of


@given(st.sets(st.integers(0, 32 * 40 - 1)))
def test_token_ids_are_the_set_bits(ids):
    words = np.zeros(40, dtype=np.uint32)
    for t in ids:
        words[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    assert token_ids(words) == sorted(ids)
    assert nonzero_words(words).tolist() == sorted({t >> 5 for t in ids})
    signed = words.view(np.int32)  # (a mask row's words are int32: bit 31 is the sign)
    assert token_id_array(signed).tolist() == sorted(ids)
    assert token_id_array(signed).dtype == np.intp


@given(st.one_of(st.lists(st.integers(0, 32 * 40 - 1), max_size=64), st.lists(st.integers(0, 32 * 40 - 1), min_size=65, max_size=300)),
       st.sampled_from([np.int64, np.int32]))
def test_words_of_sets_the_bits_of_the_ids(ids, dtype):
    """(Few ids and many, repeats included: the two ways words_of builds a row.)"""
    words = words_of(np.array(ids, dtype=dtype), 40)
    assert words.dtype == np.uint32 and words.shape == (40,)
    assert token_ids(words) == sorted(set(ids))
