"""Two automata of one grammar fed the same tokens: their rows must agree at every step (a warm
one given learned tables against a cold one that computes everything itself)."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def assert_same_rows(warm, cold, vocab, token_ids: Sequence[int], label: object = "") -> None:
    """Rows of `warm` and `cold` equal before each token of `token_ids` (both then advance)."""
    sw = sc = warm.initial_state()
    for k, tid in enumerate(token_ids):
        assert np.array_equal(warm.mask_row(sw), cold.mask_row(sc)), (label, k)
        data = vocab.token_bytes[tid]
        sw, sc = warm.advance(sw, data), cold.advance(sc, data)
