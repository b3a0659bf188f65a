"""DFA arrays in canonical form, in numba: dead states trimmed, states numbered in BFS order
from the start (columns in order), equal columns merged. Minimal DFAs in this form have equal
arrays exactly when their languages are equal (minimize.py produces them; glue.py and the key
trie reach it without a refinement where the DFA is known to be minimal already).

Indices come from validated tables (entries -1..n-1); CI runs the tests once with
NUMBA_BOUNDSCHECK=1.
"""

from __future__ import annotations

import numba
import numpy as np


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


@numba.njit(cache=True, nogil=True)
def compact(classes, table, accepting):
    """For a DFA known to be minimal: its reachable part renumbered as quotient numbers it and
    equal columns merged, as `minimal` returns it, without the refinement."""
    ident = np.arange(table.shape[0]).astype(np.int64)
    new_table, new_acc = quotient(table, ident, accepting)
    col_of, keep = merge_columns(new_table)
    merged = np.empty(classes.shape[0], dtype=np.int32)
    for x in range(classes.shape[0]):
        merged[x] = col_of[classes[x]]
    out = np.empty((new_table.shape[0], keep.shape[0]), dtype=np.int32)
    for q in range(new_table.shape[0]):
        for j in range(keep.shape[0]):
            out[q, j] = new_table[q, keep[j]]
    return merged, out, new_acc
