"""DFA minimization by partition refinement over blocks of states and cords of transitions.

This is Hopcroft's "process the smaller half" refinement in the form that handles partial
transition functions directly (Valmari & Lehtinen, 2008): transitions are grouped by label into
cords, cords split blocks, blocks split cords. O(m log n) for m transitions; dead transitions
(-1) simply do not exist, so no sink state is needed. Runs in numba (cached on disk).

numba does no bounds checking here: every index comes from arrays built in this module from a
validated table (entries in -1..n-1), and CI runs the tests once with NUMBA_BOUNDSCHECK=1.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _mark(e, elems, loc, sidx, first, mid, touched, n_touched):
    s = sidx[e]
    i = loc[e]
    j = mid[s]
    if i >= j:
        other = elems[j]
        elems[i] = other
        loc[other] = i
        elems[j] = e
        loc[e] = j
        mid[s] = j + 1
        if j == first[s]:
            touched[n_touched] = s
            n_touched += 1
    return n_touched


@numba.njit(cache=True, nogil=True)
def _split(elems, sidx, first, end, mid, touched, n_touched, n_sets):
    """Split every touched set into its marked and unmarked parts; the smaller part becomes a
    new set appended at index n_sets (so a set already used as a splitter keeps the bigger
    part, and only the smaller one is queued). Returns the new number of sets."""
    for k in range(n_touched):
        s = touched[k]
        m = mid[s]
        if m == end[s]:
            mid[s] = first[s]
            continue
        z = n_sets
        n_sets += 1
        if m - first[s] <= end[s] - m:
            first[z] = first[s]
            end[z] = m
            first[s] = m
        else:
            first[z] = m
            end[z] = end[s]
            end[s] = m
        mid[s] = first[s]
        mid[z] = first[z]
        for i in range(first[z], end[z]):
            sidx[elems[i]] = z
    return n_sets


@numba.njit(cache=True, nogil=True)
def _refine(n, tails, labels, heads, accepting):
    m = tails.shape[0]
    # Blocks: a refinable partition of the states.
    b_elems = np.arange(n).astype(np.int64)
    b_loc = np.arange(n).astype(np.int64)
    b_sidx = np.zeros(n, dtype=np.int64)
    b_first = np.zeros(n + 1, dtype=np.int64)
    b_end = np.zeros(n + 1, dtype=np.int64)
    b_mid = np.zeros(n + 1, dtype=np.int64)
    b_end[0] = n
    touched = np.zeros(max(n, m) + 1, dtype=np.int64)
    nt = 0
    for s in range(n):
        if accepting[s]:
            nt = _mark(s, b_elems, b_loc, b_sidx, b_first, b_mid, touched, nt)
    n_blocks = _split(b_elems, b_sidx, b_first, b_end, b_mid, touched, nt, 1)
    if m == 0:
        return b_sidx
    # Cords: a refinable partition of the transitions, initially by label.
    order = np.argsort(labels, kind="mergesort")
    c_elems = order.astype(np.int64)
    c_loc = np.empty(m, dtype=np.int64)
    c_sidx = np.empty(m, dtype=np.int64)
    c_first = np.zeros(m + 1, dtype=np.int64)
    c_end = np.zeros(m + 1, dtype=np.int64)
    c_mid = np.zeros(m + 1, dtype=np.int64)
    n_cords = 0
    for i in range(m):
        t = c_elems[i]
        c_loc[t] = i
        if i == 0 or labels[t] != labels[c_elems[i - 1]]:
            if i > 0:
                c_end[n_cords - 1] = i
            c_first[n_cords] = i
            c_mid[n_cords] = i
            n_cords += 1
        c_sidx[t] = n_cords - 1
    c_end[n_cords - 1] = m
    # Incoming transitions per state.
    in_ptr = np.zeros(n + 1, dtype=np.int64)
    for t in range(m):
        in_ptr[heads[t] + 1] += 1
    for s in range(n):
        in_ptr[s + 1] += in_ptr[s]
    fill = in_ptr[:-1].copy()
    in_list = np.empty(m, dtype=np.int64)
    for t in range(m):
        in_list[fill[heads[t]]] = t
        fill[heads[t]] += 1
    b = 1
    c = 0
    while c < n_cords:
        nt = 0
        for i in range(c_first[c], c_end[c]):
            nt = _mark(tails[c_elems[i]], b_elems, b_loc, b_sidx, b_first, b_mid, touched, nt)
        n_blocks = _split(b_elems, b_sidx, b_first, b_end, b_mid, touched, nt, n_blocks)
        c += 1
        while b < n_blocks:
            nt = 0
            for i in range(b_first[b], b_end[b]):
                s = b_elems[i]
                for k in range(in_ptr[s], in_ptr[s + 1]):
                    nt = _mark(in_list[k], c_elems, c_loc, c_sidx, c_first, c_mid, touched, nt)
            n_cords = _split(c_elems, c_sidx, c_first, c_end, c_mid, touched, nt, n_cords)
            b += 1
    return b_sidx


def equivalence_blocks(table: np.ndarray, accepting: np.ndarray) -> np.ndarray:
    """Block id per state of the coarsest equivalence on a trimmed DFA (`table` entries -1..n-1)."""
    n, _ = table.shape
    tails, labels = np.nonzero(table >= 0)
    heads = table[tails, labels]
    return _refine(
        n,
        tails.astype(np.int64),
        labels.astype(np.int64),
        heads.astype(np.int64),
        accepting.astype(np.bool_),
    )
