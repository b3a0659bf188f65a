"""Every (rule class, state) of a RuleSet's built rules: the loop the index tests share."""

from __future__ import annotations


def built_states(rules):
    """(rule class, state) for every built rule class's every state."""
    for r in range(rules.n_rules):
        if rules.same[r] == r and rules.built(r):
            for q in range(rules.rule(r).dfa.n_states):
                yield r, q
