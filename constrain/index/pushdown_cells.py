"""Stack cells for the pushdown walk (pushdown_walk.py): frames hash-consed on (state, parent),
so equal stacks are equal ints, and each cell's closure (the stacks its frame reaches by calls
and by its callees' returns before it returns itself) made once per walk. A cell whose own
state is a greedy rule's (a stack put under a CHECK frame: pushdown_walk.py) returns only
where that state's end allows the byte: its closure says so (memo_pops 2), the walk checks it.

Also the walk's lookups in the flattened tables (a state's next state, a greedy end's
refusals, the order its tails are read in) and its status codes: a full buffer, a limit or a
rule not flattened yet ends a walk with one, and its caller (pushdown_summary.py) retries,
raises or flattens the rule.
numba does no bounds checking: every write below checks its capacity first.
"""

from __future__ import annotations

import numba
import numpy as np

OK = 0
FULL_CELLS = 1  # more distinct frames than cell_cap
FULL_LEVELS = 2  # the stacks of one path, or their closures, outgrew level_cap
FULL_POPS = 3  # more pop nodes than the buffer holds
FULL_ENTRIES = 4  # the cells' closures outgrew entry_cap
TOO_DEEP = 5  # a stack deeper than max_nesting
TOO_MANY = 6  # more than max_stacks stacks after one byte
OUT_OF_WORK = 7  # the work budget is spent (the caller checks its clock and may go on)
CONDITIONAL = 8  # a greedy rule under a CHECK frame may return before a byte it reads, on condition of
# the next one again (automata/return_checks.py): the walk does not nest those, the caller summarizes otherwise
NEED_RULE = 100  # 100 + k: rule class k is not flattened yet


@numba.njit(cache=True, nogil=True, inline="always")
def _next(g, b, rule_of, row_off, table, cls):
    """Global state g after byte b (-1: dead)."""
    return table[row_off[g] + cls[rule_of[g], b]]


@numba.njit(cache=True, nogil=True, inline="always")
def _refuses(refused, g, b):
    """Does a greedy rule's end in global state g refuse byte b next (a Lark terminal's end lookahead)?"""
    return (refused[g, b >> 6] >> np.uint64(b & 63)) & np.uint64(1) != 0


@numba.njit(cache=True, nogil=True, inline="always")
def _next_tail(t0, n_tails, ti, second, on_condition, tl_c, tl_guard, b, refused, rule_of, row_off, table, cls,
               chk_ptr, chk_pairs):
    """The next of a closure's tails (from t0, n_tails; ti the last taken) to expand for byte
    b: in a first pass those without a guard, or whose greedy end neither reads b nor refuses
    it; in a second, only where the first met one, those whose end reads b but may return
    before it on condition of the byte after it (automata/return_checks.py). Returns (the
    tail's cell, -2 when none is left; ti; second; on_condition; the CHECK rule class, or -1)."""
    while True:
        if ti + 1 == n_tails:
            if second or not on_condition:
                return -2, ti, second, on_condition, -1
            second = True
            ti = -1
            continue
        ti += 1
        guard = tl_guard[t0 + ti]
        if guard < 0:
            if not second:
                return tl_c[t0 + ti], ti, second, on_condition, -1
        elif not _refuses(refused, guard, b):  # (a byte it reads is refused, but where it returns on condition)
            if _next(guard, b, rule_of, row_off, table, cls) < 0:
                if not second:
                    return tl_c[t0 + ti], ti, second, on_condition, -1
            elif not second:
                on_condition = True
            else:
                for c in range(chk_ptr[guard], chk_ptr[guard + 1]):
                    if chk_pairs[c] & 255 == b:
                        return tl_c[t0 + ti], ti, second, on_condition, chk_pairs[c] >> 8


@numba.njit(cache=True, nogil=True, inline="always")
def _hash(key, mask):
    return ((key * np.int64(0x1E3779B97F4A7C15)) >> np.int64(17)) & mask


