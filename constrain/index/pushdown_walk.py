"""One frame's summary in a single numba walk: the trie read with a stack of its own.

A frame summary (frame_summaries.py) is what a frame (rule, state) reads from given trie nodes
without popping, its callees' reading included, and the nodes where it pops. Computed frame by
frame in Python, one SQL position made hundreds of them (Llama 3 has tokens of 2 to 128 dashes:
every dash a unary minus, a nested call, every pair a comment's start), each a small walk plus
Python bookkeeping. Here a summary over a small item is one depth-first walk of the item's
subtrees carrying the *set of stacks* that have read the path so far: byte steps, calls and
returns happen inside the walk.

A stack is a pair (top state, parent cell); cells are the frames below, hash-consed on (state,
parent), so equal stacks are equal pairs. The bottom frame is the summarized one (parent -1);
its return is a *pop*, recorded at the node whose byte the frame below would read. Before each
byte a stack is *closed* (calls push callees, accepting tops return). A cell's closure (the
stacks reachable from it before its frame returns, and whether it can return) is made once per
walk and reused by every stack over it; a top's return is kept as a *tail* (the parent cell)
and expanded only for a byte that can follow. A greedy rule (a Lark terminal's longest match)
returns only before a byte it cannot read nor its end there refuses (`refused`, 256 bits per
global state, the bytes it reads set too): its tail carries that state as a *guard*. A byte it
reads left clear there is a return on condition of the byte after it (automata/return_checks.py):
the stacks made by reading it from the tail's cells get the CHECK rule's frame on top, and a pop
there is a *checked pop* (checked_items.py); such tails come after the plain ones, whose cells
they do not read again (a CHECK only narrows). Stacks whose top
calls nothing (a terminal) and differ only below are one entry over a *union* cell of their
parents (pushdown_cells._union), read member by member only where the top returns: along a
dash run a comment opened at every depth is one stack, not one per depth. The stacks after
each node of the current path live per trie depth, and the closure of a depth's stacks is made
once per node and read by each child. Where a stack of that closure reads any run of name bytes
(`free`, per global state) and a child's subtree holds name bytes only (`names`, per trie node),
the subtree's tokens are marked whole, its pops unrecorded (name_runs.py says why no mask changes).

numba does no bounds checking: every capacity is checked before a write; a full buffer ends the
walk with a status that makes the caller retry with larger ones (CI: NUMBA_BOUNDSCHECK=1 too).
"""

from __future__ import annotations

import numba
import numpy as np

from .pushdown_cells import (  # noqa: F401 - the statuses are the walk's too
    CONDITIONAL, FULL_CELLS, FULL_ENTRIES, FULL_LEVELS, FULL_POPS, NEED_RULE, OK, OUT_OF_WORK, TOO_DEEP, TOO_MANY,
    UNION, _close_cell, _cons, _next, _next_tail, _refuses, _union,
)
from .walk import _mark_subtree, _mark_tokens

_LINEAR = 8  # a new level dedups by a linear scan up to this many stacks, by their cells beyond


