"""A mask's chaining of frame summaries, by a numba loop (chain_tables.py holds its arrays).

A mask ORs each stack's top summary into the row, then, for every item where a frame pops, the
summary of the frame below at that item, down to the stack's bottom (stack_index.py). With the
summaries known, that chaining was ~40 us a mask of Python (dict lookups, a call per part);
here it is one call. A summary not in the tables is a *miss*: the loop records (frame, item)
and goes on with the other branches; the Python side computes the missed branches and adds what
they met, so the next mask finds them.

Apart from chain_tables.py because it loads numba, which `import constrain` must not.
"""

from __future__ import annotations

import numba
import numpy as np

TOP = -2  # the item of a stack's top: its summary from the root (looked up by rule and state)
HASH_REP, HASH_Q, HASH_ITEM, HASH_SID = 0, 1, 2, 3  # columns of the hash table (rep -1: empty)
_MIX_REP, _MIX_Q, _MIX_ITEM = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D


@numba.njit(cache=True, nogil=True, inline="always")
def slot_of(rep, q, item, mask):
    """The first slot probed for a key (the Python side inserts with the same formula)."""
    return (np.int64(rep) * _MIX_REP + np.int64(q) * _MIX_Q + np.int64(item) * _MIX_ITEM) & mask


@numba.njit(cache=True, nogil=True)
def find(table, rep, q, item):
    """The summary id of (rep, q, item), or -1 (linear probing; the table is never full)."""
    mask = table.shape[0] - 1
    i = slot_of(rep, q, item, mask)
    while True:
        r = table[i, HASH_REP]
        if r == -1:
            return -1
        if r == rep and table[i, HASH_Q] == q and table[i, HASH_ITEM] == item:
            return table[i, HASH_SID]
        i = (i + 1) & mask


@numba.njit(cache=True, nogil=True)
def insert(table, rep, q, item, s):
    """Put (rep, q, item) -> s in a free slot: the key columns first, the rule column last (it
    marks the slot full for a reader racing this)."""
    mask = table.shape[0] - 1
    i = slot_of(rep, q, item, mask)
    while table[i, HASH_REP] != -1:
        i = (i + 1) & mask
    table[i, HASH_Q] = q
    table[i, HASH_ITEM] = item
    table[i, HASH_SID] = s
    table[i, HASH_REP] = rep


@numba.njit(cache=True, nogil=True)
def insert_all(table, keys, sids):
    """Put each row of `keys` (rule class, state, item) -> its sid (keys not in the table)."""
    for k in range(keys.shape[0]):
        insert(table, keys[k, 0], keys[k, 1], keys[k, 2], sids[k])


@numba.njit(cache=True, nogil=True)
def find_all(table, keys):
    """find() for each row of `keys`."""
    out = np.empty(keys.shape[0], dtype=np.int64)
    for k in range(keys.shape[0]):
        out[k] = find(table, keys[k, 0], keys[k, 1], keys[k, 2])
    return out


def table_of(keys: np.ndarray, sids: np.ndarray) -> np.ndarray:
    """A hash table of these (rule class, state, item) rows (distinct) -> sids, at most half full."""
    size = 1024
    while 2 * keys.shape[0] > size:
        size *= 4
    table = np.full((size, 4), -1, dtype=np.int32)
    insert_all(table, keys, sids)
    return table


@numba.njit(cache=True, nogil=True)
def rehashed(table, size):
    """`table`'s entries in a new table of `size` slots (a power of two)."""
    out = np.full((size, 4), -1, dtype=np.int32)
    for i in range(table.shape[0]):
        if table[i, HASH_REP] != -1:
            insert(out, table[i, HASH_REP], table[i, HASH_Q], table[i, HASH_ITEM], table[i, HASH_SID])
    return out


@numba.njit(cache=True, nogil=True)
def chain(at, frames, table, n_summaries, starts, summary_parts, pops, parts, idx, bits, dense, words, misses):
    """OR into `words` what the frames below read from the (frame id, item) pairs `at` on
    (item TOP: a stack's top). `frames` rows: rule class, state, parent frame or -1.
    `starts[s]`: summary s's first entry in `summary_parts` (part ids) and in `pops` (item
    ids); s's entries end where s + 1's start. `parts[p]`: offset and length in `idx`/`bits`,
    or length -1: row `offset` of `dense`. A summary id from `n_summaries` on was added after
    these arrays were taken: a miss. Each summary is OR-ed once. Returns the number of misses,
    written to `misses` (frame, item) as far as it holds them."""
    n_miss = 0
    n = at.shape[0]
    cap = max(64, 2 * n)
    todo_f = np.empty(cap, dtype=np.int64)
    todo_i = np.empty(cap, dtype=np.int64)
    todo_f[:n] = at[:, 0]
    todo_i[:n] = at[:, 1]
    seen = {np.int64(-1)}
    ored = {np.int64(-1)}
    while n:
        n -= 1
        f = todo_f[n]
        item = todo_i[n]
        key = (f << 32) | (item + 2)
        if key in seen:
            continue
        seen.add(key)
        s = find(table, frames[f, 0], frames[f, 1], item)
        if s < 0 or s >= n_summaries:
            if n_miss < misses.shape[0]:
                misses[n_miss, 0] = f
                misses[n_miss, 1] = item
            n_miss += 1
            continue
        if s not in ored:
            ored.add(np.int64(s))
            for j in range(starts[s, 0], starts[s + 1, 0]):
                p = summary_parts[j]
                off = parts[p, 0]
                length = parts[p, 1]
                if length < 0:
                    row = dense[off]
                    for w in range(words.shape[0]):
                        words[w] |= row[w]
                else:
                    for w in range(off, off + length):
                        words[idx[w]] |= bits[w]
        parent = frames[f, 2]
        if parent < 0:
            continue
        for j in range(starts[s, 1], starts[s + 1, 1]):
            if n == cap:
                cap *= 2
                todo_f, todo_i = _grown(todo_f, todo_i, cap)
            todo_f[n] = parent
            todo_i[n] = pops[j]
            n += 1
    return n_miss


@numba.njit(cache=True, nogil=True)
def _grown(a, b, cap):
    a2 = np.empty(cap, dtype=a.dtype)
    b2 = np.empty(cap, dtype=b.dtype)
    a2[: a.shape[0]] = a
    b2[: b.shape[0]] = b
    return a2, b2


def warm_chain() -> None:
    """Compile (or load) the loop outside any mask's clock, with the argument types of real
    calls (chain_tables.py)."""
    table = np.full((2, 4), -1, dtype=np.int32)
    insert(table, 0, 0, 0, 0)
    table = rehashed(table, 4)
    insert_all(table, np.ones((1, 3), dtype=np.int64), np.ones(1, dtype=np.int64))
    find_all(table, np.ones((1, 3), dtype=np.int64))
    find(table, 1, 0, 0)
    chain(
        np.zeros((1, 2), dtype=np.int64), np.full((1, 3), -1, dtype=np.int32), table, 0, np.zeros((2, 2), dtype=np.int32),
        np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int32), np.zeros((1, 2), dtype=np.int64),
        np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.uint32), np.zeros((1, 1), dtype=np.uint32),
        np.zeros(1, dtype=np.uint32), np.zeros((4, 2), dtype=np.int64),
    )
