"""Slice depth: how many units of a slice a DFA state can read, proved once per DFA (numba).

For a slice (see slices.py) and a DFA state q, `state_depths` returns L >= 0 when the walk
from q may take the slice's precomputed mask of the tokens of at most L units and skip every
slice token; -1 when that is not proved. Two cases:

  - L = cap (the most units of any slice token): every slice path of cap units from q stays
    alive (free text, keys beside named keys, a string that may still grow by cap characters);
    boundaries (states that call or return, `exits`) do not matter: every slice token is
    allowed anyway.
  - L < cap: every slice path of L units is alive and every path of L+1 units dies (the last
    characters a bounded string may take, or L = 0: no slice token at all), and no state
    after the first byte of such a path is an exit: a longer token cannot leave the rule.

The analysis reads the product of the DFA with the unit automaton over the *unit graph*: q -> p
when one unit leads from q to p. u(q), the units every path survives, is the distance to a
state where some unit dies (reverse BFS); "exactly L" holds when every successor is exact at
L-1, checked in BFS order. Cost: one pass over DFA states x (byte class, unit state) pairs.

numba does no bounds checking: indices come from the validated DFA (table < n_states, classes
< n_cols), unit automata validated by slices.py, and exits of length n_states (checked by the
caller); CI runs these tests once with NUMBA_BOUNDSCHECK=1.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, boundscheck=False)
def token_units(packed, end, tok1, tok_ptr, tok_ids, max_depth, unit_next, units):
    """Write into `units[t]` the number of units token t splits into (left as is, -1, where
    its bytes are not a sequence of whole units)."""
    n = packed.shape[0]
    ustate = np.empty(max_depth + 1, dtype=np.int32)
    count = np.empty(max_depth + 1, dtype=np.int32)
    ustate[0] = 0
    count[0] = 0
    i = 1
    while i < n:
        p = packed[i]
        d = p >> 8
        s = unit_next[ustate[d - 1], p & 255]
        if s < 0:
            i = end[i]
            continue
        ustate[d] = s
        count[d] = count[d - 1] + (1 if s == 0 else 0)
        if s == 0:
            t = tok1[i]
            if t >= 0:
                units[t] = count[d]
            elif t == -2:
                for k in range(tok_ptr[i], tok_ptr[i + 1]):
                    units[tok_ids[k]] = count[d]
        i += 1


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _unit_pairs(byte_classes, unit_next, n_cols):
    """Per unit state s, the distinct (byte class, next unit state) of its allowed bytes:
    pairs[ptr[s]:ptr[s+1]]."""
    k = unit_next.shape[0]
    seen = np.zeros((n_cols, k), dtype=np.int32)  # stamp s+1 per (class, next)
    ptr = np.zeros(k + 1, dtype=np.int32)
    cls = np.empty(k * 256, dtype=np.int32)
    nxt = np.empty(k * 256, dtype=np.int32)
    m = 0
    for s in range(k):
        for b in range(256):
            t = unit_next[s, b]
            if t < 0:
                continue
            c = byte_classes[b]
            if seen[c, t] != s + 1:
                seen[c, t] = s + 1
                cls[m] = c
                nxt[m] = t
                m += 1
        ptr[s + 1] = m
    return ptr, cls, nxt


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _explore(q, table, exits, k, ptr, pcls, pnxt, ok, inner_exit, succ, is_succ, seen, stack):
    """Read every unit from q in the product with the unit automaton: set ok[q] and
    inner_exit[q], write q's distinct successors into `succ`; returns how many."""
    n_succ = 0
    stack[0] = q * k
    seen[q * k] = q + 1
    top = 1
    while top > 0:
        top -= 1
        p = stack[top] // k
        s = stack[top] - p * k
        if s != 0 and exits[p]:
            inner_exit[q] = True
        for j in range(ptr[s], ptr[s + 1]):
            t = table[p, pcls[j]]
            if t < 0:
                ok[q] = False
            elif pnxt[j] == 0:
                if is_succ[t] != q + 1:
                    is_succ[t] = q + 1
                    succ[n_succ] = t
                    n_succ += 1
            else:
                x = t * k + pnxt[j]
                if seen[x] != q + 1:
                    seen[x] = q + 1
                    stack[top] = x
                    top += 1
    return n_succ


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _grown(edges, need):
    out = np.empty(max(need, 2 * edges.shape[0]), dtype=np.int32)
    out[:edges.shape[0]] = edges
    return out


