"""marked_frames.py: token ids from bitmask words, marked frames of a stack."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from constrain.index.marked_frames import MarkedFrames, token_ids


@given(st.sets(st.integers(0, 32 * 40 - 1)))
def test_token_ids_are_the_set_bits(ids):
    words = np.zeros(40, dtype=np.uint32)
    for t in ids:
        words[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    assert token_ids(words) == sorted(ids)


def test_marked_frames_bottom_to_top():
    # A stack frame is (rule, state, parent, depth): rule 1 is marked.
    bottom = (1, 0, None, 0)
    middle = (2, 3, bottom, 1)
    top = (1, 5, middle, 2)
    frames = MarkedFrames([1])
    assert frames(top) == ((0, False), (2, True))
    assert frames(middle) == ((0, False),)
    assert frames(top) is frames(top)  # remembered
