"""Rules around an embedded DFA, built without a subset construction over that DFA.

Many rules are a large finished DFA with a little around it: object members for key languages
(`"other key": value`, pattern keys: the keys' DFA, then `:` and a call of the value), strings
with a pattern or a format (`"`, the body's DFA, `"`), a rule that is nothing but an embedded
DFA. Determinizing their NFAs re-explores every state of the embedded DFA (42,000 states in a
real schema: 115 ms). Instead the parts are joined directly: A·B is deterministic when, at
every accepting state of A, A's transitions and B's start transitions use disjoint symbols (the
accepting state takes both rows, so each symbol continues in A or starts B, never both). Then
the chain only needs minimizing. Minimal DFAs are numbered canonically (BFS over classes
numbered by first symbol), so the result has the very arrays the subset construction gives
(tests/automata/test_glue.py compares them).
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import NamedTuple, Optional

import numpy as np

from ..errors import EmptyLanguageError, LimitExceededError
from ..limits import Limits
from . import ir
from .dfa import DFA, _minimal_dfa, determinize, minimize
from .nfa import build_nfa, nfa_states
from .rule_facts import callees


class _Raw(NamedTuple):
    """DFA arrays over symbols 0..255 (bytes) and 256.. (calls): the class of each symbol
    (a class whose column is all -1 stands for "no transition"), table, accepting."""

    classes: np.ndarray
    table: np.ndarray
    accepting: np.ndarray


def glued_dfa(node: ir.Node, calls: dict[str, int], limits: Limits) -> Optional[DFA]:
    """The DFA of `node` (as determinize(build_nfa(node)) would give it) when `node` is an
    embedded DFA, or a concatenation with one whose parts join deterministically (see above);
    None where this does not apply or a limit might be met (the general construction then
    decides)."""
    if isinstance(node, ir.Embedded):
        # As it is: embedded DFAs are trimmed and deterministic (and minimal, but for the
        # other-keys tries of spelled_keys.py, which leave shared key suffixes unmerged).
        return node.dfa  # type: ignore[return-value]
    keyed = _key_then_words(node, calls, limits)
    if keyed is not None:
        return keyed
    glued = _glue(node, calls, limits)
    if glued is None:
        return None
    joined, minimal = glued
    return _renumbered(joined, len(calls)) if minimal else minimize(*joined, len(calls))


def _key_then_words(node: ir.Node, calls: dict[str, int], limits: Limits) -> Optional[DFA]:
    """The commonest glued rule in one kernel (join.join_after_key): a key language (a minimal
    DFA without calls, ending at its closing quote), then a small part (`:` and the value's
    call). None where the shape differs; _glue then decides."""
    if type(node) is not ir.Concat or len(node.items) < 2 or not isinstance(node.items[0], ir.Embedded):
        return None
    head: DFA = node.items[0].dfa  # type: ignore[union-attr,assignment]
    if not head.minimal or head.call_classes.size or nfa_states(node) > limits.max_nfa_states:
        return None
    tail = _part(ir.concat(*node.items[1:]), calls, len(calls), limits.max_dfa_states - head.n_states, limits)
    if tail is None:
        return None
    from .join import join_after_key  # numba loads on first use

    classes, table, accepting, ok = join_after_key(
        head.byte_classes, head.table, head.accepting, *map(_read_only, tail)
    )
    if not ok or table.shape[0] > limits.max_dfa_states * 2:
        return None
    return _minimal_dfa(classes, table, accepting, True, len(calls))


def glued_raw(node: ir.Node, calls: dict[str, int], limits: Limits) -> Optional[_Raw]:
    """glued_dfa's arrays before minimizing (None where it does not apply). Cheap next to the
    minimization, and once they exist no limit can stop glued_dfa: compile_rules asks it of
    large rules, whose DFAs it would otherwise build at once to meet their limits early."""
    if isinstance(node, ir.Embedded):
        return _raw(node.dfa, len(calls))  # type: ignore[arg-type]
    glued = _glue(node, calls, limits)
    return None if glued is None else glued[0]


def _glue(node: ir.Node, calls: dict[str, int], limits: Limits) -> Optional[tuple[_Raw, bool]]:
    """The joined arrays of a concatenation around an embedded DFA, and whether they are
    minimal already (see _joins_minimal)."""
    n_calls = len(calls)
    if not isinstance(node, ir.Concat):
        return None
    at = next((i for i, item in enumerate(node.items) if isinstance(item, ir.Embedded)), None)
    if at is None or nfa_states(node) > limits.max_nfa_states:
        return None
    head: DFA = node.items[at].dfa  # type: ignore[assignment]
    before, after = node.items[:at], node.items[at + 1:]
    if head.call_classes.size or any(callees(item) for item in before):
        return None
    room = limits.max_dfa_states - head.n_states
    parts = [_part(ir.concat(*before), {}, n_calls, room, limits)] if before else []
    parts.append(_raw(head, n_calls))
    if after:
        parts.append(_part(ir.concat(*after), calls, n_calls, room, limits))
    if any(p is None for p in parts):
        return None
    joined = parts[0]
    for part in parts[1:]:
        joined = _join(joined, part)  # type: ignore[arg-type]
        if joined is None:
            return None
    if joined.table.shape[0] > limits.max_dfa_states * 2:
        return None  # (minimizing decides the size; this only bounds the work before it)
    return joined, not before and _joins_minimal(head, parts[-1] if after else None)  # type: ignore[return-value]


def _joins_minimal(head: DFA, tail: Optional[_Raw]) -> bool:
    """Is head·tail minimal already? When head is minimal with one accepting state and nothing
    after it (a quoted key: its closing quote ends it), that state becomes tail's start, and
    tail (minimal) has no way back to its start: every state keeps what told it apart (key
    tries of hundreds of states then skip a refinement that cost more than the rest of
    their member rule; test_glue.py compares with the subset construction's arrays)."""
    if not head.minimal or tail is None:
        return False
    ends = np.flatnonzero(head.accepting)
    if len(ends) != 1 or (head.table[ends[0]] >= 0).any():
        return False
    return not (tail.table == 0).any()


def _renumbered(joined: _Raw, n_calls: int) -> DFA:
    """The joined arrays in minimize's canonical form (BFS numbering, equal columns merged),
    without merging states."""
    from .canonical import compact

    merged, table, accepting = compact(*(np.require(a, t, ("C", "W")) for a, t in zip(joined, (np.int32, np.int32, np.bool_))))
    return _minimal_dfa(merged, table, accepting, True, n_calls)


def _part(node: ir.Node, calls: dict[str, int], n_calls: int, room: int, limits: Limits) -> Optional[_Raw]:
    """A small part's DFA over bytes and `n_calls` call symbols (None: empty, or over the
    room left)."""
    if room < 1:
        return None
    raw = _small_part(node, tuple(calls.items()), n_calls, limits)
    return raw if raw is not None and raw.table.shape[0] <= room else None


@lru_cache(maxsize=1024)
def _small_part(node: ir.Node, calls: tuple, n_calls: int, limits: Limits) -> Optional[_Raw]:
    """(Shared: the same `: value` suffix ends the member rules of most objects.)"""
    try:
        dfa = determinize(
            build_nfa(node, limits.max_nfa_states, dict(calls)),
            limits,
            time.perf_counter() + limits.max_compile_seconds,
            n_calls=len(calls),
        )
    except (EmptyLanguageError, LimitExceededError):
        return None
    return _raw(dfa, n_calls)


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view: the kernels then see one argument type whatever made the array
    (numba compiles and loads a version per signature)."""
    view = array.view()
    view.setflags(write=False)
    return view


def _raw(dfa: DFA, n_calls: int) -> _Raw:
    """A DFA's arrays over bytes and `n_calls` call symbols (calls it lacks: a column of -1)."""
    if dfa.call_classes.size == n_calls:
        calls = dfa.call_classes
        table = dfa.table
    else:
        calls = np.full(n_calls, dfa.n_classes, dtype=np.int32)
        table = np.concatenate((dfa.table, np.full((dfa.n_states, 1), -1, dtype=np.int32)), axis=1)
    return _Raw(np.concatenate((dfa.byte_classes, calls)).astype(np.int32), table, dfa.accepting)


def _join(a: _Raw, b: _Raw) -> Optional[_Raw]:
    """a·b, each accepting state of a also taking b's start row; None where such a state has a
    transition on a symbol b's start also reads (the result would not be deterministic)."""
    from .join import join  # numba loads on first use

    classes, table, accepting, ok = join(*map(_read_only, (*a, *b)))
    return _Raw(classes, table, accepting) if ok else None
