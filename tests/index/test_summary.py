"""summary.py: a summary's parts OR to the row they were made from, kept whole where dense,
sparse otherwise, and merged into one only beyond MAX_PARTS."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.index.summary import DENSE, MAX_PARTS, NOTHING, of_parts, of_words, part_bytes

N_WORDS = 40


def _row(words: dict[int, int]) -> np.ndarray:
    row = np.zeros(N_WORDS, dtype=np.uint32)
    for w, bits in words.items():
        row[w] = bits
    return row


_ROWS = st.dictionaries(st.integers(0, N_WORDS - 1), st.integers(1, 2**32 - 1), max_size=N_WORDS).map(_row)


@settings(deadline=None)  # (numba: the first OR loads the kernel)
@given(_ROWS)
def test_of_words_keeps_the_row(row):
    s = of_words(row.copy(), (3,))
    assert s.pops == (3,)
    out = np.zeros(N_WORDS, dtype=np.uint32)
    s.or_into(out)
    assert out.tolist() == row.tolist()
    n = np.count_nonzero(row)
    assert len(s.parts) == (0 if n == 0 else 1)
    if n:
        assert isinstance(s.parts[0], tuple) == (n * DENSE <= N_WORDS)


@settings(deadline=None)
@given(st.lists(_ROWS, max_size=2 * MAX_PARTS), st.booleans())
def test_of_parts_ors_as_its_parts_and_merges_past_max_parts(rows, sparse):
    parts = [of_words(r.copy(), ()).parts[0] for r in rows if r.any()] if sparse else [r.copy() for r in rows]
    s = of_parts(list(parts), N_WORDS, (1, 2))
    expected = np.zeros(N_WORDS, dtype=np.uint32)
    for r in rows:
        expected |= r
    out = np.zeros(N_WORDS, dtype=np.uint32)
    s.or_into(out)
    assert out.tolist() == expected.tolist() and s.pops == (1, 2)
    assert len(s.parts) == (len(parts) if len(parts) <= MAX_PARTS else int(expected.any()))


def test_the_dense_boundary_and_part_bytes():
    """A row with exactly 1/DENSE of its words set stays sparse; one word more is kept whole."""
    at = _row({w: 1 for w in range(N_WORDS // DENSE)})
    sparse = of_words(at, ())
    assert isinstance(sparse.parts[0], tuple) and part_bytes(sparse.parts[0]) == sum(a.nbytes for a in sparse.parts[0])
    past = _row({w: 1 for w in range(N_WORDS // DENSE + 1)})
    dense = of_words(past, ())
    assert dense.parts[0] is past and part_bytes(past) == past.nbytes
    assert NOTHING == of_words(np.zeros(N_WORDS, dtype=np.uint32), ())
