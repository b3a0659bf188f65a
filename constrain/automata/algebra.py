"""Boolean operations on DFAs: intersection, difference and union, by product construction.

Regexes cannot say "a JSON string that is not one of these keys" or "matches this pattern
and is at most 20 characters"; products of DFAs can, exactly. Results are minimized DFAs and
can be embedded back into IR with `ir.Embedded`.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

import numpy as np

from ..errors import LimitExceededError
from ..limits import Limits
from .dfa import DEAD, DFA, minimize


def _product(
    a: DFA, b: DFA, keep_b_dead: bool, accept: Callable[[np.ndarray, np.ndarray], np.ndarray], limits: Limits,
    keep_a_dead: bool = False,
) -> DFA:
    from . import product  # numba loads on the first compile, not on import

    # Joint byte classes: one per distinct (class in a, class in b) pair, in order of first byte.
    key = a.byte_classes.astype(np.int64) * b.n_classes + b.byte_classes
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int32)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first), dtype=np.int32)
    joint = rank[inverse]
    reps = np.sort(first)
    rep_a, rep_b = a.byte_classes[reps].astype(np.int64), b.byte_classes[reps].astype(np.int64)
    pairs, rows, slots = product.start(len(reps))
    k = cnt = 0
    deadline = time.perf_counter() + limits.max_compile_seconds
    while True:
        pairs, rows, slots, k, cnt, status = product.expand(
            a.table, b.table, rep_a, rep_b, keep_a_dead, keep_b_dead, pairs, rows, slots, k, cnt, k + 4096, limits.max_dfa_states
        )
        if status == product.TOO_MANY:
            raise LimitExceededError("DFA size (states)", limits.max_dfa_states, "Limits(max_dfa_states=...)")
        if status == product.DONE:
            break
        if time.perf_counter() > deadline:
            raise LimitExceededError("compile time (s)", limits.max_compile_seconds, "Limits(max_compile_seconds=...)")
    qa, qb = pairs[:cnt, 0], pairs[:cnt, 1]
    accepting = accept((qa >= 0) & a.accepting[np.maximum(qa, 0)], (qb >= 0) & b.accepting[np.maximum(qb, 0)])
    return minimize(joint, rows[:cnt], accepting)


def intersect(a: DFA, b: DFA, limits: Optional[Limits] = None) -> DFA:
    """Strings in both languages. Raises GrammarError if there are none."""
    return _product(a, b, False, np.logical_and, limits or Limits())


def difference(a: DFA, b: DFA, limits: Optional[Limits] = None) -> DFA:
    """Strings of `a` that are not in `b`. Raises GrammarError if there are none."""
    return _product(a, b, True, lambda x, y: x & ~y, limits or Limits())


def union(a: DFA, b: DFA, limits: Optional[Limits] = None) -> DFA:
    """Strings in either language (a pair lives on while either side does). Cheaper than
    embedding both in an NFA and determinizing again."""
    return _product(a, b, True, np.logical_or, limits or Limits(), keep_a_dead=True)


def bounded_repeat(unit: DFA, lo: int, hi: Optional[int], limits: Optional[Limits] = None) -> DFA:
    """The DFA of unit{lo,hi} for a *prefix-free* unit language with one accepting state that
    has no outgoing transitions (one character in some encoding): built directly as
    (count, unit state) pairs, with no subset construction, so long bounds (maxLength 1024)
    stay cheap."""
    limits = limits or Limits()
    acc = np.nonzero(unit.accepting)[0]
    if len(acc) != 1 or (unit.table[acc[0]] >= 0).any() or unit.accepting[0]:
        raise ValueError("bounded_repeat needs a prefix-free unit with a single final state")
    f = int(acc[0])
    inner = [q for q in range(unit.n_states) if q != f]
    pos = {q: i for i, q in enumerate(inner)}
    m = len(inner)
    if hi is None:
        counts = lo + 1  # the last count loops: "lo or more"
    else:
        counts = hi + 1
    n = counts * m
    if n > limits.max_dfa_states:
        raise LimitExceededError("DFA size (states)", limits.max_dfa_states, "Limits(max_dfa_states=...)")
    u = unit.table[inner]  # (m, k): next unit state per class
    nxt_inner = np.where(u >= 0, np.vectorize(lambda t: pos.get(int(t), -1))(np.maximum(u, 0)), -1)
    done = u == f
    table = np.full((counts, m, unit.n_classes), DEAD, dtype=np.int64)
    for i in range(counts):
        base = i * m
        stay = np.where(nxt_inner >= 0, base + nxt_inner, DEAD)
        if hi is None and i == counts - 1:
            finish = base + pos[0]  # lo or more: stay at the last count
        elif i + 1 < counts:
            finish = (i + 1) * m + pos[0]
        else:
            finish = DEAD  # hi characters already
        table[i] = np.where(done, finish, stay)
    accepting = np.zeros((counts, m), dtype=np.bool_)
    accepting[lo:, pos[0]] = True
    return minimize(unit.byte_classes, table.reshape(n, unit.n_classes), accepting.reshape(n))
