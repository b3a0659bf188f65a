"""Boolean operations on DFAs: intersection and difference, by product construction.

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
    a: DFA, b: DFA, keep_b_dead: bool, accept: Callable[[bool, bool], bool], limits: Limits
) -> DFA:
    # Joint byte classes: one per distinct (class in a, class in b) pair.
    pairs = {}
    joint = np.empty(256, dtype=np.int32)
    ca, cb = a.byte_classes.tolist(), b.byte_classes.tolist()
    reps: list[tuple[int, int]] = []
    for byte in range(256):
        key = (ca[byte], cb[byte])
        j = pairs.get(key)
        if j is None:
            j = pairs[key] = len(reps)
            reps.append(key)
        joint[byte] = j
    ta, tb = a.table.tolist(), b.table.tolist()
    acc_a, acc_b = a.accepting.tolist(), b.accepting.tolist()
    index = {(0, 0): 0}
    order = [(0, 0)]
    rows: list[list[int]] = []
    deadline = time.perf_counter() + limits.max_compile_seconds
    k = 0
    while k < len(order):
        if k & 255 == 0 and time.perf_counter() > deadline:
            raise LimitExceededError("compile time (s)", limits.max_compile_seconds, "Limits(max_compile_seconds=...)")
        qa, qb = order[k]
        row = []
        for c_a, c_b in reps:
            na = ta[qa][c_a]
            nb = tb[qb][c_b] if qb >= 0 else DEAD
            if na < 0 or (nb < 0 and not keep_b_dead):
                row.append(DEAD)
                continue
            key = (na, nb)
            j = index.get(key)
            if j is None:
                j = len(order)
                if j >= limits.max_dfa_states:
                    raise LimitExceededError("DFA size (states)", limits.max_dfa_states, "Limits(max_dfa_states=...)")
                index[key] = j
                order.append(key)
            row.append(j)
        rows.append(row)
        k += 1
    table = np.array(rows, dtype=np.int32).reshape(len(rows), len(reps))
    accepting = np.array(
        [accept(acc_a[qa], qb >= 0 and acc_b[qb]) for qa, qb in order], dtype=np.bool_
    )
    return minimize(joint, table, accepting)


def intersect(a: DFA, b: DFA, limits: Optional[Limits] = None) -> DFA:
    """Strings in both languages. Raises GrammarError if there are none."""
    return _product(a, b, False, lambda x, y: x and y, limits or Limits())


def difference(a: DFA, b: DFA, limits: Optional[Limits] = None) -> DFA:
    """Strings of `a` that are not in `b`. Raises GrammarError if there are none."""
    return _product(a, b, True, lambda x, y: x and not y, limits or Limits())
