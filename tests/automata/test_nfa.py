"""The Thompson NFA builder: nfa_states counts the states build_nfa makes (limits and the
near-start budget are judged by it), and the shortcuts for one-byte sets keep the language."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import compile_ir, regex_language
from constrain.automata import nfa as nfa_module
from constrain.automata.nfa import build_nfa, nfa_states
from constrain.automata.rules import _callees, compile_rules
from constrain.grammar.lark.translate import lark_rules
from constrain.grammars import NAMES, load
from constrain.limits import Limits


@pytest.mark.parametrize("name", NAMES)
def test_nfa_states_counts_what_build_nfa_makes(name):
    lowered = lark_rules(load(name), "start")
    rules = compile_rules(lowered.rules, lowered.start, Limits(), lowered.greedy)
    for r in range(rules.n_rules):
        node = rules.nodes[r]
        calls = {callee: k for k, callee in enumerate(_callees(node))}
        assert build_nfa(node, 10**7, calls).n_states == nfa_states(node), rules.names[r]


@pytest.mark.parametrize("name", NAMES)
def test_repeated_subtrees_are_stamped_into_the_same_nfa(name, monkeypatch):
    """A subtree met again in one build is copied from its first build: the same states, the
    same edges (in another order) as walking the tree again."""
    lowered = lark_rules(load(name), "start")
    rules = compile_rules(lowered.rules, lowered.start, Limits(), lowered.greedy)

    def edges(nfa):
        return (nfa.n_states, nfa.start, nfa.final, sorted(map(tuple, nfa.edge_array().tolist())),
                sorted(map(tuple, nfa.eps_array().tolist())))

    stamped, blocks = [], 0
    for r in range(rules.n_rules):
        node = rules.nodes[r]
        calls = {callee: k for k, callee in enumerate(_callees(node))}
        built = build_nfa(node, 10**7, calls)
        stamped.append(edges(built))
        blocks += len(built.edge_blocks)
    monkeypatch.setattr(nfa_module, "TEMPLATE_STATES", 10**9)
    for r in range(rules.n_rules):
        node = rules.nodes[r]
        calls = {callee: k for k, callee in enumerate(_callees(node))}
        built = build_nfa(node, 10**7, calls)
        assert edges(built) == stamped[r], rules.names[r]
        blocks -= len(built.edge_blocks)
    assert blocks > 0 or name not in ("sql", "python_expr")  # (those two repeat large parts)


PATTERNS = [
    r"[ \t\n]*x", r"(?:[aA][bB])+[ \t]*", r"(?:[ab]*|c)*d", r"[a-cé]*[x-z]{2,}", r"é*a",
    r"(?:[ \t]+|#[a-z]*\n)*x", r"(?:a+|b|é)+", r"(?:a|bc|[xy]+)*z", r"(?:x*)*",
    # x+ without a one-byte part: one copy of x with a way back (not x x*)
    r"(?:ab|c)+d", r"(?:a(?:bc)+)+", r"(?:x?y)+z?", r"(?:a*b?)+c", r"(?:ab){2,}", r"(?:é|xy)+", r"(?:(?:ab)+|c)*",
]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="abABcdxyz \t\né", max_size=9))
def test_loops_and_one_byte_runs_match_like_re(pattern, text):
    dfa = compile_ir(regex_language(pattern))
    assert dfa.accepts(text.encode()) == (re.fullmatch(pattern, text) is not None)


def test_plus_holds_its_item_once():
    item = regex_language(r"(?:abc|de)")
    plus = regex_language(r"(?:abc|de)+")
    assert nfa_states(plus) < 2 * nfa_states(item)
    assert build_nfa(plus, 10**6).n_states == nfa_states(plus)
