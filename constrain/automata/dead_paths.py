"""Dead paths: call edges no text can take, the states they leave with no way to end their
rule, and rules left deriving nothing.

A greedy rule (a Lark terminal's longest match) returns only before a byte it cannot read, so a
call of one whose return state reads first only bytes it refuses (`start: A "b"` with
`A: /a(?!b)/`, or `W W` with `W: /[a-z]+/`: two names need something between them) is an edge
no text takes; `DeadReturns.live_calls` drops it as a rule is built. That can leave the states
before it with no way to end the rule, and a rule with none at all derives nothing, so its
callers' edges to it are dead too. Left in, a mask allows the bytes into such a state and then
nothing, not even EOS (`start: "x" W W` allowed `x`, then no token). `trim` follows that through
the rules built so far (at compile time: the rules near the start, so every rule of a small
grammar), drops the bytes and calls into dead states, and raises GrammarError where the start
rule is left deriving nothing. A rule built later, at its first mask, is trimmed on its own
edges only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ..errors import GrammarError
from . import ir
from .dfa import DFA
from .refusals import byte_row

if TYPE_CHECKING:
    from .rules import RuleSet


class DeadReturns:
    """The call edges of a rule set's greedy rules that no text can take (see above)."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self._followable: dict[int, Optional[np.ndarray]] = {}

    def live_calls(self, dfa: DFA, calls: tuple) -> tuple:
        """`calls` less the edges no text can take: a call of a greedy rule whose return, in each
        of its accepting states, refuses every byte the return state can read first, where that
        state cannot end the caller and calls only greedy rules (terminals) if any."""
        if not self.rules.any_greedy:
            return calls
        out = list(calls)
        for q, edges in enumerate(calls):
            kept = tuple(e for e in edges if not self._dead_return(dfa, calls, *e))
            if len(kept) != len(edges):
                out[q] = kept
        return tuple(out)

    def _dead_return(self, dfa: DFA, calls: tuple, k: int, t: int) -> bool:
        followable = self._followable_after(k)
        if followable is None or dfa.accepting[t]:
            return False
        first = dfa.table[t, dfa.byte_classes] >= 0
        for callee, _ in calls[t]:  # (a greedy rule reads its first byte itself: it derives no empty text)
            callee_dfa = self._greedy_dfa(callee)
            if callee_dfa is None:
                return False
            first = first | (callee_dfa.table[0, callee_dfa.byte_classes] >= 0)
        return not (followable & first).any()

    def _greedy_dfa(self, k: int) -> Optional[DFA]:
        """Greedy rule k's DFA where it is at hand without building (called under the lock)."""
        rules = self.rules
        if not rules.greedy[k]:
            return None
        node, built = rules.nodes[k], rules._built[k]
        found = built.dfa if built is not None else node.dfa if isinstance(node, ir.Embedded) else None
        return found if isinstance(found, DFA) else None

    def _followable_after(self, k: int) -> Optional[np.ndarray]:
        """Bool per byte: may it follow greedy rule k's return in some accepting state (it does
        not read it there, nor does its end refuse it); None where k is no greedy rule with a
        DFA at hand (then no edge is judged). (Called while the lock is held: no rule() here.)"""
        if k in self._followable:
            return self._followable[k]
        callee = self._greedy_dfa(k)
        out: Optional[np.ndarray] = None
        if callee is not None:
            accepting = np.flatnonzero(callee.accepting)
            ends = callee.table[accepting][:, callee.byte_classes] >= 0
            refused = np.array([byte_row(self.rules.refused_at(k, int(q))) for q in accepting]).reshape(ends.shape)
            out = (~ends & ~refused).any(axis=0)
            for by_byte in self.rules.checks[k].values():
                out[list(by_byte)] = True  # (returns before a byte it reads, checked after it)
        self._followable[k] = out
        return out


def live_states(dfa: DFA, calls: tuple, empty: set[int]) -> np.ndarray:
    """Bool per state: can some text take it to an accepting state, by bytes and by the call
    edges of rules not `empty`."""
    targets = dfa.table[:, np.unique(dfa.byte_classes)]
    edges = [(q, t) for q, out in enumerate(calls) for k, t in out if k not in empty]
    live = dfa.accepting.copy()
    while True:
        grown = live | ((targets >= 0) & live[np.maximum(targets, 0)]).any(axis=1)
        for q, t in edges:
            grown[q] |= grown[t]
        if (grown == live).all():
            return live
        live = grown


def trim(rules: RuleSet, pruned: dict[int, set[int]]) -> None:
    """Drop what leads into dead states from the built rules, once some lost edges (`pruned`:
    rule -> the callees whose edges it lost, see above); GrammarError where the start rule
    derives nothing then, naming the terminals that cannot be followed where they are used. A
    rule derives something where a text takes its start to an end through rules that do (a
    least fixpoint: recursion alone derives nothing); a rule not built yet is taken to."""
    if not pruned:
        return
    built = [r for r in range(rules.n_rules) if rules.built(r) and rules.same[r] == r]
    deriving: set[int] = set()

    def empty() -> set[int]:  # (the built rules, every one sharing a DFA too, not known to derive)
        return {k for k in range(rules.n_rules) if rules.built(k) and rules.same[k] not in deriving}

    changed = True
    while changed:
        changed = False
        dead = empty()
        for r in built:
            rule = rules.rule(r)
            if r not in deriving and live_states(rule.dfa, rule.calls, dead)[0]:
                deriving.add(r)
                changed = True
    dead = empty()
    if rules.start in dead:
        where = sorted({f"{rules.names[k]} in rule {rules.names[r]}" for r, ks in pruned.items() for k in ks})
        exc = GrammarError(
            "the grammar accepts no document at all: every text runs into a terminal that nothing may follow "
            f"where it is used ({', '.join(where[:3])}{' and more' if len(where) > 3 else ''}): what comes next "
            "starts with a byte its longest match would take, or its end refuses (two names need something "
            "between them; Lark's default Earley lexer refuses such texts too)")
        exc.empty_rules = tuple(rules.names[r] for r in sorted(dead))  # type: ignore[attr-defined]
        raise exc
    for r in built:
        if r in deriving and (r in pruned or dead.intersection(rules.callees[r])):
            rule = rules.rule(r)
            live = live_states(rule.dfa, rule.calls, dead)
            rules.replace(r, *_trimmed(rule.dfa, rule.calls, live, dead, rules.callees[r]))


def _trimmed(dfa: DFA, calls: tuple, live: np.ndarray, empty: set[int], callees: tuple) -> tuple[DFA, tuple]:
    """The DFA without its edges into dead states and calls of empty rules; its call edges so."""
    table = dfa.table.copy()
    table[(table >= 0) & ~live[np.maximum(table, 0)]] = -1
    for column, callee in zip(dfa.call_classes.tolist(), callees):
        if callee in empty:
            table[:, column] = -1
    kept = tuple(tuple((k, t) for k, t in out if k not in empty and live[t]) if live[q] else ()
                 for q, out in enumerate(calls))
    return DFA(dfa.byte_classes, table, dfa.accepting, dfa.call_classes), kept
