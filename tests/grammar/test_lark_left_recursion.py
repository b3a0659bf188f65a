"""Left recursion rewritten as iteration: the language stays (Lark's parser is the oracle)."""

from __future__ import annotations

import lark
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain import UnsupportedGrammarError
from constrain.automata import ir
from constrain.automata.rules import compile_rules
from constrain.automata.stack_semantics import StackSemantics
from constrain.grammar.lark.left_recursion import Star, to_ir, without_left_recursion

# direct, indirect (a -> b -> a) and through a unit cycle (c -> d -> c)
GRAMMAR = {
    "start": [("a",)],
    "a": [("b", "x"), ("y",)],
    "b": [("a", "z"), ("c",)],
    "c": [("d",), ("c", "w"), ("v",)],
    "d": [("c",), ("u",)],
}
LARK = """
start: a
a: b "x" | "y"
b: a "z" | c
c: d | c "w" | "v"
d: c | "u"
"""


def _language(rules):
    terminal = str.isupper

    def lower(symbol: str) -> ir.Node:
        return ir.literal(symbol.lower()) if terminal(symbol) else ir.RuleRef(symbol)

    upper = {name: [tuple(s.upper() if len(s) == 1 and s in "xyzwvu" else s for s in e) for e in exps] for name, exps in rules.items()}
    fixed = without_left_recursion(upper, terminal)
    return StackSemantics(compile_rules({n: to_ir(e, lower) for n, e in fixed.items()}, "start"))


SEM = _language(GRAMMAR)
PARSER = lark.Lark(LARK, parser="earley")


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="xyzwvu", max_size=8))
def test_the_language_is_lark_s(text):
    state = SEM.advance(SEM.initial(), text.encode())
    ours = state is not None and SEM.is_complete(state)
    try:
        PARSER.parse(text)
        theirs = True
    except lark.exceptions.LarkError:
        theirs = False
    assert ours == theirs


def test_direct_recursion_becomes_a_star():
    fixed = without_left_recursion({"e": [("e", "+", "t"), ("t",)], "t": [("n",)]}, lambda s: s in "+n")
    assert fixed["e"] == [("t", Star((("+", "t"),)))]
    assert fixed["t"] == [("n",)]


def test_recursion_after_an_empty_rule_is_refused():
    with pytest.raises(UnsupportedGrammarError, match="can be empty"):
        without_left_recursion({"a": [("o", "a", "x"), ("y",)], "o": [(), ("p",)]}, lambda s: s in "xyp")
