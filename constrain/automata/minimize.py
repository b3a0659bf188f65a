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


@numba.njit(cache=True, nogil=True, inline="always")
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


@numba.njit(cache=True, nogil=True)
def trim(table, accepting):
    """Copy of `table` with every edge into a state that cannot reach an accepting state
    removed (reverse search over defined edges); returns (table, whether the start is live)."""
    n, k = table.shape
    in_ptr = np.zeros(n + 1, dtype=np.int64)
    for q in range(n):
        for c in range(k):
            t = table[q, c]
            if t >= 0:
                in_ptr[t + 1] += 1
    for q in range(n):
        in_ptr[q + 1] += in_ptr[q]
    fill = in_ptr[:-1].copy()
    preds = np.empty(in_ptr[n], dtype=np.int64)
    for q in range(n):
        for c in range(k):
            t = table[q, c]
            if t >= 0:
                preds[fill[t]] = q
                fill[t] += 1
    live = accepting.copy()
    stack = np.empty(n, dtype=np.int64)
    top = 0
    for q in range(n):
        if live[q]:
            stack[top] = q
            top += 1
    while top > 0:
        top -= 1
        t = stack[top]
        for i in range(in_ptr[t], in_ptr[t + 1]):
            q = preds[i]
            if not live[q]:
                live[q] = True
                stack[top] = q
                top += 1
    out = np.empty((n, k), dtype=np.int32)
    for q in range(n):
        for c in range(k):
            t = table[q, c]
            out[q, c] = t if t >= 0 and live[t] else -1
    return out, live[0]


@numba.njit(cache=True, nogil=True)
def quotient(table, block_of, accepting):
    """The automaton of the blocks reachable from state 0, numbered in BFS order (columns in
    order), so equal languages give equal arrays."""
    n, k = table.shape
    pos = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    out = np.empty((n, k), dtype=np.int32)
    pos[block_of[0]] = 0
    order[0] = 0
    cnt = 1
    i = 0
    while i < cnt:
        q = order[i]
        for c in range(k):
            t = table[q, c]
            if t < 0:
                out[i, c] = -1
                continue
            b = block_of[t]
            j = pos[b]
            if j < 0:
                j = cnt
                pos[b] = j
                order[cnt] = t
                cnt += 1
            out[i, c] = j
        i += 1
    acc = np.empty(cnt, dtype=np.bool_)
    for i in range(cnt):
        acc[i] = accepting[order[i]]
    return out[:cnt].copy(), acc


@numba.njit(cache=True, nogil=True)
def merge_columns(table):
    """(new column per column, columns kept): identical columns share the id of the first."""
    n, k = table.shape
    col_of = np.empty(k, dtype=np.int64)
    keep = np.empty(k, dtype=np.int64)
    hashes = np.empty(k, dtype=np.int64)
    n_keep = 0
    for c in range(k):
        h = 0
        for q in range(n):
            h = h * 1000003 + table[q, c] + 1
        j = -1
        for i in range(n_keep):
            if hashes[i] != h:
                continue
            other = keep[i]
            same = True
            for q in range(n):
                if table[q, c] != table[q, other]:
                    same = False
                    break
            if same:
                j = i
                break
        if j < 0:
            j = n_keep
            keep[j] = c
            hashes[j] = h
            n_keep += 1
        col_of[c] = j
    return col_of, keep[:n_keep].copy()
