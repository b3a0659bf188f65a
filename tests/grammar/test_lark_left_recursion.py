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
from constrain.grammar.lark.left_recursion import Plus, Star, _plus_rule, _with_plus, to_ir, without_left_recursion
from constrain.grammar.lark.translate import lark_rules

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
    fixed, _ = without_left_recursion(upper, terminal)
    return StackSemantics(compile_rules({n: to_ir(e, lower) for n, e in fixed.items()}, "start"))


SEM = _language(GRAMMAR)
PARSER = lark.Lark(LARK, parser="earley")


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="xyzwvu", max_size=8))
def test_the_language_is_lark_s(text):
    _agree(SEM, PARSER, text)


def _agree(sem: StackSemantics, parser: lark.Lark, text: str) -> None:
    """Our automaton accepts `text` exactly when Lark's parser does."""
    state = sem.advance(sem.initial(), text.encode())
    ours = state is not None and sem.is_complete(state)
    try:
        parser.parse(text)
        theirs = True
    except lark.exceptions.LarkError:
        theirs = False
    assert ours == theirs, text


def test_direct_recursion_becomes_a_star():
    fixed, emptied = without_left_recursion({"e": [("e", "+", "t"), ("t",)], "t": [("n",)]}, lambda s: s in "+n")
    assert not emptied
    assert fixed["e"] == [("t", Star((("+", "t"),)))]
    assert fixed["t"] == [("n",)]


HIDDEN = """
start: a
a: o a "x" | "y" | c
o: "o" |
c: a "z" o
"""


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="oxyz", max_size=8))
def test_recursion_after_rules_that_can_be_empty_keeps_lark_s_language(text, llama3_compiler):
    grammar = llama3_compiler.compile_lark(HIDDEN)
    sem = grammar.automaton.semantics
    state = sem.advance(sem.initial(), text.encode())
    ours = state is not None and sem.is_complete(state)
    try:
        lark.Lark(HIDDEN, parser="earley").parse(text)
        theirs = True
    except lark.exceptions.LarkError:
        theirs = False
    assert ours == theirs


def test_too_many_empty_able_rules_in_one_expansion_are_refused():
    rules = {"a": [tuple("o" for _ in range(9)) + ("a", "x"), ("y",)], "o": [(), ("p",)]}
    with pytest.raises(UnsupportedGrammarError, match="can be empty"):
        without_left_recursion(rules, lambda s: s in "xyp")


@pytest.fixture(scope="module")
def llama3_compiler(llama3):
    from constrain import Compiler

    return Compiler(llama3)


def test_a_star_after_a_copy_of_its_expansion_is_a_plus():
    star = Star((("sep", "x"),))
    assert _with_plus(("a", "sep", "x", star, "b")) == ("a", Plus(star.expansions), "b")
    assert _with_plus(("a", "x", star)) == ("a", "x", star)  # (no copy before it: as it was)
    two = Star((("x", "y"), ("x",)))
    assert _plus_rule([("x", "y", two), ("x", two)]) == [(Plus(two.expansions),)]
    assert _plus_rule([("x", "y", two), ("z", two)]) == []

    def lower(symbol: str) -> ir.Node:
        return ir.literal(symbol)

    node = to_ir([("t", Star((("t",),)))], lower)
    assert node == ir.Repeat(ir.literal("t"), 1, None)


REPEATS = """
start: item+ ("," pair)* tail*
item: "a" "b"?
pair: "x" | "y" "z"
tail: "t" | "u" "v"?
"""
REPEATS_SEM = None
REPEATS_PARSER = lark.Lark(REPEATS, parser="earley")


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="abxyz,tuv", max_size=10))
def test_repeats_written_as_plus_keep_lark_s_language(text):
    global REPEATS_SEM
    if REPEATS_SEM is None:
        lowered = lark_rules(REPEATS, "start")
        REPEATS_SEM = StackSemantics(compile_rules(lowered.rules, lowered.start, greedy=lowered.greedy))
    _agree(REPEATS_SEM, REPEATS_PARSER, text)