@numba.njit(cache=True, nogil=True)
def summary_walk(packed, end, tok1, tok_ptr, tok_ids, max_depth, names,
                 rule_of, row_off, table, cls, accepting, greedy, refused, reads_any, call_ptr, call_rule, call_ret, start,
                 free, chk_ptr, chk_pairs, g0, firsts, out, pops, cpops, cell_cap, level_cap, entry_cap, max_nesting, max_stacks,
                 budget):
    """Walk the subtree of each node of `firsts` (each node's byte is read first) with the frame
    of global state g0 at the bottom of the stack. OR into `out` the tokens read with the frame
    still on the stack; write into `pops` the nodes where it pops (before their byte), into
    `cpops` (rows) those where it pops on condition and the CHECK rule class. Returns
    (status, pops written, checked pops written, nodes visited, whether the pops ascend). (One
    function: numba calls with this many arrays cost more per node than the work they share.)"""
    n_pops, n_cpops = 0, 0
    ordered = True  # the pops ascending, no repeats (starts inside others' subtrees break it)
    visited = 0
    work = 0
    # -- cells (frames below a top), hash-consed on (state, parent); each with its closure
    cell_g = np.empty(cell_cap, dtype=np.int32)
    cell_p = np.empty(cell_cap, dtype=np.int32)
    cell_d = np.empty(cell_cap, dtype=np.int32)
    memo_start = np.full(cell_cap, -1, dtype=np.int32)
    memo_n = np.empty(cell_cap, dtype=np.int32)
    memo_pops = np.empty(cell_cap, dtype=np.uint8)
    cstamp = np.zeros(cell_cap, dtype=np.int64)
    lstamp = np.zeros(cell_cap, dtype=np.int64)
    wl = np.empty(cell_cap, dtype=np.int32)  # parents of unions met while reading a byte, to read
    n_wl = 0
    # per global state: tick << 32 | index of the entry of the level being built whose top it is
    # (an older tick: no entry yet)
    gstamp = np.zeros(rule_of.shape[0], dtype=np.int64)
    hcap = 1
    while hcap < 2 * cell_cap:
        hcap *= 2
    hmask = np.int64(hcap - 1)
    hkeys = np.full(hcap, -1, dtype=np.int64)
    hvals = np.empty(hcap, dtype=np.int32)
    n_cells = 0
    ent_g = np.empty(entry_cap, dtype=np.int32)
    ent_p = np.empty(entry_cap, dtype=np.int32)
    n_ent = 0
    work_g = np.empty(entry_cap, dtype=np.int32)
    work_p = np.empty(entry_cap, dtype=np.int32)
    # -- per trie depth: the stacks after the path's node there, and their closure
    lv_g = np.empty(level_cap, dtype=np.int32)
    lv_p = np.empty(level_cap, dtype=np.int32)
    lvl_start = np.zeros(max_depth + 2, dtype=np.int32)
    lvl_n = np.zeros(max_depth + 2, dtype=np.int32)
    lvl_tag = np.full(max_depth + 2, -1, dtype=np.int64)  # (start index, node) of the level
    cl_g = np.empty(level_cap, dtype=np.int32)  # the closure's stacks that read
    cl_p = np.empty(level_cap, dtype=np.int32)
    cl_start = np.zeros(max_depth + 2, dtype=np.int32)
    cl_n = np.zeros(max_depth + 2, dtype=np.int32)
    tl_c = np.empty(level_cap, dtype=np.int32)  # its tails: (parent cell or -1, guard)
    tl_guard = np.empty(level_cap, dtype=np.int32)
    tl_start = np.zeros(max_depth + 2, dtype=np.int32)
    tl_n = np.zeros(max_depth + 2, dtype=np.int32)
    cl_tag = np.full(max_depth + 2, -2, dtype=np.int64)
    cl_free = np.zeros(max_depth + 2, dtype=np.uint8)  # the name sets some stack of the closure reads any run of
    tick = np.int64(0)
    # -- the bottom frame alone (lv[0]) and its closure (cl/tl from 0) serve every start; the
    # stacks after a start's byte are kept per byte (an item's hundreds of nodes have few bytes)
    lv_g[0] = g0
    lv_p[0] = -1
    n0 = -1
    nt0 = 0
    free0 = np.uint8(0)
    sc_start = np.full(256, -1, dtype=np.int32)
    sc_n = np.zeros(256, dtype=np.int32)
    sc_pop = np.zeros(256, dtype=np.uint8)
    sc_g = np.empty(level_cap, dtype=np.int32)
    sc_p = np.empty(level_cap, dtype=np.int32)
    n_sc = 0
    for fi in range(firsts.shape[0]):
        f = firsts[fi]
        walk_tag = np.int64(fi) << np.int64(32)
        pd0 = (packed[f] >> 8) - 1
        lvl_start[pd0] = 0
        lvl_n[pd0] = 1
        lvl_tag[pd0] = -3
        cl_start[pd0] = 0
        tl_start[pd0] = 0
        if n0 >= 0:
            cl_tag[pd0] = -3
            cl_n[pd0] = n0
            tl_n[pd0] = nt0
            cl_start[pd0 + 1] = n0
            tl_start[pd0 + 1] = nt0
            cl_free[pd0] = free0
        else:
            cl_tag[pd0] = -2
        i = f
        last = end[f]
        while i < last:
            p = packed[i]
            d = p >> 8
            b = p & 255
            visited += 1
            work += 1
            pd = d - 1
            out0 = lvl_start[pd] + lvl_n[pd]
            n_new = 0
            popped = False
            if i == f and sc_start[b] >= 0:  # a start whose byte an earlier start read
                n_new = sc_n[b]
                popped = sc_pop[b] != 0
                if out0 + n_new > level_cap:
                    return FULL_LEVELS, n_pops, n_cpops, visited, ordered
                lv_g[out0 : out0 + n_new] = sc_g[sc_start[b] : sc_start[b] + n_new]
                lv_p[out0 : out0 + n_new] = sc_p[sc_start[b] : sc_start[b] + n_new]
            else:
                # -- the closure of the parent's stacks, once per parent node: the stacks
                # that read next (one without calls stands for itself, one with calls for its
                # cell's closure) and the tails (parent cell, or -1 for the bottom frame's
                # return; the greedy state whose return it is, or -1)
                if cl_tag[pd] != lvl_tag[pd]:
                    nc = 0
                    nt = 0
                    c0 = cl_start[pd]
                    t0 = tl_start[pd]
                    for e in range(lvl_start[pd], lvl_start[pd] + lvl_n[pd]):
                        g = lv_g[e]
                        par = lv_p[e]
                        if call_ptr[g] == call_ptr[g + 1]:
                            if c0 + nc == level_cap:
                                return FULL_LEVELS, n_pops, n_cpops, visited, ordered
                            cl_g[c0 + nc] = g
                            cl_p[c0 + nc] = par
                            nc += 1
                            if not accepting[g]:
                                continue
                            guard = g if greedy[g] else -1
                        else:
                            depth = 1 if par < 0 else cell_d[par] + 1
                            if depth > max_nesting:
                                return TOO_DEEP, n_pops, n_cpops, visited, ordered
                            x, n_cells = _cons(g, par, depth, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells)
                            if x < 0:
                                return FULL_CELLS, n_pops, n_cpops, visited, ordered
                            if memo_start[x] < 0:
                                status, n_cells, n_ent, w = _close_cell(
                                    x, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells, ent_g, ent_p, n_ent,
                                    work_g, work_p, memo_start, memo_n, memo_pops, accepting, greedy, reads_any, call_ptr,
                                    call_rule, call_ret, start, max_nesting)
                                work += w
                                if status != OK:
                                    return status, n_pops, n_cpops, visited, ordered
                            ms = memo_start[x]
                            if c0 + nc + memo_n[x] > level_cap:
                                return FULL_LEVELS, n_pops, n_cpops, visited, ordered
                            for j in range(ms, ms + memo_n[x]):
                                cl_g[c0 + nc] = ent_g[j]
                                cl_p[c0 + nc] = ent_p[j]
                                nc += 1
                            if not memo_pops[x]:
                                continue
                            guard = g if memo_pops[x] == 2 else -1
                        dup = False
                        for j in range(t0, t0 + nt):
                            if tl_c[j] == par and tl_guard[j] == guard:
                                dup = True
                                break
                        if not dup:
                            if t0 + nt == level_cap:
                                return FULL_LEVELS, n_pops, n_cpops, visited, ordered
                            tl_c[t0 + nt] = par
                            tl_guard[t0 + nt] = guard
                            nt += 1
                    cl_n[pd] = nc
                    tl_n[pd] = nt
                    cl_tag[pd] = lvl_tag[pd]
                    fr = np.uint8(0)
                    for j in range(c0, c0 + nc):
                        fr |= free[cl_g[j]]
                    cl_free[pd] = fr
                    cl_start[pd + 1] = c0 + nc
                    tl_start[pd + 1] = t0 + nt
                    if n0 < 0:
                        n0 = nc
                        nt0 = nt
                        free0 = fr
                    work += nc + nt
                    if work > budget:
                        return OUT_OF_WORK, n_pops, n_cpops, visited, ordered
                if cl_free[pd] & names[i]:  # (a stack reads the whole subtree, the frame on: name_runs.py)
                    _mark_subtree(i, end, tok_ptr, tok_ids, out)
                    i = end[i]
                    continue
                # -- read b: the closure's stacks, then each tail's cells where b may follow
                # (plain tails first, then those on condition: each under its CHECK frame)
                tick += 1
                plain_tick = tick  # (the stamp of the cells read without condition)
                t0 = tl_start[pd]
                n_tails = tl_n[pd]
                ti = -1  # the tail being expanded
                on_condition = False  # a tail returns before b on condition (the second pass's)
                second = False
                wrap, chk = -1, -1  # in the second pass: the CHECK state on top of what is read, its class
                own = True  # j indexes the closure's own stacks, not a cell's closure
                x = -2  # the tail's cell being read (-2: none)
                j = cl_start[pd]
                j_end = j + cl_n[pd]
                work += cl_n[pd]
                cpops_before = n_cpops
                while True:
                    if j == j_end:  # the next cell: up the current tail, a union's other parent, or the next tail's
                        up = -2
                        if x >= 0 and memo_pops[x] == 1:
                            up = cell_p[x]
                        elif x >= 0 and memo_pops[x] == 2 and not _refuses(refused, cell_g[x], b):
                            if _next(cell_g[x], b, rule_of, row_off, table, cls) >= 0:  # (on condition again)
                                return CONDITIONAL, n_pops, n_cpops, visited, ordered
                            up = cell_p[x]
                        if up != -2:
                            x = up
                        elif n_wl > 0:
                            n_wl -= 1
                            x = wl[n_wl]
                        else:
                            x, ti, second, on_condition, chk = _next_tail(
                                t0, n_tails, ti, second, on_condition, tl_c, tl_guard, b, refused, rule_of, row_off,
                                table, cls, chk_ptr, chk_pairs)
                            if x == -2:
                                break
                            if chk >= 0:  # (on condition: what is read from here on goes under the CHECK)
                                wrap = start[chk]
                                if wrap < 0:
                                    return NEED_RULE + chk, n_pops, n_cpops, visited, ordered
                                tick += 1  # (a fresh stamp for each tail on condition)
                        if x == -1:  # the bottom frame returns before b
                            if wrap < 0:
                                popped = True
                            elif not popped:  # (a plain pop holds the checked one)
                                if n_cpops == cpops.shape[0]:
                                    return FULL_POPS, n_pops, n_cpops, visited, ordered
                                cpops[n_cpops, 0] = i
                                cpops[n_cpops, 1] = chk
                                n_cpops += 1
                            x = -2
                            continue
                        if cstamp[x] == tick or cstamp[x] == plain_tick:  # (read for this byte already)
                            x = -2
                            continue
                        cstamp[x] = tick
                        if cell_g[x] < 0:  # a union of two parents: each read in turn
                            if n_wl + 2 > wl.shape[0]:
                                return FULL_CELLS, n_pops, n_cpops, visited, ordered
                            wl[n_wl] = UNION - cell_g[x]
                            wl[n_wl + 1] = cell_p[x]
                            n_wl += 2
                            x = -2
                            continue
                        if memo_start[x] < 0:
                            status, n_cells, n_ent, w = _close_cell(
                                x, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells, ent_g, ent_p, n_ent,
                                work_g, work_p, memo_start, memo_n, memo_pops, accepting, greedy, reads_any, call_ptr,
                                call_rule, call_ret, start, max_nesting)
                            work += w
                            if status != OK:
                                return status, n_pops, n_cpops, visited, ordered
                        j = memo_start[x]
                        j_end = j + memo_n[x]
                        own = False
                        work += memo_n[x]
                        continue
                    if own:  # one stack reads b
                        h = cl_g[j]
                        q = cl_p[j]
                    else:
                        h = ent_g[j]
                        q = ent_p[j]
                    j += 1
                    t = _next(h, b, rule_of, row_off, table, cls)
                    if t < 0:
                        continue
                    if wrap >= 0:  # (on condition: the stack goes under its CHECK frame)
                        depth = 1 if q < 0 else cell_d[q] + 1
                        if depth + 1 > max_nesting:
                            return TOO_DEEP, n_pops, n_cpops, visited, ordered
                        y, n_cells = _cons(t, q, depth, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells)
                        if y < 0:
                            return FULL_CELLS, n_pops, n_cpops, visited, ordered
                        t = wrap
                        q = np.int32(y)
                    pos = out0 + n_new
                    if call_ptr[t] == call_ptr[t + 1]:  # a top that calls nothing: its parent matters
                        if gstamp[t] >> 32 == tick:  # only where it returns, so one entry over the parents
                            jj = gstamp[t] & 0xFFFFFFFF  # of all (a comment opened at every depth of a dash run)
                            qq = lv_p[jj]
                            if qq != q:
                                u, n_cells = _union(qq, q, cell_g, cell_p, cell_d, hkeys, hvals, hmask, n_cells)
                                if u < 0:
                                    return FULL_CELLS, n_pops, n_cpops, visited, ordered
                                lv_p[jj] = u
                            continue
                        gstamp[t] = (tick << 32) | pos
                    elif n_new < _LINEAR:  # (a top with calls: its closure is per parent, kept per cell)
                        dup = False
                        for jj in range(out0, pos):
                            if lv_g[jj] == t and lv_p[jj] == q:
                                dup = True
                                break
                        if dup:
                            continue
                    else:  # many stacks: each one a cell, stamped for this byte
                        if n_new == _LINEAR:
                            for jj in range(out0, pos):
                                qq = lv_p[jj]
                                y, n_cells = _cons(lv_g[jj], qq, 1 if qq < 0 else cell_d[qq] + 1, cell_g, cell_p,
                                                   cell_d, hkeys, hvals, hmask, n_cells)
                                if y < 0:
                                    return FULL_CELLS, n_pops, n_cpops, visited, ordered
                                lstamp[y] = tick
                        y, n_cells = _cons(t, q, 1 if q < 0 else cell_d[q] + 1, cell_g, cell_p, cell_d, hkeys,
                                           hvals, hmask, n_cells)
                        if y < 0:
                            return FULL_CELLS, n_pops, n_cpops, visited, ordered
                        if lstamp[y] == tick:
                            continue
                        lstamp[y] = tick
                    if pos == level_cap:
                        return FULL_LEVELS, n_pops, n_cpops, visited, ordered
                    if n_new == max_stacks:
                        return TOO_MANY, n_pops, n_cpops, visited, ordered
                    lv_g[pos] = t
                    lv_p[pos] = q
                    n_new += 1
                if i == f and n_cpops == cpops_before:  # (kept for the later starts with this byte;
                    if n_sc + n_new > level_cap:  # not where it popped on condition: that is not kept)
                        return FULL_LEVELS, n_pops, n_cpops, visited, ordered
                    sc_start[b] = n_sc
                    sc_n[b] = n_new
                    sc_pop[b] = popped
                    sc_g[n_sc : n_sc + n_new] = lv_g[out0 : out0 + n_new]
                    sc_p[n_sc : n_sc + n_new] = lv_p[out0 : out0 + n_new]
                    n_sc += n_new
            if popped:
                if n_pops == pops.shape[0]:
                    return FULL_POPS, n_pops, n_cpops, visited, ordered
                if n_pops and pops[n_pops - 1] >= i:
                    ordered = False
                pops[n_pops] = i
                n_pops += 1
            if n_new == 0:
                i = end[i]
                continue
            lvl_start[d] = out0
            lvl_n[d] = n_new
            lvl_tag[d] = walk_tag | np.int64(i)
            _mark_tokens(i, tok1, tok_ptr, tok_ids, out)
            i += 1
    return OK, n_pops, n_cpops, visited, ordered
