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

from .canonical import merge_columns, quotient, trim


# A refinable partition is one int64 array P of shape (6, size + 1): rows ELEMS (elements,
# grouped by set), LOC (where each element is in ELEMS), SIDX (its set), FIRST / END / MID per
# set (its slice of ELEMS; marked elements come first, up to MID). One array, not six, because
# numba counts references on every array passed to a call: in these loops that cost more than
# the work.
ELEMS, LOC, SIDX, FIRST, END, MID = range(6)


@numba.njit(cache=True, nogil=True)
def _partition(size):
    p = np.zeros((6, size + 1), dtype=np.int64)
    for i in range(size):
        p[ELEMS, i] = i
        p[LOC, i] = i
    return p


@numba.njit(cache=True, nogil=True)
def _mark_all(p, touched, elements, lo, hi, through):
    """Mark elements[through[k]] for k in lo..hi (through[k] itself if `through` is empty);
    touched[0] counts the sets marked for the first time, listed in touched[1:]."""
    for k in range(lo, hi):
        e = through[k] if through.shape[0] else k
        e = elements[e] if elements.shape[0] else e
        s = p[SIDX, e]
        i = p[LOC, e]
        j = p[MID, s]
        if i >= j:
            other = p[ELEMS, j]
            p[ELEMS, i] = other
            p[LOC, other] = i
            p[ELEMS, j] = e
            p[LOC, e] = j
            p[MID, s] = j + 1
            if j == p[FIRST, s]:
                touched[0] += 1
                touched[touched[0]] = s


@numba.njit(cache=True, nogil=True)
def _split(p, touched, n_sets):
    """Split every touched set into its marked and unmarked parts; the smaller part becomes a
    new set appended at index n_sets (so a set already used as a splitter keeps the bigger
    part, and only the smaller one is queued). Returns the new number of sets."""
    for k in range(1, touched[0] + 1):
        s = touched[k]
        m = p[MID, s]
        if m == p[END, s]:
            p[MID, s] = p[FIRST, s]
            continue
        z = n_sets
        n_sets += 1
        if m - p[FIRST, s] <= p[END, s] - m:
            p[FIRST, z] = p[FIRST, s]
            p[END, z] = m
            p[FIRST, s] = m
        else:
            p[FIRST, z] = m
            p[END, z] = p[END, s]
            p[END, s] = m
        p[MID, s] = p[FIRST, s]
        p[MID, z] = p[FIRST, z]
        for i in range(p[FIRST, z], p[END, z]):
            p[SIDX, p[ELEMS, i]] = z
    touched[0] = 0
    return n_sets


@numba.njit(cache=True, nogil=True)
def _refine(n, tails, labels, heads, accepting, n_labels):
    m = tails.shape[0]
    none = np.empty(0, dtype=np.int64)
    touched = np.zeros(max(n, m) + 2, dtype=np.int64)
    # Blocks: a refinable partition of the states, first split by acceptance.
    blocks = _partition(n)
    blocks[END, 0] = n
    acc = np.flatnonzero(accepting).astype(np.int64)
    _mark_all(blocks, touched, none, 0, acc.shape[0], acc)
    n_blocks = _split(blocks, touched, 1)
    if m == 0:
        return blocks[SIDX, :n].copy()
    # Cords: a refinable partition of the transitions, initially by label (counting sort).
    cords = _partition(m)
    count = np.zeros(n_labels + 1, dtype=np.int64)
    for t in range(m):
        count[labels[t] + 1] += 1
    for c in range(n_labels):
        count[c + 1] += count[c]
    n_cords = 0
    for c in range(n_labels):
        if count[c + 1] > count[c]:
            cords[FIRST, n_cords] = count[c]
            cords[END, n_cords] = count[c + 1]
            cords[MID, n_cords] = count[c]
            n_cords += 1
    fill = count[:-1].copy()
    for t in range(m):
        i = fill[labels[t]]
        fill[labels[t]] = i + 1
        cords[ELEMS, i] = t
        cords[LOC, t] = i
    for c in range(n_cords):
        for i in range(cords[FIRST, c], cords[END, c]):
            cords[SIDX, cords[ELEMS, i]] = c
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
        _mark_all(blocks, touched, tails, cords[FIRST, c], cords[END, c], cords[ELEMS])
        n_blocks = _split(blocks, touched, n_blocks)
        c += 1
        while b < n_blocks:
            for i in range(blocks[FIRST, b], blocks[END, b]):
                s = blocks[ELEMS, i]
                _mark_all(cords, touched, none, in_ptr[s], in_ptr[s + 1], in_list)
            n_cords = _split(cords, touched, n_cords)
            b += 1
    return blocks[SIDX, :n].copy()


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
        table.shape[1],
    )


