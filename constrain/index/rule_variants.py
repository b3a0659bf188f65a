"""Rules with some structural bytes refused: variants of a rule set that keep state numbering.

distinct_keys.py refuses an object's `,` once no key may follow and its `}` while a required
key is missing. Refusing them by filtering masks would mean stepping every token that holds a
`,` or `}`; instead the object's frame switches to a *variant* of its rule: the same DFA with
those bytes' transitions removed in the states where a value has returned (object_rules.py).
States keep their numbers, so a frame switches variants by changing its rule id alone, and the
token index walks and caches the variants' states like any other rule's: masks stay exact and
cached. A variant is derived from its rule's DFA on first use.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from ..automata.dfa import DFA
from ..automata.rules import CompiledRule, RuleSet
from .object_rules import after_value_states

COMMA, BRACE = 0x2C, 0x7D
NO_COMMA, NO_BRACE = 0, 1


class VariantRules:
    """`base` and, per rule of `marked`, a variant without the structural `,` (id
    `variant(r, NO_COMMA)`) and one without the structural `}`. Duck-types RuleSet for
    StackSemantics, ExitFilter and StackTokenAutomaton."""

    def __init__(self, base: RuleSet, marked: Sequence[int]) -> None:
        self.base = base
        self.marked = tuple(marked)
        n = base.n_rules
        self._of = {}  # variant id -> (base rule, kind)
        self._ids = {}  # (base rule, kind) -> variant id
        for i, r in enumerate(self.marked):
            for kind in (NO_COMMA, NO_BRACE):
                v = n + 2 * i + kind
                self._of[v] = (r, kind)
                self._ids[(r, kind)] = v
        extra = [self._of[v] for v in range(n, n + 2 * len(self.marked))]
        self.names = base.names + tuple(f"{base.names[r]}!{('no_comma', 'no_brace')[k]}" for r, k in extra)
        self.nodes = base.nodes + tuple(base.nodes[r] for r, _ in extra)
        self.callees = base.callees + tuple(base.callees[r] for r, _ in extra)
        self.same = base.same + tuple(range(n, n + len(extra)))
        self.start = base.start
        self._built: dict[int, CompiledRule] = {}
        self._lock = threading.Lock()
        self.dfas = _View(self, 0)
        self.calls = _View(self, 1)
        self.exits = _View(self, 2)

    @property
    def n_rules(self) -> int:
        return len(self.names)

    @property
    def n_built(self) -> int:
        return self.base.n_built + len(self._built)

    def built(self, r: int) -> bool:
        return self.base.built(self._of[r][0] if r in self._of else r)

    def variant(self, r: int, comma: bool, brace: bool) -> int:
        """The id of marked rule r's variant that allows the structural `,` / `}` as asked
        (one of them at least)."""
        if comma and brace:
            return r
        if comma:
            return self._ids[(r, NO_BRACE)]
        if brace:
            return self._ids[(r, NO_COMMA)]
        raise ValueError("an object must allow a comma or its closing brace")

    def base_of(self, r: int) -> int:
        hit = self._of.get(r)
        return r if hit is None else hit[0]

    def rule(self, r: int) -> CompiledRule:
        of = self._of.get(r)
        if of is None:
            return self.base.rule(r)
        hit = self._built.get(r)
        if hit is None:
            with self._lock:
                hit = self._built.get(r)
                if hit is None:
                    base = self.base.rule(of[0])
                    dfa = without_byte(base.dfa, (COMMA, BRACE)[of[1]], after_value_states(base.dfa, base.calls))
                    hit = self._built[r] = CompiledRule(dfa, base.calls, base.exits)
        return hit


def without_byte(dfa: DFA, byte: int, states: np.ndarray) -> DFA:
    """`dfa` with `byte` refused in `states` (the byte gets a column of its own first, so the
    bytes it shared a class with keep their transitions)."""
    col = int(dfa.byte_classes[byte])
    table = np.concatenate([dfa.table, dfa.table[:, col : col + 1]], axis=1)
    new = table.shape[1] - 1
    table[states, new] = -1
    classes = dfa.byte_classes.copy()
    classes[byte] = new
    return DFA(classes, table, dfa.accepting, dfa.call_classes)


class _View(Sequence):
    def __init__(self, rules: VariantRules, field: int) -> None:
        self._rules, self._field = rules, field

    def __len__(self) -> int:
        return self._rules.n_rules

    def __getitem__(self, r):  # type: ignore[override]
        return self._rules.rule(r)[self._field]