@numba.njit(cache=True, nogil=True, boundscheck=False)
def state_depths(table, byte_classes, exits, unit_next, cap):
    """Per DFA state: L in 0..cap as described in the module docstring, or -1."""
    n = table.shape[0]
    k = unit_next.shape[0]
    ptr, pcls, pnxt = _unit_pairs(byte_classes, unit_next, table.shape[1])

    # 1. Per state q: does every unit read alive (ok), does a byte after the first of a unit
    #    meet an exit (inner_exit), and the unit graph's edges q -> p (deduplicated, CSR).
    ok = np.ones(n, dtype=np.bool_)
    inner_exit = np.zeros(n, dtype=np.bool_)
    edge_ptr = np.zeros(n + 1, dtype=np.int32)
    edges = np.empty(max(16, 2 * n), dtype=np.int32)
    succ = np.empty(n, dtype=np.int32)  # q's successors, before they join `edges`
    is_succ = np.zeros(n, dtype=np.int32)  # stamp q+1 per successor
    seen = np.zeros(n * k, dtype=np.int32)  # stamp q+1 per product state (p, s)
    stack = np.empty(n * k, dtype=np.int32)
    for q in range(n):
        n_succ = _explore(q, table, exits, k, ptr, pcls, pnxt, ok, inner_exit, succ, is_succ, seen, stack)
        start = edge_ptr[q]
        if start + n_succ > edges.shape[0]:
            edges = _grown(edges, start + n_succ)
        edges[start:start + n_succ] = succ[:n_succ]
        edge_ptr[q + 1] = start + n_succ
    n_edges = edge_ptr[n]

    # 2. Reverse edges (CSR by target) for the BFS.
    rev_ptr = np.zeros(n + 1, dtype=np.int32)
    for e in range(n_edges):
        rev_ptr[edges[e] + 1] += 1
    for p in range(n):
        rev_ptr[p + 1] += rev_ptr[p]
    fill = rev_ptr[:n].copy()
    rev = np.empty(max(1, n_edges), dtype=np.int32)
    for q in range(n):
        for e in range(edge_ptr[q], edge_ptr[q + 1]):
            p = edges[e]
            rev[fill[p]] = q
            fill[p] += 1

    # 3. u(q) by BFS from the states where some unit dies; unreached within cap: >= cap.
    u = np.full(n, -1, dtype=np.int32)
    order = np.empty(n, dtype=np.int32)
    tail = 0
    for q in range(n):
        if not ok[q]:
            u[q] = 0
            order[tail] = q
            tail += 1
    head = 0
    while head < tail:
        p = order[head]
        head += 1
        if u[p] + 1 >= cap:
            continue
        for e in range(rev_ptr[p], rev_ptr[p + 1]):
            q = rev[e]
            if u[q] < 0:
                u[q] = u[p] + 1
                order[tail] = q
                tail += 1

    # 4. Exactness in BFS order (successors of an exact q have smaller u, so come first).
    out = np.full(n, -1, dtype=np.int32)
    for j in range(tail):
        q = order[j]
        if inner_exit[q]:
            continue
        exact = True
        for e in range(edge_ptr[q], edge_ptr[q + 1]):
            p = edges[e]
            # u = 0 (some unit dies) is exact only if no unit is readable at all.
            if u[q] == 0 or u[p] != u[q] - 1 or out[p] < 0 or exits[p]:
                exact = False
                break
        if exact:
            out[q] = u[q]
    for q in range(n):
        if u[q] < 0:
            out[q] = cap
    return out