@numba.njit(cache=True, nogil=True)
def _acyclic_blocks(table, accepting, m):
    """Block id per state of the coarsest equivalence when the trimmed `table` (with `m`
    transitions) has no cycle, and True; else (anything, False). Without cycles, states are
    settled after all of their successors (leaves first), and two states are equivalent
    exactly when they agree on acceptance and on their successors' blocks: one pass with a
    hash of those rows, O(states x columns), where partition refinement pays a log factor
    (finite languages: enums, strings with a maximum length and their products)."""
    n, k = table.shape
    blocks = np.full(n, -1, dtype=np.int64)
    # Predecessors (one entry per transition) and the successors left to settle.
    in_ptr = np.zeros(n + 1, dtype=np.int64)
    left = np.zeros(n, dtype=np.int64)
    for q in range(n):
        for j in range(k):
            t = table[q, j]
            if t >= 0:
                in_ptr[t + 1] += 1
                left[q] += 1
    for q in range(n):
        in_ptr[q + 1] += in_ptr[q]
    fill = in_ptr[:-1].copy()
    preds = np.empty(m, dtype=np.int64)
    for q in range(n):
        for j in range(k):
            t = table[q, j]
            if t >= 0:
                preds[fill[t]] = q
                fill[t] += 1
    order = np.empty(n, dtype=np.int64)
    top = 0
    for q in range(n):
        if left[q] == 0:
            order[top] = q
            top += 1
    size = 1
    while size < 2 * n:
        size *= 2
    slots = np.full(size, -1, dtype=np.int64)  # a state holding each block's row
    mask = size - 1
    n_blocks = 0
    i = 0
    while i < top:
        q = order[i]
        i += 1
        h = np.int64(1 if accepting[q] else 2)
        for j in range(k):
            t = table[q, j]
            h = h * 1000003 + (blocks[t] if t >= 0 else -1)
        x = (h ^ (h >> 29)) & mask
        while True:
            r = slots[x]
            if r < 0:
                slots[x] = q
                blocks[q] = n_blocks
                n_blocks += 1
                break
            same = accepting[r] == accepting[q]
            if same:
                for j in range(k):
                    a = table[q, j]
                    b = table[r, j]
                    if (blocks[a] if a >= 0 else -1) != (blocks[b] if b >= 0 else -1):
                        same = False
                        break
            if same:
                blocks[q] = blocks[r]
                break
            x = (x + 1) & mask
        for e in range(in_ptr[q], in_ptr[q + 1]):
            p = preds[e]
            left[p] -= 1
            if left[p] == 0:
                order[top] = p
                top += 1
    return blocks, top == n


@numba.njit(cache=True, nogil=True)
def minimal(classes, table, accepting):
    """trim, merge_columns, equivalence_blocks, quotient and merge_columns again in one call
    (each numba call boxes its arrays: for the many small rule DFAs that cost more than the
    work). Returns (class per symbol, table, accepting, whether the start is live); when the
    start is dead the other results are empty."""
    table, start_live = trim(table, accepting)
    if not start_live:
        return np.empty(0, dtype=np.int32), table[:0].copy(), accepting[:0].copy(), False
    col_of, keep = merge_columns(table)
    n = table.shape[0]
    k = keep.shape[0]
    narrow = np.empty((n, k), dtype=np.int32)
    m = 0
    for q in range(n):
        for j in range(k):
            t = table[q, keep[j]]
            narrow[q, j] = t
            if t >= 0:
                m += 1
    blocks, acyclic = _acyclic_blocks(narrow, accepting, m)
    if not acyclic:
        # The transitions in row-major order, as np.nonzero(table >= 0) lists them.
        tails = np.empty(m, dtype=np.int64)
        labels = np.empty(m, dtype=np.int64)
        heads = np.empty(m, dtype=np.int64)
        i = 0
        for q in range(n):
            for j in range(k):
                t = narrow[q, j]
                if t >= 0:
                    tails[i] = q
                    labels[i] = j
                    heads[i] = t
                    i += 1
        blocks = _refine(n, tails, labels, heads, accepting, k)
    new_table, new_acc = quotient(narrow, blocks, accepting)
    col_of2, keep2 = merge_columns(new_table)
    merged = np.empty(classes.shape[0], dtype=np.int32)
    for x in range(classes.shape[0]):
        merged[x] = col_of2[col_of[classes[x]]]
    out = np.empty((new_table.shape[0], keep2.shape[0]), dtype=np.int32)
    for q in range(new_table.shape[0]):
        for j in range(keep2.shape[0]):
            out[q, j] = new_table[q, keep2[j]]
    return merged, out, new_acc, True
