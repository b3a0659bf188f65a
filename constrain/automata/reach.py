"""Reachability of an accepting state in a DFA over a subset of its columns (numba).

Indices are safe by construction: table entries are -1..n-1 (checked by `DFA`), `allowed` has
one entry per column.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def reaches_accepting(table, accepting, allowed):
    """Whether some accepting state is reachable from state 0 by columns with `allowed` set."""
    n, k = table.shape
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    seen[0] = True
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        q = stack[top]
        if accepting[q]:
            return True
        for c in range(k):
            t = table[q, c]
            if t >= 0 and allowed[c] and not seen[t]:
                seen[t] = True
                stack[top] = t
                top += 1
    return False
