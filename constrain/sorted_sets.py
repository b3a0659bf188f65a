"""Sets of ints as ascending arrays without repeats (trie nodes, bytes, states).

np.unique hashes in numpy 2.x: 62 us for 1,000 ints and 2 ms for 20,000 on these machines,
against 5 and 72 us for a sort and a comparison of neighbours. SQL's first masks merged pop
nodes with it (its hashing: 3.3 ms of a profile of five queries).
"""

from __future__ import annotations

import numpy as np


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (what np.unique returns, without its hashing)."""
    out = np.sort(values)
    if out.size > 1:
        keep = np.empty(out.size, dtype=np.bool_)
        keep[0] = True
        np.not_equal(out[1:], out[:-1], out=keep[1:])
        out = out[keep]
    return out
