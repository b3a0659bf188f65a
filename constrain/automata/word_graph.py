"""Rules that are a Graph of words, determinized directly: JSON objects in schema order.

An object rule is `{`, a Graph whose edges are members (`,"key":` then a call of the value's
rule) or skips of optional members, then `}`. Every edge spells one fixed word over bytes and
calls. For such rules the Thompson NFA (built node by node in Python) and the general subset
construction cost more than the work: here the edges become flat arrays and one numba call
does the subset construction over word positions (a DFA state is the set of positions about
to be read, a position at a word's end continuing in the closure of the edge's target) and
the minimization. The result is the minimal DFA of the same language, numbered as
determinize numbers it (tests/automata/test_word_graph.py compares the arrays).

Rules of any other shape (whitespace runs, key patterns inline, alternatives on an edge)
return None and take the general path.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import LimitExceededError
from ..limits import Limits
from . import ir
from .nfa import _chain

def word_graph_dfa(node: ir.Node, calls: dict[str, int], limits: Limits):
    """The minimal DFA of `node` when it is a Graph of words between fixed prefix and suffix
    words (calls are symbol 256 + their column in `calls`), else None."""
    flat = _flatten(node, calls)
    if flat is None:
        return None
    from .dfa import _minimal_dfa
    from .word_graph_kernel import TOO_MANY, determinize_words

    n_states, start, end, e_src, e_dst, e_ptr, syms = flat
    merged, table, accepting, start_live, status = determinize_words(
        n_states, start, end, e_src, e_dst, e_ptr, syms, 256 + len(calls), limits.max_dfa_states
    )
    if status == TOO_MANY:
        raise LimitExceededError("DFA size (states)", limits.max_dfa_states, "Limits(max_dfa_states=...)")
    return _minimal_dfa(merged, table, accepting, start_live, len(calls))


def _flatten(node: ir.Node, calls: dict[str, int]) -> Optional[tuple]:
    """(graph states + 2, start, end, edge sources, targets, word offsets, symbols) with a
    start state reading the prefix into the Graph's start and each final state reading the
    suffix into `end`; None if some part is not a fixed word."""
    if type(node) is ir.Graph:
        graph, before, after = node, (), ()
    elif type(node) is ir.Concat:
        at = [i for i, item in enumerate(node.items) if type(item) is ir.Graph]
        if len(at) != 1:
            return None
        graph, before, after = node.items[at[0]], node.items[: at[0]], node.items[at[0] + 1 :]
    else:
        return None
    prefix = _word_of_items(before, calls)
    suffix = _word_of_items(after, calls)
    if prefix is None or suffix is None:
        return None
    n = graph.n_states
    start, end = n, n + 1
    src: list[int] = [start]
    dst: list[int] = [graph.start]
    ptr: list[int] = [0, len(prefix)]
    syms: list[int] = list(prefix)
    for u, v, m in graph.edges:
        word = _word(m, calls)
        if word is None:
            return None
        src.append(u)
        dst.append(v)
        syms += word
        ptr.append(len(syms))
    for f in graph.finals:
        src.append(f)
        dst.append(end)
        syms += suffix
        ptr.append(len(syms))
    as_ints = np.array
    return (
        n + 2, start, end, as_ints(src, dtype=np.int64), as_ints(dst, dtype=np.int64),
        as_ints(ptr, dtype=np.int64), as_ints(syms, dtype=np.int64),
    )


def _word_of_items(items: tuple, calls: dict[str, int]) -> Optional[list[int]]:
    out: list[int] = []
    for item in items:
        word = _word(item, calls)
        if word is None:
            return None
        out += word
    return out


def _word(m: ir.Node, calls: dict[str, int]) -> Optional[list[int]]:
    """The symbols `m` spells (bytes, 256 + k for a call of column k), or None if it matches
    more than one sequence of them."""
    kind = type(m)
    if kind is ir.RuleRef:
        k = calls.get(m.name)  # type: ignore[union-attr]
        return None if k is None else [256 + k]
    if kind is ir.Chars:
        return _fixed_bytes(m)
    if kind is not ir.Concat:
        return None
    out: list[int] = []
    for item in m.items:  # type: ignore[union-attr]
        t = type(item)
        if t is ir.Chars or t is ir.Concat:
            fixed = _fixed_bytes(item)
            if fixed is None:
                if t is ir.Chars:
                    return None
                fixed = _word(item, calls)  # a Concat with calls inside
                if fixed is None:
                    return None
            out += fixed
        elif t is ir.RuleRef:
            k = calls.get(item.name)  # type: ignore[union-attr]
            if k is None:
                return None
            out.append(256 + k)
        else:
            return None
    return out


def _fixed_bytes(m: ir.Node) -> Optional[list[int]]:
    """The one byte string a call-free node matches, if its chain is single bytes."""
    facts = m.__dict__
    found = facts.get("_fixed_bytes")
    if found is None:
        chain = _chain(m)
        found = False
        if chain is not False and all(lo == hi for lo, hi in chain):
            found = [lo for lo, _ in chain]
        facts["_fixed_bytes"] = found
    return None if found is False else found
