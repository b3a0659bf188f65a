"""IR → Thompson NFA over byte ranges.

The NFA is an intermediate: it exists only while the DFA is built. Every character range is
lowered to its UTF-8 byte-range sequences here, so all later stages see bytes only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import numpy as np

from ..errors import GrammarError, LimitExceededError
from . import ir
from .charset import utf8_sequences


@dataclass
class NFA:
    """States 0..n_states-1; `start` and the single accepting state `final`.

    Edges are flat rows (source, lo, hi, target) and epsilon edges rows (source, target): Python
    lists of ints while the builder adds them one at a time, array blocks for embedded DFAs,
    so determinize gets plain arrays without a loop per edge."""

    n_states: int = 0
    edges: list[int] = field(default_factory=list)  # source, lo, hi, target, source, ...
    eps: list[int] = field(default_factory=list)  # source, target, source, ...
    edge_blocks: list[np.ndarray] = field(default_factory=list)  # (m, 4) int64
    eps_blocks: list[np.ndarray] = field(default_factory=list)  # (m, 2) int64
    start: int = 0
    final: int = 0

    def edge_array(self) -> np.ndarray:
        """All edges as an (m, 4) int64 array."""
        return np.concatenate([np.array(self.edges, dtype=np.int64).reshape(-1, 4), *self.edge_blocks])

    def eps_array(self) -> np.ndarray:
        """All epsilon edges as an (m, 2) int64 array."""
        return np.concatenate([np.array(self.eps, dtype=np.int64).reshape(-1, 2), *self.eps_blocks])


@lru_cache(maxsize=8192)
def _sequences(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """UTF-8 byte-range sequences of a character set, shared by every NFA build (the same few
    sets, string characters and key letters, recur in every schema)."""
    return tuple(utf8_sequences(ranges))


CALL_BASE = 256  # a call of rule k is the pseudo-byte CALL_BASE + k

TEMPLATE_STATES = 24  # a subtree this large, met again in one build, is stamped from its first
_COMPOSITE = (ir.Concat, ir.Alt, ir.Repeat, ir.Graph)


class _Builder:
    def __init__(self, max_states: int, calls: Optional[dict[str, int]] = None) -> None:
        self.nfa = NFA()
        self.max_states = max_states
        self.calls = calls or {}
        self._met: dict[int, tuple] = {}  # id(subtree) -> the extent of its first build, or its template

    def new(self, count: int = 1) -> int:
        """The first of `count` fresh consecutive states."""
        first = self.nfa.n_states
        if first + count > self.max_states:
            raise LimitExceededError(
                "NFA size", self.max_states, "Limits(max_nfa_states=...) passed to Compiler"
            )
        self.nfa.n_states = first + count
        return first

    def eps(self, u: int, v: int) -> None:
        self.nfa.eps.extend((u, v))

    def frag(self, node: ir.Node, s: int) -> int:
        """Build `node` starting at state `s`; return its exit state. Never adds edges into `s`
        from inside the fragment, so fragments may share entry states."""
        kind = type(node)
        if kind is ir.Chars:  # (the commonest node: its plan is one lookup)
            chain, steps = ir.fact(node, "_chars_plan", _find_chars_plan)
            if chain:
                return self._chain(chain, s)
            e = self.new()
            if steps:  # (ASCII sets: whitespace, a letter in either case)
                edges = self.nfa.edges
                for lo, hi in steps:
                    edges.extend((s, lo, hi, e))
                return e
            for seq in _sequences(node.ranges):
                cur = s
                for k, (lo, hi) in enumerate(seq):
                    nxt = e if k == len(seq) - 1 else self.new()
                    self.nfa.edges.extend((cur, lo, hi, nxt))
                    cur = nxt
            return e
        if kind in _COMPOSITE and _size(node) >= TEMPLATE_STATES:
            met = self._met.get(id(node))
            if met is not None:
                return self._stamp(id(node), met, s)
            before = self._mark(s)
            exit_state = self._composite(node, kind, s)
            self._met[id(node)] = (before, self._mark(exit_state))
            return exit_state
        return self._composite(node, kind, s)

    def _composite(self, node: ir.Node, kind: type, s: int) -> int:
        if kind is ir.Concat:
            chain = _chain(node)
            if chain is not False:  # a fixed sequence of byte ranges (keys, literals): one loop
                return self._chain(chain, s)
            cur = s
            for part in _plan(node):
                cur = self._chain(part, cur) if type(part) is tuple else self.frag(part, cur)
            return cur
        if isinstance(node, ir.Alt):
            e = self.new()
            for item in node.items:
                b = self.new()
                self.eps(s, b)
                self.eps(self.frag(item, b), e)
            return e
        if isinstance(node, ir.Repeat):
            cur = s
            if node.max is None and node.min and _loops_back(node):
                # x+ as one copy of x whose exit leads back to its entry (not x x*: two copies)
                for _ in range(node.min - 1):
                    cur = self.frag(node.item, cur)
                b = self.new()
                self.eps(cur, b)
                x = self.frag(node.item, b)
                self.eps(x, b)
                return x
            for _ in range(node.min):
                cur = self.frag(node.item, cur)
            if node.max is None:
                loop = self.new()
                self.eps(cur, loop)
                steps, others = _star_parts(node)
                if steps:  # (one-byte sets: self-loops; ignored whitespace after every terminal)
                    edges = self.nfa.edges
                    for lo, hi in steps:
                        edges.extend((loop, lo, hi, loop))
                for item in others:
                    self.eps(self.frag(item, loop), loop)
                return loop
            e = self.new()
            for _ in range(node.max - node.min):
                self.eps(cur, e)
                b = self.new()
                self.eps(cur, b)
                cur = self.frag(node.item, b)
            self.eps(cur, e)
            return e
        if isinstance(node, ir.RuleRef):
            k = self.calls.get(node.name)
            if k is None:
                raise GrammarError(f"reference to unknown rule {node.name!r}")
            e = self.new()
            self.nfa.edges.extend((s, CALL_BASE + k, CALL_BASE + k, e))
            return e
        if isinstance(node, ir.Embedded):
            return self._embed(node.dfa, s)
        if isinstance(node, ir.Graph):
            return self._graph(node, s)
        raise TypeError(f"not an IR node: {node!r}")

    def _mark(self, state: int) -> tuple[int, ...]:
        nfa = self.nfa
        return (state, nfa.n_states, len(nfa.edges), len(nfa.eps), len(nfa.edge_blocks), len(nfa.eps_blocks))

    def _stamp(self, key: int, met: tuple, s: int) -> int:
        """A subtree met again in this build (Lark rules repeat theirs: SQL's select clause holds
        one 377-state part three times): a copy of its first build's states and edges, shifted
        by numpy, instead of a walk over the tree. The states are numbered as a walk would."""
        if len(met) == 2:
            met = self._met[key] = self._template(*met)
        count, edges, eps, exit_rel = met
        base = self.new(count)
        if len(edges):
            self.nfa.edge_blocks.append(_shifted(edges, base, s, 3))
        if len(eps):
            self.nfa.eps_blocks.append(_shifted(eps, base, s, 1))
        return s if exit_rel < 0 else exit_rel + base

    def _template(self, before: tuple, after: tuple) -> tuple:
        """The first build of a subtree, its states relative to its first one (its entry: -1)."""
        old_s, first, e0, p0, b0, q0 = before
        exit_state, end, e1, p1, b1, q1 = after
        nfa = self.nfa
        edges = np.concatenate([np.array(nfa.edges[e0:e1], dtype=np.int64).reshape(-1, 4), *nfa.edge_blocks[b0:b1]])
        eps = np.concatenate([np.array(nfa.eps[p0:p1], dtype=np.int64).reshape(-1, 2), *nfa.eps_blocks[q0:q1]])
        for arr, last in ((edges, 3), (eps, 1)):
            arr[:, 0] = np.where(arr[:, 0] == old_s, -1, arr[:, 0] - first)
            arr[:, last] -= first
        return end - first, edges, eps, (-1 if exit_state == old_s else exit_state - first)

    def _chain(self, chain: tuple, s: int) -> int:
        """A fixed sequence of byte ranges from `s`; returns its last state."""
        first = self.new(len(chain))
        edges = self.nfa.edges
        cur = s
        for k, (lo, hi) in enumerate(chain):
            edges.extend((cur, lo, hi, first + k))
            cur = first + k
        return cur

    def _graph(self, g: ir.Graph, s: int) -> int:
        """Graph states become fresh NFA states; each edge's node is built from its source
        state and joined to its target by an epsilon edge."""
        e = self.new()
        states = [self.new() for _ in range(g.n_states)]
        self.eps(s, states[g.start])
        for u, v, node in g.edges:
            self.eps(self.frag(node, states[u]), states[v])
        for f in g.finals:
            self.eps(states[f], e)
        return e

    def _embed(self, dfa, s: int) -> int:
        """Copy a DFA in: one NFA state per DFA state, one byte-range edge per class interval."""
        e = self.new()
        # A fresh state for the DFA's start: its loops must not run into the shared entry `s`.
        base = self.new(dfa.n_states)
        self.eps(s, base)
        bc = dfa.byte_classes
        lo = np.flatnonzero(np.concatenate(([True], bc[1:] != bc[:-1])))
        hi = np.concatenate((lo[1:] - 1, [255]))
        targets = dfa.table[:, bc[lo]]
        q, i = np.nonzero(targets >= 0)
        self.nfa.edge_blocks.append(np.stack((base + q, lo[i], hi[i], base + targets[q, i]), axis=1).astype(np.int64))
        acc = np.flatnonzero(dfa.accepting)
        self.nfa.eps_blocks.append(np.stack((base + acc, np.full(len(acc), e)), axis=1).astype(np.int64))
        return e


def _shifted(rel: np.ndarray, base: int, entry: int, target: int) -> np.ndarray:
    """Template rows (source in column 0, target in column `target`; -1: the entry) as states
    from `base` on, entering at `entry`; other columns (byte ranges) as they are."""
    out = rel.copy()
    out[:, 0] = np.where(rel[:, 0] < 0, entry, rel[:, 0] + base)
    out[:, target] += base
    return out


def _find_chars_plan(node: ir.Chars) -> tuple[tuple, tuple]:
    """(its byte ranges as a chain, where it has one UTF-8 form; else its one-byte ranges, where
    every character is one byte); empty where not."""
    chain = _chain(node)
    return (chain or (), ()) if chain is not False else ((), _one_byte(node))


def _one_byte(node: ir.Chars) -> tuple:
    """The byte ranges of a character set whose every character is one byte (ASCII), or ()."""
    return ir.fact(node, "_one_byte", _find_one_byte)


def _find_one_byte(node: ir.Chars) -> tuple:
    seqs = _sequences(node.ranges)
    return tuple(seq[0] for seq in seqs) if seqs and all(len(seq) == 1 for seq in seqs) else ()


def _star_parts(node: ir.Repeat) -> tuple[tuple, tuple]:
    """A star's item as (byte ranges read by a self-loop, the other alternatives): `(A | B)*`
    with A one-byte sets, or runs of them (`(A+ | B)*` is `(A | B)*`), loops on one state."""
    return ir.fact(node, "_star_parts", _find_star_parts)


def _loops_back(node: ir.Repeat) -> bool:
    """Is `node` (unbounded, at least once) built as one copy with a way back? Where its item
    has no one-byte part a self-loop would read (`[ \t]+` keeps its self-loop state)."""
    return not _star_parts(node)[0]


def _find_star_parts(node: ir.Repeat) -> tuple[tuple, tuple]:
    steps: list[tuple[int, int]] = []
    others: list[ir.Node] = []
    for item in node.item.items if isinstance(node.item, ir.Alt) else (node.item,):
        unit = item.item if isinstance(item, ir.Repeat) and item.min <= 1 and item.max is None else item
        found = _one_byte(unit) if isinstance(unit, ir.Chars) else ()
        if found:
            steps.extend(found)
        else:
            others.append(item)
    if not steps:
        return (), (node.item,)
    return tuple(steps), tuple(others)


def _chain(node: ir.Node):
    """The byte ranges of a node that matches one sequence of them (a Concat of characters
    with a single UTF-8 form each: JSON keys, literals), or False."""
    return ir.fact(node, "_chain", _find_chain)


def _plan(node: ir.Concat) -> tuple:
    """A Concat's items with each run of fixed sequences joined into one (a tuple of byte
    ranges): object members are a comma, a key and a colon, then a call. The states and edges
    are those the items make one by one, in the same order."""
    return ir.fact(node, "_plan", _find_plan)


def _find_plan(node: ir.Concat) -> tuple:
    parts: list = []
    run: list = []
    for item in node.items:
        chain = _chain(item) if isinstance(item, (ir.Chars, ir.Concat)) else False
        if chain is False:
            if run:
                parts.append(tuple(run))
                run = []
            parts.append(item)
        else:
            run.extend(chain)
    if run:
        parts.append(tuple(run))
    return tuple(parts)


def _find_chain(n: ir.Node):
    if isinstance(n, ir.Chars):
        seqs = _sequences(n.ranges)
        return seqs[0] if len(seqs) == 1 else False
    if isinstance(n, ir.Concat):
        out: list[tuple[int, int]] = []
        for m in n.items:
            part = _chain(m) if isinstance(m, (ir.Chars, ir.Concat)) else False
            if part is False:
                return False
            out.extend(part)
        return tuple(out)
    return False


def nfa_states(node: ir.Node) -> int:
    """How many states build_nfa(node) makes (at most, with Deferred DFAs), without making
    them: rules whose DFAs are built lazily are still held to max_nfa_states at compile time."""
    return 1 + _size(node)


def _size(n: ir.Node) -> int:
    facts = n.__dict__  # (ir.fact inlined: asked of every node of every rule)
    found = facts.get("_nfa_size")
    if found is None:
        found = facts["_nfa_size"] = _count(n)
    return found


def _count(n: ir.Node) -> int:
    """States frag(n) makes (mirrors _Builder.frag)."""
    kind = type(n)
    if kind is ir.Chars:
        return _chars_size(n.ranges)  # type: ignore[union-attr]
    if kind is ir.Concat:
        return sum(map(_size, n.items))  # type: ignore[union-attr]
    if isinstance(n, ir.Alt):
        return 1 + len(n.items) + sum(map(_size, n.items))
    if isinstance(n, ir.Repeat):
        item = _size(n.item)
        if n.max is None:
            if n.min and _loops_back(n):
                return n.min * item + 1
            return n.min * item + 1 + sum(map(_size, _star_parts(n)[1]))  # type: ignore[arg-type]
        return n.min * item + 1 + (n.max - n.min) * (1 + item)
    if isinstance(n, ir.RuleRef):
        return 1
    if isinstance(n, ir.Deferred):
        return 1 + n.max_states  # a bound: the DFA may not exist yet
    if isinstance(n, ir.Embedded):
        return 1 + n.dfa.n_states
    if isinstance(n, ir.Graph):
        return 1 + n.n_states + sum(_size(e[2]) for e in n.edges)
    raise TypeError(f"not an IR node: {n!r}")


@lru_cache(maxsize=8192)
def _chars_size(ranges: tuple[tuple[int, int], ...]) -> int:
    return 1 + sum(len(seq) - 1 for seq in _sequences(ranges))


def build_nfa(node: ir.Node, max_states: int, calls: Optional[dict[str, int]] = None) -> NFA:
    """Thompson NFA of `node`; `calls` numbers the rules a RuleRef may name."""
    b = _Builder(max_states, calls)
    start = b.new()
    final = b.frag(node, start)
    b.nfa.start, b.nfa.final = start, final
    return b.nfa
