"""The deterministic concatenation of two DFAs' arrays (see glue.py), in numba: with NumPy's
unique/argsort/where it cost more than the key trie it joins (~75 us per object member rule)."""

from __future__ import annotations

import numba
import numpy as np

from .canonical import compact


@numba.njit(cache=True, nogil=True)
def join(a_classes, a_table, a_accepting, b_classes, b_table, b_accepting):
    """a·b over symbols whose class in a and in b are given (a class whose column is all -1
    means "no transition"): joint classes numbered by first symbol, a's states then b's, each
    accepting state of a also taking b's start row. Returns (classes, table, accepting, ok);
    ok is False where such a state already reads a symbol b's start reads (not deterministic)."""
    n_sym = a_classes.shape[0]
    width_b = b_table.shape[1] + 1
    pair_class = np.full((a_table.shape[1] + 1) * width_b, -1, dtype=np.int64)
    classes = np.empty(n_sym, dtype=np.int32)
    reps = np.empty(n_sym, dtype=np.int64)
    n_cls = 0
    for x in range(n_sym):
        p = a_classes[x] * width_b + b_classes[x]
        if pair_class[p] < 0:
            pair_class[p] = n_cls
            reps[n_cls] = x
            n_cls += 1
        classes[x] = pair_class[p]
    n_a = a_table.shape[0]
    n_b = b_table.shape[0]
    table = np.empty((n_a + n_b, n_cls), dtype=np.int32)
    for q in range(n_a):
        for c in range(n_cls):
            table[q, c] = a_table[q, a_classes[reps[c]]]
    for q in range(n_b):
        for c in range(n_cls):
            t = b_table[q, b_classes[reps[c]]]
            table[n_a + q, c] = t + n_a if t >= 0 else -1
    accepting = np.empty(n_a + n_b, dtype=np.bool_)
    for q in range(n_a):
        accepting[q] = a_accepting[q] and b_accepting[0]
        if not a_accepting[q]:
            continue
        for c in range(n_cls):
            s = table[n_a, c]
            if s >= 0:
                if table[q, c] >= 0:
                    return classes, table, accepting, False
                table[q, c] = s
    for q in range(n_b):
        accepting[n_a + q] = b_accepting[q]
    return classes, table, accepting, True


@numba.njit(cache=True, nogil=True)
def _NONE_CLASSES():
    return np.empty(0, dtype=np.int32)


@numba.njit(cache=True, nogil=True)
def _NONE_TABLE():
    return np.empty((0, 0), dtype=np.int32)


@numba.njit(cache=True, nogil=True)
def _NONE_ACCEPTING():
    return np.empty(0, dtype=np.bool_)


@numba.njit(cache=True, nogil=True)
def join_after_key(a_classes, a_table, a_accepting, b_classes, b_table, b_accepting):
    """join(a, b) for a over bytes only (no calls) whose one accepting state reads nothing
    (a quoted key: its closing quote ends it) and b with no transition back to its start,
    both minimal: the join is then minimal (glue._joins_minimal), and is returned in the
    canonical numbering of canonical.compact. One call instead of a dozen NumPy steps and
    three kernels: object member rules are built in every compile, caches cold.
    Returns (classes, table, accepting, ok); ok False where a or b lacks that shape."""
    n_sym = b_classes.shape[0]
    n_a, n_b = a_table.shape[0], b_table.shape[0]
    end = -1
    for q in range(n_a):
        if a_accepting[q]:
            if end >= 0:
                return _NONE_CLASSES(), _NONE_TABLE(), _NONE_ACCEPTING(), False
            end = q
    if end < 0:
        return _NONE_CLASSES(), _NONE_TABLE(), _NONE_ACCEPTING(), False
    for c in range(a_table.shape[1]):
        if a_table[end, c] >= 0:
            return _NONE_CLASSES(), _NONE_TABLE(), _NONE_ACCEPTING(), False
    for q in range(n_b):
        for c in range(b_table.shape[1]):
            if b_table[q, c] == 0:
                return _NONE_CLASSES(), _NONE_TABLE(), _NONE_ACCEPTING(), False
    # join's classes (a's class of a call: none, a column of -1 past a's last)
    width_b = b_table.shape[1]
    dead_a = a_table.shape[1]
    pair_class = np.full((dead_a + 1) * width_b, -1, dtype=np.int64)
    classes = np.empty(n_sym, dtype=np.int32)
    reps = np.empty(n_sym, dtype=np.int64)
    n_cls = 0
    for x in range(n_sym):
        ca = a_classes[x] if x < 256 else dead_a
        p = ca * width_b + b_classes[x]
        if pair_class[p] < 0:
            pair_class[p] = n_cls
            reps[n_cls] = x
            n_cls += 1
        classes[x] = pair_class[p]
    table = np.empty((n_a + n_b, n_cls), dtype=np.int32)
    for q in range(n_a):
        for c in range(n_cls):
            x = reps[c]
            table[q, c] = a_table[q, a_classes[x]] if x < 256 else -1
    for q in range(n_b):
        for c in range(n_cls):
            t = b_table[q, b_classes[reps[c]]]
            table[n_a + q, c] = t + n_a if t >= 0 else -1
    for c in range(n_cls):
        table[end, c] = table[n_a, c]
    accepting = np.zeros(n_a + n_b, dtype=np.bool_)
    accepting[end] = b_accepting[0]
    for q in range(n_b):
        accepting[n_a + q] = b_accepting[q]
    merged, out, acc = compact(classes, table, accepting)
    return merged, out, acc, True
