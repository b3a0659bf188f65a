"""A rule that starts with an embedded DFA and ends with a small suffix, without a subset
construction over the embedded DFA.

Object members for key languages (`"other key": value`, pattern keys) are such rules: the
embedded DFA of the keys has hundreds of states, the suffix (`:` and a call of the value) a
few. When the embedded DFA stops at its accepting states (the closing quote of a key), the
rule's automaton is that DFA with its accepting states continuing as the suffix's start:
deterministic already, so it only needs minimizing. Minimal DFAs are numbered canonically (BFS
over classes numbered by first symbol), so the result has the very arrays the subset
construction gives.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from ..errors import EmptyLanguageError, LimitExceededError
from ..limits import Limits
from . import ir
from .dfa import DFA, determinize, minimize
from .nfa import build_nfa, nfa_states


def glued_dfa(node: ir.Node, calls: dict[str, int], limits: Limits) -> Optional[DFA]:
    """The DFA of `node` (as determinize(build_nfa(node)) would give it) when `node` is an
    embedded DFA that stops at its accepting states followed by a suffix; None where this does
    not apply or a limit might be met (the general construction then decides)."""
    if not isinstance(node, ir.Concat) or len(node.items) < 2 or not isinstance(node.items[0], ir.Embedded):
        return None
    if nfa_states(node) > limits.max_nfa_states:
        return None
    head: DFA = node.items[0].dfa  # type: ignore[assignment]
    if head.call_classes.size or head.accepting[0] or (head.table[head.accepting] >= 0).any():
        return None
    suffix = ir.concat(*node.items[1:])
    room = limits.max_dfa_states - head.n_states
    if room < 1:
        return None
    try:
        tail = determinize(
            build_nfa(suffix, limits.max_nfa_states, calls),
            Limits(limits.max_nfa_states, room, limits.max_compile_seconds),
            time.perf_counter() + limits.max_compile_seconds,
            n_calls=len(calls),
        )
    except (EmptyLanguageError, LimitExceededError):
        return None
    return _concatenate(head, tail, len(calls))


def _concatenate(head: DFA, tail: DFA, n_calls: int) -> DFA:
    """head·tail, head's accepting states having no transitions: they take tail's start row."""
    n_head = head.n_states
    # Symbol classes: pairs (head class, tail class), numbered by first symbol; calls are in no
    # head class (a column of -1 appended to head's table).
    head_cls = np.concatenate((head.byte_classes, np.full(n_calls, head.n_classes, dtype=np.int32)))
    tail_cls = np.concatenate((tail.byte_classes, tail.call_classes[:n_calls]))
    pairs = head_cls.astype(np.int64) * (tail.n_classes + 1) + tail_cls
    _, first, inverse = np.unique(pairs, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    classes = rank[inverse].astype(np.int32)
    reps = first[order]
    head_table = np.concatenate((head.table, np.full((n_head, 1), -1, dtype=np.int32)), axis=1)[:, head_cls[reps]]
    tail_table = tail.table[:, tail_cls[reps]]
    tail_table = np.where(tail_table >= 0, tail_table + n_head, -1)
    ends = head.accepting
    head_table[ends] = tail_table[0]
    table = np.concatenate((head_table, tail_table)).astype(np.int32)
    accepting = np.concatenate((ends & bool(tail.accepting[0]), tail.accepting))
    return minimize(classes, table, accepting, n_calls)
