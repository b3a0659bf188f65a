"""IR → Thompson NFA over byte ranges.

The NFA is an intermediate: it exists only while the DFA is built. Every character range is
lowered to its UTF-8 byte-range sequences here, so all later stages see bytes only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from typing import Optional

from ..errors import GrammarError, LimitExceededError
from . import ir
from .charset import utf8_sequences


@dataclass
class NFA:
    """States 0..n-1; `start` and the single accepting state `final`."""

    eps: list[list[int]] = field(default_factory=list)
    edges: list[list[tuple[int, int, int]]] = field(default_factory=list)  # (lo, hi, target)
    start: int = 0
    final: int = 0

    @property
    def n_states(self) -> int:
        return len(self.eps)


CALL_BASE = 256  # a call of rule k is the pseudo-byte CALL_BASE + k


class _Builder:
    def __init__(self, max_states: int, calls: Optional[dict[str, int]] = None) -> None:
        self.nfa = NFA()
        self.max_states = max_states
        self.calls = calls or {}
        self._chars_memo: dict[tuple, list[tuple[tuple[int, int], ...]]] = {}

    def new(self) -> int:
        if len(self.nfa.eps) >= self.max_states:
            raise LimitExceededError(
                "NFA size", self.max_states, "Limits(max_nfa_states=...) passed to Compiler"
            )
        self.nfa.eps.append([])
        self.nfa.edges.append([])
        return len(self.nfa.eps) - 1

    def frag(self, node: ir.Node, s: int) -> int:
        """Build `node` starting at state `s`; return its exit state. Never adds edges into `s`
        from inside the fragment, so fragments may share entry states."""
        if isinstance(node, ir.Chars):
            e = self.new()
            seqs = self._chars_memo.get(node.ranges)
            if seqs is None:
                seqs = utf8_sequences(node.ranges)
                self._chars_memo[node.ranges] = seqs
            for seq in seqs:
                cur = s
                for k, (lo, hi) in enumerate(seq):
                    nxt = e if k == len(seq) - 1 else self.new()
                    self.nfa.edges[cur].append((lo, hi, nxt))
                    cur = nxt
            return e
        if isinstance(node, ir.Concat):
            cur = s
            for item in node.items:
                cur = self.frag(item, cur)
            return cur
        if isinstance(node, ir.Alt):
            e = self.new()
            for item in node.items:
                b = self.new()
                self.nfa.eps[s].append(b)
                self.nfa.eps[self.frag(item, b)].append(e)
            return e
        if isinstance(node, ir.Repeat):
            cur = s
            for _ in range(node.min):
                cur = self.frag(node.item, cur)
            if node.max is None:
                loop = self.new()
                self.nfa.eps[cur].append(loop)
                self.nfa.eps[self.frag(node.item, loop)].append(loop)
                return loop
            e = self.new()
            for _ in range(node.max - node.min):
                self.nfa.eps[cur].append(e)
                b = self.new()
                self.nfa.eps[cur].append(b)
                cur = self.frag(node.item, b)
            self.nfa.eps[cur].append(e)
            return e
        if isinstance(node, ir.RuleRef):
            k = self.calls.get(node.name)
            if k is None:
                raise GrammarError(f"reference to unknown rule {node.name!r}")
            e = self.new()
            self.nfa.edges[s].append((CALL_BASE + k, CALL_BASE + k, e))
            return e
        if isinstance(node, ir.Embedded):
            return self._embed(node.dfa, s)
        if isinstance(node, ir.Graph):
            return self._graph(node, s)
        raise TypeError(f"not an IR node: {node!r}")

    def _graph(self, g: ir.Graph, s: int) -> int:
        """Graph states become fresh NFA states; each edge's node is built from its source
        state and joined to its target by an epsilon edge."""
        e = self.new()
        states = [self.new() for _ in range(g.n_states)]
        self.nfa.eps[s].append(states[g.start])
        for u, v, node in g.edges:
            self.nfa.eps[self.frag(node, states[u])].append(states[v])
        for f in g.finals:
            self.nfa.eps[states[f]].append(e)
        return e

    def _embed(self, dfa, s: int) -> int:
        """Copy a DFA in: one NFA state per DFA state, one byte-range edge per class interval."""
        e = self.new()
        # A fresh state for the DFA's start: its loops must not run into the shared entry `s`.
        states = [self.new() for _ in range(dfa.n_states)]
        self.nfa.eps[s].append(states[0])
        classes = dfa.byte_classes.tolist()
        intervals: list[tuple[int, int, int]] = []  # (lo, hi, class)
        for b, c in enumerate(classes):
            if intervals and intervals[-1][2] == c and intervals[-1][1] == b - 1:
                intervals[-1] = (intervals[-1][0], b, c)
            else:
                intervals.append((b, b, c))
        table = dfa.table.tolist()
        for q, row in enumerate(table):
            for lo, hi, c in intervals:
                t = row[c]
                if t >= 0:
                    self.nfa.edges[states[q]].append((lo, hi, states[t]))
            if dfa.accepting[q]:
                self.nfa.eps[states[q]].append(e)
        return e


def build_nfa(node: ir.Node, max_states: int, calls: Optional[dict[str, int]] = None) -> NFA:
    """Thompson NFA of `node`; `calls` numbers the rules a RuleRef may name."""
    b = _Builder(max_states, calls)
    start = b.new()
    final = b.frag(node, start)
    b.nfa.start, b.nfa.final = start, final
    return b.nfa
