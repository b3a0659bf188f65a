"""Subset construction in numba over an NFA in CSR form.

A DFA state is the sorted array of the *important* NFA states (those with byte edges, and the
final one) in an epsilon closure; sets live in one flat growable array and are found again by
an open-addressing hash. Resumable in chunks (all state is in the arrays passed in and
returned) so the caller can check the time limit between chunks. Indices are validated by
construction: NFA state ids come from `NFA` lists (0..n-1), class ids from the caller's
`prepare` (0..n_cls-1).
"""

from __future__ import annotations

import numba
import numpy as np

from .minimize import minimal

DONE, PAUSED, TOO_MANY = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def _closure(seeds, eps_ptr, eps_dst, important, stamp, tag, stack, out):
    """Writes the sorted important states epsilon-reachable from `seeds` to `out`; returns
    their number. `stamp[s] == tag` marks states already visited in this call."""
    top = 0
    m = 0
    for s in seeds:
        if stamp[s] != tag:
            stamp[s] = tag
            stack[top] = s
            top += 1
    while top > 0:
        top -= 1
        u = stack[top]
        if important[u]:
            out[m] = u
            m += 1
        for e in range(eps_ptr[u], eps_ptr[u + 1]):
            v = eps_dst[e]
            if stamp[v] != tag:
                stamp[v] = tag
                stack[top] = v
                top += 1
    out[:m].sort()
    return m


@numba.njit(cache=True, nogil=True)
def _hash(members):
    h = np.int64(len(members))
    for s in members:
        h = h * 1000003 + s
    return h


@numba.njit(cache=True, nogil=True)
def _find(slots, set_ptr, set_data, members, h):
    """Slot holding the set `members` (hash `h`), or the empty slot where it belongs."""
    return _slot(slots, set_ptr, set_data, members, len(members), h)


# The two steps every new set takes, shared by the subset constructions here and in
# word_graph_kernel.py; inlined (numba counts a reference per array passed to a call).
@numba.njit(cache=True, nogil=True, inline="always")
def _sort_prefix(a, m):
    """Sort a[:m] in place (by insertion while short: a slice and a call cost more)."""
    if m <= 32:
        for i in range(1, m):
            x = a[i]
            j = i - 1
            while j >= 0 and a[j] > x:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
    else:
        a[:m].sort()


@numba.njit(cache=True, nogil=True, inline="always")
def _sorted_hash(out, m):
    """Sort out[:m] in place and return the hash of the set."""
    _sort_prefix(out, m)
    h = np.int64(m)
    for i in range(m):
        h = h * 1000003 + out[i]
    return h


@numba.njit(cache=True, nogil=True, inline="always")
def _slot(slots, set_ptr, set_data, out, m, h):
    """Slot holding the set out[:m] (hash `h`), or the empty slot where it belongs (open
    addressing over (hash, state id) slots)."""
    mask = slots.shape[0] - 1
    i = (h ^ (h >> 29)) & mask
    while slots[i, 1] >= 0:
        if slots[i, 0] == h:
            lo = set_ptr[slots[i, 1]]
            if set_ptr[slots[i, 1] + 1] - lo == m:
                same = True
                for x in range(m):
                    if set_data[lo + x] != out[x]:
                        same = False
                        break
                if same:
                    return i
        i = (i + 1) & mask
    return i


@numba.njit(cache=True, nogil=True)
def _grow(rows, set_ptr, set_data, slots, cnt, extra):
    """Room for one more row and `extra` more members; slots at most half full."""
    if cnt + 1 >= rows.shape[0]:
        bigger = np.full((rows.shape[0] * 2, rows.shape[1]), -1, dtype=np.int32)
        bigger[: rows.shape[0]] = rows
        rows = bigger
        ptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
        ptr[: set_ptr.shape[0]] = set_ptr
        set_ptr = ptr
    need = set_ptr[cnt] + extra
    if need > set_data.shape[0]:
        data = np.empty(max(need, 2 * set_data.shape[0]), dtype=np.int64)
        data[: set_data.shape[0]] = set_data
        set_data = data
    if 2 * (cnt + 1) > slots.shape[0]:
        bigger_slots = np.full((slots.shape[0] * 2, 2), -1, dtype=np.int64)
        mask = bigger_slots.shape[0] - 1
        for i in range(slots.shape[0]):
            if slots[i, 1] >= 0:
                j = (slots[i, 0] ^ (slots[i, 0] >> 29)) & mask
                while bigger_slots[j, 1] >= 0:
                    j = (j + 1) & mask
                bigger_slots[j, 0] = slots[i, 0]
                bigger_slots[j, 1] = slots[i, 1]
        slots = bigger_slots
    return rows, set_ptr, set_data, slots


