"""FOLLOW sets of a whole grammar of rules: the bytes that can come right after a rule returns.

follow.py asks, rule by rule, which bytes the callers read after a return, and gives up on
recursion (a caller's own follow still being asked): in SQL's recursive expressions every
answer was "any byte". Here the classical least fixpoint over every call edge: FOLLOW(m) holds
what a caller reads in the state its call of m returns to, what the rules it calls there read
first, and, where that state may return too, the caller's own FOLLOW. A caller not built yet,
or a callee whose first bytes are not known, counts as every byte (a superset is safe: it only
records boundaries a mask does not need).
"""

from __future__ import annotations

import numpy as np

from ..automata.rules import RuleSet

_ALL = np.ones(256, dtype=np.bool_)


def follow_sets(rules: RuleSet) -> list[np.ndarray]:
    """Per rule (by its class: rules.same), bool per byte: may it come right after a return."""
    n, same = rules.n_rules, rules.same
    direct = [np.zeros(256, dtype=np.bool_) for _ in range(n)]
    up: list[set[int]] = [set() for _ in range(n)]
    firsts: dict[int, np.ndarray] = {}
    for c in range(n):
        if not rules.built(c):
            for k in rules.callees[c]:
                direct[same[k]][:] = True
            continue
        rule = rules.rule(c)
        reads = None
        after: dict[int, np.ndarray] = {}  # return state -> what the caller reads there first
        for edges in rule.calls:
            for k, t in edges:
                row = after.get(t)
                if row is None:
                    if reads is None:  # (one table lookup per rule, not per call edge)
                        reads = rule.dfa.table[:, rule.dfa.byte_classes] >= 0
                    row = after[t] = reads[t].copy()
                    for k2, _ in rule.calls[t]:
                        row |= _first(rules, same[k2], firsts)
                m = same[k]
                direct[m] |= row
                if rule.dfa.accepting[t]:
                    up[m].add(same[c])
    out = direct
    changed = True
    while changed:
        changed = False
        for m in range(n):
            for u in up[m]:
                if (out[u] & ~out[m]).any():
                    out[m] |= out[u]
                    changed = True
    return [out[same[r]] for r in range(n)]


def _reads(rules: RuleSet, r: int, q: int) -> np.ndarray:
    dfa = rules.rule(r).dfa
    return dfa.table[q, dfa.byte_classes] >= 0


def _first(rules: RuleSet, k: int, memo: dict[int, np.ndarray]) -> np.ndarray:
    """The bytes rule class k reads first: its start's, its callees' there; every byte where
    it is not built or may return before reading (what follows it is not asked here)."""
    hit = memo.get(k)
    if hit is None:
        memo[k] = _ALL  # (met again before it is known: unknown; no left recursion gets here)
        if not rules.built(k) or rules.rule(k).dfa.accepting[0]:
            hit = _ALL
        else:
            hit = _reads(rules, k, 0).copy()
            for k2, _ in rules.rule(k).calls[0]:
                hit |= _first(rules, rules.same[k2], memo)
        memo[k] = hit
    return hit