@numba.njit(cache=True, nogil=True)
def _cons(g, par, depth, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells):
    """The cell (g, par): found, or made (n_cells grows); -1 when the cells are full."""
    key = (np.int64(g) << np.int64(32)) | np.int64(par + 1)
    s = _hash(key, hmask)
    while hkeys[s] != -1 and hkeys[s] != key:
        s = (s + 1) & hmask
    if hkeys[s] == key:
        return np.int64(hvals[s]), n_cells
    if n_cells == cell_g.shape[0]:
        return -1, n_cells
    cell_g[n_cells] = g
    cell_p[n_cells] = par
    cell_d[n_cells] = depth
    hkeys[s] = key
    hvals[s] = n_cells
    return np.int64(n_cells), n_cells + 1


UNION = -3  # a union cell's state is UNION - a (below 0: no rule state), its parent b


@numba.njit(cache=True, nogil=True)
def _union(a, b, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells):
    """A cell standing for parent a or parent b (either may be -1, the bottom frame's return):
    state UNION - a, parent b, the deeper one's depth. Stacks with one top over many parents
    are then one stack (a graph-structured stack). A cell is a union iff its state is < 0;
    its parents are UNION - cell_g and cell_p."""
    da = 0 if a < 0 else cell_d[a]
    db = 0 if b < 0 else cell_d[b]
    return _cons(UNION - a, b, max(da, db), cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells)


@numba.njit(cache=True, nogil=True)
def _close_cell(x, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells, ent_g, ent_p, n_ent, work_g, work_p,
                memo_start, memo_n, memo_pops, accepting, greedy, reads_any, call_ptr, call_rule, call_ret, start,
                max_nesting):
    """The closure of cell x's frame: the stacks reachable by calls and by callees' returns
    before the frame itself returns (kept: those whose top reads a byte), and whether it can
    return (memo_pops: 1, or 2 where its state is greedy and its end may refuse the byte).
    Returns (status, n_cells, n_ent, work)."""
    ms = n_ent
    par = cell_p[x]
    pops_x = 0
    n_work = 1
    work_g[0] = cell_g[x]
    work_p[0] = par
    while n_work > 0:
        n_work -= 1
        h = work_g[n_work]
        q = work_p[n_work]
        dup = False
        for j in range(ms, n_ent):
            if ent_g[j] == h and ent_p[j] == q:
                dup = True
                break
        if dup:
            continue
        if n_ent == ent_g.shape[0]:
            return FULL_ENTRIES, n_cells, n_ent, n_ent - ms
        ent_g[n_ent] = h
        ent_p[n_ent] = q
        n_ent += 1
        for c in range(call_ptr[h], call_ptr[h + 1]):
            sg = start[call_rule[c]]
            if sg < 0:
                return NEED_RULE + call_rule[c], n_cells, n_ent, n_ent - ms
            depth = 1 if q < 0 else cell_d[q] + 1
            if depth + 1 > max_nesting:
                return TOO_DEEP, n_cells, n_ent, n_ent - ms
            rc, n_cells = _cons(call_ret[c], q, depth, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells)
            if rc < 0:
                return FULL_CELLS, n_cells, n_ent, n_ent - ms
            if n_work == work_g.shape[0]:
                return FULL_ENTRIES, n_cells, n_ent, n_ent - ms
            work_g[n_work] = sg
            work_p[n_work] = rc
            n_work += 1
        if accepting[h]:
            if q == par:
                pops_x = 1
            else:  # (a callee returns to its caller's frame)
                if n_work == work_g.shape[0]:
                    return FULL_ENTRIES, n_cells, n_ent, n_ent - ms
                work_g[n_work] = cell_g[q]
                work_p[n_work] = cell_p[q]
                n_work += 1
    work = n_ent - ms
    kept = ms  # the stacks whose top reads no byte only led to others: not kept
    for j in range(ms, n_ent):
        if reads_any[ent_g[j]]:
            ent_g[kept] = ent_g[j]
            ent_p[kept] = ent_p[j]
            kept += 1
    memo_start[x] = ms
    memo_n[x] = kept - ms
    memo_pops[x] = 2 if pops_x and greedy[cell_g[x]] else pops_x
    return OK, n_cells, kept, work + work * work // 16
