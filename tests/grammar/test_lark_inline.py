"""Rules inlined into their callers: only recursion's targets, greedy terminals and large rules
used twice keep frames of their own; the language stays (Lark's parser is the oracle)."""

from __future__ import annotations

import lark
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain import Compiler
from constrain.automata import ir
from constrain.automata.rule_facts import callees
from constrain.grammar.lark import inline
from constrain.grammar.lark.inline import inlined

CHAIN = """
start: sum
sum: product ("+" product)*
product: atom ("*" atom)*
atom: "(" sum ")" | "x" | "y"
"""


def test_a_precedence_chain_keeps_only_the_recursion_target(llama3):
    grammar = Compiler(llama3).compile_lark(CHAIN)
    assert set(grammar.automaton.rules.names) == {"$start", "sum"}


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="xy+*()", max_size=10))
def test_the_language_is_lark_s(text, llama3_chain):
    try:
        lark.Lark(CHAIN, parser="earley").parse(text)
        theirs = True
    except lark.exceptions.LarkError:
        theirs = False
    assert llama3_chain.accepts(text.encode()) == theirs


def test_large_rules_used_twice_and_kept_names_stay_calls(monkeypatch):
    monkeypatch.setattr(inline, "INLINE_NFA_STATES", 3)
    big = ir.literal("abcdef")
    rules = {"top": ir.concat(ir.RuleRef("big"), ir.RuleRef("big"), ir.RuleRef("T"), ir.RuleRef("once")),
             "big": big, "T": ir.literal("t"), "once": ir.literal("onlyonce")}
    out = inlined(rules, "top", keep=("T",))
    assert set(out) == {"top", "big", "T"}
    assert callees(out["top"]) == ("big", "T")  # "once" is inlined



@pytest.fixture(scope="module")
def llama3_chain(llama3):
    return Compiler(llama3).compile_lark(CHAIN)