@numba.njit(cache=True, nogil=True)
def start(n_cls, start_state, eps_ptr, eps_dst, important):
    """Initial arrays (rows, set_ptr, set_data, slots, stamp) holding the start state's set."""
    n = important.shape[0]
    rows = np.full((64, n_cls), -1, dtype=np.int32)
    set_ptr = np.zeros(65, dtype=np.int64)
    set_data = np.empty(max(n, 64), dtype=np.int64)
    slots = np.full((256, 2), -1, dtype=np.int64)  # (hash, state id)
    stamp = np.zeros(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    seeds = np.full(1, start_state, dtype=np.int64)
    m = _closure(seeds, eps_ptr, eps_dst, important, stamp, 1, stack, set_data)
    set_ptr[1] = m
    i = _find(slots, set_ptr, set_data, set_data[:m], _hash(set_data[:m]))
    slots[i, 0] = _hash(set_data[:m])
    slots[i, 1] = 0
    return rows, set_ptr, set_data, slots, stamp


@numba.njit(cache=True, nogil=True)
def expand(e_ptr, e_clo, e_chi, e_dst, eps_ptr, eps_dst, important, rows, set_ptr, set_data, slots, stamp, k, cnt, k_stop, max_states):
    """Fill rows k.. until every DFA state is expanded (DONE), row `k_stop` is reached
    (PAUSED), or a new state would be number `max_states` (TOO_MANY).
    Returns (rows, set_ptr, set_data, slots, k, cnt, status).

    The closure, hash and lookup of each target set are written out here rather than called:
    numba counts references on every array passed to a call, which costs more than the work
    in a loop run once per (state, class)."""
    n = important.shape[0]
    n_cls = rows.shape[1]
    stack = np.empty(n, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    count = np.zeros(n_cls, dtype=np.int64)  # targets per class (zero between states)
    begin = np.empty(n_cls, dtype=np.int64)
    fill = np.empty(n_cls, dtype=np.int64)
    touched = np.empty(n_cls, dtype=np.int64)  # the classes with targets, ascending
    seeds = np.empty(64, dtype=np.int64)
    tag = stamp.max()
    while k < cnt:
        if k >= k_stop:
            return rows, set_ptr, set_data, slots, k, cnt, PAUSED
        # Edge targets bucketed by class (counting sort), in member and edge order. Only the
        # classes some edge reads are visited: rule DFAs have a column per callee, and most
        # states read one or two symbols.
        lo, hi = set_ptr[k], set_ptr[k + 1]
        n_touched = 0
        for i in range(lo, hi):
            s = set_data[i]
            for e in range(e_ptr[s], e_ptr[s + 1]):
                for c in range(e_clo[e], e_chi[e] + 1):
                    if count[c] == 0:
                        touched[n_touched] = c
                        n_touched += 1
                    count[c] += 1
        _sort_prefix(touched, n_touched)
        total = 0
        for t in range(n_touched):
            c = touched[t]
            begin[c] = total
            fill[c] = total
            total += count[c]
        if total > seeds.shape[0]:
            seeds = np.empty(2 * total, dtype=np.int64)
        for i in range(lo, hi):
            s = set_data[i]
            for e in range(e_ptr[s], e_ptr[s + 1]):
                for c in range(e_clo[e], e_chi[e] + 1):
                    seeds[fill[c]] = e_dst[e]
                    fill[c] += 1
        for t in range(n_touched):
            count[touched[t]] = 0
        prev = -1  # last class with targets: the same seeds give the same state
        for t in range(n_touched):
            c = touched[t]
            a, b = begin[c], fill[c]
            if prev >= 0 and fill[prev] - begin[prev] == b - a:
                same = True
                pa = begin[prev]
                for i in range(b - a):
                    if seeds[pa + i] != seeds[a + i]:
                        same = False
                        break
                if same:
                    rows[k, c] = rows[k, prev]
                    prev = c
                    continue
            prev = c
            # The important states epsilon-reachable from the seeds, sorted, into out[:m]:
            # _closure inlined (numba counts a reference for every array passed to a call,
            # which was most of this loop's time).
            tag += 1
            top = 0
            m = 0
            for i in range(a, b):
                s = seeds[i]
                if stamp[s] != tag:
                    stamp[s] = tag
                    stack[top] = s
                    top += 1
            while top > 0:
                top -= 1
                u = stack[top]
                if important[u]:
                    out[m] = u
                    m += 1
                for e in range(eps_ptr[u], eps_ptr[u + 1]):
                    v = eps_dst[e]
                    if stamp[v] != tag:
                        stamp[v] = tag
                        stack[top] = v
                        top += 1
            h = _sorted_hash(out, m)
            i = _slot(slots, set_ptr, set_data, out, m, h)
            j = slots[i, 1]
            if j < 0:
                if cnt >= max_states:
                    return rows, set_ptr, set_data, slots, k, cnt, TOO_MANY
                if cnt + 1 >= rows.shape[0] or set_ptr[cnt] + m > set_data.shape[0] or 2 * (cnt + 1) > slots.shape[0]:
                    rows, set_ptr, set_data, slots = _grow(rows, set_ptr, set_data, slots, cnt, m)
                    i = _slot(slots, set_ptr, set_data, out, m, h)  # (the table has grown)
                j = cnt
                base = set_ptr[cnt]
                for x in range(m):
                    set_data[base + x] = out[x]
                set_ptr[cnt + 1] = base + m
                slots[i, 0] = h
                slots[i, 1] = j
                cnt += 1
            rows[k, c] = j
        k += 1
    return rows, set_ptr, set_data, slots, k, cnt, DONE


@numba.njit(cache=True, nogil=True)
def _row_offsets(rows, n):
    """CSR offsets of `rows` grouped by their first column (a source state in 0..n-1)."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(rows.shape[0]):
        ptr[rows[i, 0] + 1] += 1
    for q in range(n):
        ptr[q + 1] += ptr[q]
    return ptr


@numba.njit(cache=True, nogil=True)
def prepare(n, edges, eps, final, alphabet):
    """The NFA in CSR form and its symbol classes, in one call (for small NFAs the separate
    numpy steps cost more than the subset construction). `edges` rows (source, lo, hi,
    target), `eps` rows (source, target); rows stay in their order within a source.
    Returns (e_ptr, e_clo, e_chi, e_dst, eps_ptr, eps_dst, important, classes): the class of
    each symbol partitions the alphabet into intervals no edge splits, bytes and calls apart."""
    m = edges.shape[0]
    e_ptr = _row_offsets(edges, n)
    starts = np.zeros(alphabet + 1, dtype=np.bool_)
    starts[0] = True
    starts[256] = True
    for i in range(m):
        starts[edges[i, 1]] = True
        starts[edges[i, 2] + 1] = True
    classes = np.empty(alphabet, dtype=np.int32)
    c = -1
    for x in range(alphabet):
        if starts[x]:
            c += 1
        classes[x] = c
    fill = e_ptr[:-1].copy()
    e_clo = np.empty(m, dtype=np.int64)
    e_chi = np.empty(m, dtype=np.int64)
    e_dst = np.empty(m, dtype=np.int64)
    for i in range(m):
        j = fill[edges[i, 0]]
        fill[edges[i, 0]] = j + 1
        e_clo[j] = classes[edges[i, 1]]
        e_chi[j] = classes[edges[i, 2]]
        e_dst[j] = edges[i, 3]
    k = eps.shape[0]
    eps_ptr = _row_offsets(eps, n)
    fill = eps_ptr[:-1].copy()
    eps_dst = np.empty(k, dtype=np.int64)
    for i in range(k):
        j = fill[eps[i, 0]]
        fill[eps[i, 0]] = j + 1
        eps_dst[j] = eps[i, 1]
    important = np.empty(n, dtype=np.bool_)
    for q in range(n):
        important[q] = e_ptr[q + 1] > e_ptr[q]
    important[final] = True
    return e_ptr, e_clo, e_chi, e_dst, eps_ptr, eps_dst, important, classes


@numba.njit(cache=True, nogil=True)
def finish(rows, set_ptr, set_data, cnt, final, classes):
    """The minimal DFA of the finished construction (see minimize.minimal): a DFA state
    accepts when its set holds the NFA's final state."""
    accepting = np.zeros(cnt, dtype=np.bool_)
    for j in range(cnt):
        for i in range(set_ptr[j], set_ptr[j + 1]):
            if set_data[i] == final:
                accepting[j] = True
                break
    return minimal(classes, rows[:cnt].copy(), accepting)
