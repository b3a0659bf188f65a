"""Rules that are a Graph of words, determinized directly: JSON objects in schema order.

An object rule is `{`, a Graph whose edges are members (`,"key":` then a call of the value's
rule) or skips of optional members, then `}`. Every edge spells one fixed word over bytes and
calls. For such rules the Thompson NFA (built node by node in Python) and the general subset
construction cost more than the work: here the edges become flat arrays and one numba call
does the subset construction over word positions (a DFA state is the set of positions about
to be read, a position at a word's end continuing in the closure of the edge's target) and
the minimization. The result is the minimal DFA of the same language, numbered as
determinize numbers it (tests/automata/test_word_graph.py compares the arrays).

An Alt of such rules (anyOf over objects) is one graph with a shared start and end; an Alt of
words alone (an enum of strings: hundreds of values in some schemas) is one too. Rules of any
other shape (whitespace runs, key patterns inline, alternatives on an edge) return None and
take the general path. compile_rules also checks the limits of large rules here, without
minimizing (word_graph_fits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..errors import LimitExceededError
from ..limits import Limits
from . import ir
from .nfa import _chain

if TYPE_CHECKING:
    from .dfa import DFA


def word_graph_dfa(node: ir.Node, calls: dict[str, int], limits: Limits) -> "Optional[DFA]":
    """The minimal DFA of `node` when it is a Graph of words between fixed prefix and suffix
    words, or an Alt of such (and of words), else None. Calls are symbol 256 + their column
    in `calls`."""
    found = _determinized(node, calls, limits, minimize=True)
    if found is None:
        return None
    from .dfa import _minimal_dfa

    merged, table, accepting, start_live = found
    return _minimal_dfa(merged, table, accepting, start_live, len(calls))


def word_graph_fits(node: ir.Node, calls: dict[str, int], limits: Limits) -> bool:
    """Does word_graph_dfa apply to `node`? Raises what it would raise for a limit, without
    minimizing (compile_rules checks large rules so; their DFAs wait for first use)."""
    return _determinized(node, calls, limits, minimize=False) is not None


def _determinized(node: ir.Node, calls: dict[str, int], limits: Limits, minimize: bool) -> Optional[tuple]:
    flat = _flatten(node, calls)
    if flat is None:
        return None
    from .word_graph_kernel import TOO_MANY, determinize_words

    n_states, start, end, e_src, e_dst, e_ptr, syms = flat
    merged, table, accepting, start_live, status = determinize_words(
        n_states, start, end, e_src, e_dst, e_ptr, syms, 256 + len(calls), limits.max_dfa_states, minimize
    )
    if status == TOO_MANY:
        raise LimitExceededError("DFA size (states)", limits.max_dfa_states, "Limits(max_dfa_states=...)")
    return merged, table, accepting, start_live


def _flatten(node: ir.Node, calls: dict[str, int]) -> Optional[tuple]:
    """(states, start, end, edge sources, targets, word offsets, symbols): a start state, an
    end state, and per alternative of `node` (an Alt: anyOf over objects) the states of its
    Graph, entered by the prefix word from the start, left by the suffix word from each final
    state into the end (an alternative without a Graph: one word from start to end). None if
    some part is not a fixed word, or `node` is one word (no Graph, no Alt)."""
    branches = node.items if type(node) is ir.Alt else (node,)  # type: ignore[union-attr]
    src: list[int] = []
    dst: list[int] = []
    ptr: list[int] = [0]
    syms: list[int] = []
    n = 2  # 0: start, 1: end
    graphs = 0
    words: dict[int, Any] = {}  # per edge node (its word, or None): graphs share member nodes
    for branch in branches:
        shape = _around_graph(branch)
        if shape is None:
            word = _word(branch, calls)
            if word is None:
                return None
            src.append(0)
            dst.append(1)
            syms += word
            ptr.append(len(syms))
            continue
        graph, before, after = shape
        prefix = _word_of_items(before, calls)
        suffix = _word_of_items(after, calls)
        if prefix is None or suffix is None:
            return None
        graphs += 1
        src.append(0)
        dst.append(n + graph.start)
        syms += prefix
        ptr.append(len(syms))
        for u, v, m in graph.edges:
            word = words.get(id(m), False)
            if word is False:
                word = words[id(m)] = _word(m, calls)
            if word is None:
                return None
            src.append(n + u)
            dst.append(n + v)
            syms += word
            ptr.append(len(syms))
        for f in graph.finals:
            src.append(n + f)
            dst.append(1)
            syms += suffix
            ptr.append(len(syms))
        n += graph.n_states
    if not graphs and type(node) is not ir.Alt:
        return None  # (one word: the general path is as quick)
    as_ints = np.array
    return (
        n, 0, 1, as_ints(src, dtype=np.int64), as_ints(dst, dtype=np.int64),
        as_ints(ptr, dtype=np.int64), as_ints(syms, dtype=np.int64),
    )


def _around_graph(node: ir.Node) -> Optional[tuple]:
    """(the Graph, items before it, items after it) of a Graph or a Concat with one Graph."""
    if type(node) is ir.Graph:
        return node, (), ()
    if type(node) is not ir.Concat:
        return None
    at = [i for i, item in enumerate(node.items) if type(item) is ir.Graph]  # type: ignore[union-attr]
    if len(at) != 1:
        return None
    items = node.items  # type: ignore[union-attr]
    return items[at[0]], items[: at[0]], items[at[0] + 1 :]


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
