"""word_graph.py's subset construction over word positions, and the minimization, in numba.

Graph states 0..n-1 are joined by edges that each spell a word (`syms[e_ptr[e]:e_ptr[e+1]]`,
symbols 0..n_symbols-1; an empty word is an epsilon edge). A position p is "about to read
syms[p]"; position P = len(syms) stands for "at the end state". A DFA state is the sorted set
of positions in a closure; the sets live in one flat array found again by hash (subset.py's
layout and helpers). Every index comes from word_graph._flatten's arrays: states 0..n-1,
offsets ascending over syms, symbols below n_symbols.
"""

from __future__ import annotations

import numba
import numpy as np

from .minimize import minimal
from .subset import TOO_MANY, _grow, _slot, _sorted_hash

DONE = 0
__all__ = ["DONE", "TOO_MANY", "determinize_words"]


@numba.njit(cache=True, nogil=True)
def determinize_words(n_states, start, end, e_src, e_dst, e_ptr, syms, n_symbols, max_states, minimize):
    """(class per symbol, table, accepting, start live, status) of the minimal DFA, as
    minimize.minimal returns them; status TOO_MANY when a new state would be number
    `max_states` (the other results are then empty, as they are without `minimize`: a
    check of the limit alone)."""
    n_edges = e_src.shape[0]
    end_pos = syms.shape[0]
    edge_of = np.empty(end_pos, dtype=np.int64)
    for e in range(n_edges):
        for p in range(e_ptr[e], e_ptr[e + 1]):
            edge_of[p] = e
    out_ptr = np.zeros(n_states + 1, dtype=np.int64)
    for e in range(n_edges):
        out_ptr[e_src[e] + 1] += 1
    for u in range(n_states):
        out_ptr[u + 1] += out_ptr[u]
    out_e = np.empty(n_edges, dtype=np.int64)
    fill = out_ptr[:-1].copy()
    for e in range(n_edges):
        out_e[fill[e_src[e]]] = e
        fill[e_src[e]] += 1
    # Columns: the symbols in ascending order, one shared column for those no word reads
    # (the order the general construction gives its classes, so minimal numbers alike).
    used = np.zeros(n_symbols, dtype=np.bool_)
    for p in range(end_pos):
        used[syms[p]] = True
    col_of = np.empty(n_symbols, dtype=np.int32)
    n_cols = 0
    unused_col = -1
    for x in range(n_symbols):
        if used[x]:
            col_of[x] = n_cols
            n_cols += 1
        else:
            if unused_col < 0:
                unused_col = n_cols
                n_cols += 1
            col_of[x] = unused_col

    # (a check of the limit keeps no transitions: rows one column wide, never written)
    rows = np.full((64, n_cols if minimize else 1), -1, dtype=np.int32)
    set_ptr = np.zeros(65, dtype=np.int64)
    set_data = np.empty(64 + end_pos, dtype=np.int64)
    slots = np.full((256, 2), -1, dtype=np.int64)
    pos_tag = np.zeros(end_pos + 1, dtype=np.int64)
    state_tag = np.zeros(n_states, dtype=np.int64)
    stack = np.empty(n_states, dtype=np.int64)
    out = np.empty(end_pos + 1, dtype=np.int64)
    sym_tag = np.zeros(n_symbols, dtype=np.int64)
    sym_list = np.zeros(n_symbols, dtype=np.int64)  # (row -1 reads one empty bucket: symbol 0's)
    sym_count = np.zeros(n_symbols, dtype=np.int64)
    sym_begin = np.zeros(n_symbols, dtype=np.int64)
    bucket = np.empty(end_pos + 1, dtype=np.int64)
    tag = 1

    cnt = 0
    k = -1  # (row -1: the start set, the closure of the start state, read from nowhere)
    while k < cnt:
        # The state's positions bucketed by symbol (a counting sort, in position order):
        # each symbol's targets come from its bucket, not from a pass over the whole set
        # (states at the start of a member hold one position per optional member left).
        lo, hi = (set_ptr[k], set_ptr[k + 1]) if k >= 0 else (0, 0)
        n_syms = 0 if k >= 0 else 1
        for i in range(lo, hi):
            p = set_data[i]
            if p != end_pos:
                x = syms[p]
                if sym_tag[x] != k + 1:
                    sym_tag[x] = k + 1
                    sym_list[n_syms] = x
                    sym_count[x] = 0
                    n_syms += 1
                sym_count[x] += 1
        total = 0
        for t in range(n_syms):
            x = sym_list[t]
            sym_begin[x] = total
            total += sym_count[x]
            sym_count[x] = sym_begin[x]  # (now the fill pointer)
        for i in range(lo, hi):
            p = set_data[i]
            if p != end_pos:
                x = syms[p]
                bucket[sym_count[x]] = p
                sym_count[x] += 1
        for t in range(n_syms):
            x = sym_list[t]
            tag += 1
            m = 0
            top = 0
            if k < 0:
                state_tag[start] = tag
                stack[0] = start
                top = 1
            for b in range(sym_begin[x], sym_count[x]):
                p = bucket[b]
                e = edge_of[p]
                if p + 1 < e_ptr[e + 1]:
                    if pos_tag[p + 1] != tag:
                        pos_tag[p + 1] = tag
                        out[m] = p + 1
                        m += 1
                elif state_tag[e_dst[e]] != tag:
                    state_tag[e_dst[e]] = tag
                    stack[top] = e_dst[e]
                    top += 1
            while top > 0:
                top -= 1
                u = stack[top]
                if u == end and pos_tag[end_pos] != tag:
                    pos_tag[end_pos] = tag
                    out[m] = end_pos
                    m += 1
                for i in range(out_ptr[u], out_ptr[u + 1]):
                    e = out_e[i]
                    if e_ptr[e + 1] > e_ptr[e]:
                        p = e_ptr[e]
                        if pos_tag[p] != tag:
                            pos_tag[p] = tag
                            out[m] = p
                            m += 1
                    elif state_tag[e_dst[e]] != tag:
                        state_tag[e_dst[e]] = tag
                        stack[top] = e_dst[e]
                        top += 1
            h = _sorted_hash(out, m)
            j = _slot(slots, set_ptr, set_data, out, m, h)
            if slots[j, 1] < 0:
                if cnt >= max_states:
                    return (np.empty(0, dtype=np.int32), rows[:0].copy(), np.zeros(0, dtype=np.bool_), False,
                            TOO_MANY)
                if cnt + 1 >= rows.shape[0] or set_ptr[cnt] + m > set_data.shape[0] or 2 * (cnt + 1) > slots.shape[0]:
                    rows, set_ptr, set_data, slots = _grow(rows, set_ptr, set_data, slots, cnt, m)
                    j = _slot(slots, set_ptr, set_data, out, m, h)  # (the table has grown)
                base = set_ptr[cnt]
                for i in range(m):
                    set_data[base + i] = out[i]
                set_ptr[cnt + 1] = base + m
                slots[j, 0] = h
                slots[j, 1] = cnt
                cnt += 1
            if minimize and k >= 0:
                rows[k, col_of[x]] = slots[j, 1]
        k += 1

    if not minimize:
        return np.empty(0, dtype=np.int32), rows[:0].copy(), np.zeros(0, dtype=np.bool_), True, DONE
    accepting = np.zeros(cnt, dtype=np.bool_)
    for q in range(cnt):
        if set_ptr[q + 1] > set_ptr[q] and set_data[set_ptr[q + 1] - 1] == end_pos:
            accepting[q] = True  # (sorted: the end marker, the largest position, comes last)
    merged, table, acc, live = minimal(col_of, rows[:cnt].copy(), accepting)
    return merged, table, acc, live, DONE
