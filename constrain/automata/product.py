"""Product construction of two DFAs in numba: breadth-first over reachable state pairs.

Resumable in chunks (all state lives in the arrays passed in and returned) so the caller can
check the time limit between chunks; arrays grow by doubling. Indices are validated by
construction: pair states come from the operands' tables (entries -1..n-1), classes from
`rep_a`/`rep_b` (entries < each table's width).
"""

from __future__ import annotations

import numba
import numpy as np

DONE, PAUSED, TOO_MANY = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def _slot(slots, key, mask):
    """Slot of `key` in the open-addressing table, or of the empty slot where it belongs."""
    h = (key * 2654435761 + (key >> 17)) & mask
    while slots[h, 0] >= 0 and slots[h, 0] != key:
        h = (h + 1) & mask
    return h


@numba.njit(cache=True, nogil=True)
def _grow_slots(slots):
    bigger = np.full((slots.shape[0] * 2, 2), -1, dtype=np.int64)
    mask = bigger.shape[0] - 1
    for i in range(slots.shape[0]):
        if slots[i, 0] >= 0:
            h = _slot(bigger, slots[i, 0], mask)
            bigger[h, 0] = slots[i, 0]
            bigger[h, 1] = slots[i, 1]
    return bigger


@numba.njit(cache=True, nogil=True)
def start(n_joint):
    """Initial arrays: pairs (a, b) per product state, rows, hash slots (key, state)."""
    pairs = np.zeros((64, 2), dtype=np.int64)
    rows = np.full((64, n_joint), -1, dtype=np.int32)
    slots = np.full((256, 2), -1, dtype=np.int64)
    return pairs, rows, slots


@numba.njit(cache=True, nogil=True)
def expand(ta, tb, rep_a, rep_b, keep_a_dead, keep_b_dead, pairs, rows, slots, k, cnt, k_stop, max_states):
    """Fill rows k.. until every state is expanded (DONE), row `k_stop` is reached (PAUSED) or
    a new state would be number `max_states` (TOO_MANY). State 0 is the pair (0, 0); a pair
    (a, -1) means `b` is dead (kept with `keep_b_dead`: difference, union), (-1, b) that `a`
    is (kept with `keep_a_dead`: union). Returns (pairs, rows, slots, k, cnt, status)."""
    n_joint = rep_a.shape[0]
    nb1 = tb.shape[0] + 1
    if cnt == 0:
        pairs[0, 0] = 0
        pairs[0, 1] = 0
        h = _slot(slots, nb1 + 1, slots.shape[0] - 1)  # key of the pair (0, 0)
        slots[h, 0] = nb1 + 1
        slots[h, 1] = 0
        cnt = 1
    while k < cnt:
        if k >= k_stop:
            return pairs, rows, slots, k, cnt, PAUSED
        if cnt + n_joint > pairs.shape[0]:
            cap = pairs.shape[0] * 2
            new_pairs = np.zeros((cap, 2), dtype=np.int64)
            new_pairs[: pairs.shape[0]] = pairs
            new_rows = np.full((cap, n_joint), -1, dtype=np.int32)
            new_rows[: rows.shape[0]] = rows
            pairs, rows = new_pairs, new_rows
        if 2 * (cnt + n_joint) > slots.shape[0]:
            slots = _grow_slots(slots)
        qa = pairs[k, 0]
        qb = pairs[k, 1]
        mask = slots.shape[0] - 1
        for j in range(n_joint):
            na = ta[qa, rep_a[j]] if qa >= 0 else -1
            nb = tb[qb, rep_b[j]] if qb >= 0 else -1
            if (na < 0 and (nb < 0 or not keep_a_dead)) or (nb < 0 and not keep_b_dead):
                continue
            key = (na + 1) * nb1 + nb + 1
            h = (key * 2654435761 + (key >> 17)) & mask  # _slot, written out (see subset.expand)
            while slots[h, 0] >= 0 and slots[h, 0] != key:
                h = (h + 1) & mask
            if slots[h, 0] < 0:
                if cnt >= max_states:
                    return pairs, rows, slots, k, cnt, TOO_MANY
                slots[h, 0] = key
                slots[h, 1] = cnt
                pairs[cnt, 0] = na
                pairs[cnt, 1] = nb
                cnt += 1
            rows[k, j] = slots[h, 1]
        k += 1
    return pairs, rows, slots, k, cnt, DONE
