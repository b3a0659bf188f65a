"""Factored expansions keep the language: the IR accepts exactly the listed sequences, and Lark's
expansion of optional parts no longer reaches the NFA builder as copies of the rule."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from constrain import Compiler, grammars
from constrain import Limits
from constrain.automata import compile_ir, ir
from constrain.automata.nfa import nfa_states
from constrain.grammar.lark.factor import factored
from constrain.grammar.lark.left_recursion import Star, to_ir

SYMBOLS = "abc"
sequences = st.lists(st.tuples(*[]) | st.lists(st.sampled_from(SYMBOLS), max_size=4).map(tuple), min_size=1, max_size=12)


def _lowered(item) -> ir.Node:
    calls.append(item)
    return ir.literal(item)


calls: list = []


@settings(max_examples=300, deadline=None)
@given(sequences)
def test_factored_ir_accepts_exactly_the_expansions(expansions):
    calls.clear()
    dfa = compile_ir(factored(expansions, _lowered))
    assert len(calls) == len(set(calls))  # (each distinct item lowered once)
    wanted = {"".join(e) for e in expansions}
    for n in range(6):
        for word in itertools.product(SYMBOLS, repeat=n):
            text = "".join(word)
            assert dfa.accepts(text.encode()) == (text in wanted), text


def test_shared_suffixes_become_one_graph_and_prefixes_a_tree():
    optional = [("s", *kept) for r in range(4) for kept in itertools.combinations("fwg", r)]  # s f? w? g?
    node = factored(optional, ir.literal)
    assert isinstance(node, ir.Graph)
    assert node.n_states == 5 and len(node.edges) == 7  # (a chain with skips, not 8 copies)
    tree = factored([("x", "a"), ("x", "b"), ("y",)], ir.literal)
    assert not isinstance(tree, ir.Graph)
    assert compile_ir(tree).accepts(b"xb") and not compile_ir(tree).accepts(b"x")


def test_stars_inside_expansions_are_factored_too():
    star = Star((("a",), ("a", "b")))
    node = to_ir([("x", star), ("x", star, "c")], ir.literal)
    dfa = compile_ir(node)
    for text, ok in [("x", True), ("xaab", True), ("xabc", True), ("xc", True), ("xb", False), ("xcc", False)]:
        assert dfa.accepts(text.encode()) == ok, text


def test_sql_rules_reach_the_nfa_builder_without_copies(llama3):
    grammar = Compiler(llama3).compile_lark(grammars.load("sql"))
    rules = grammar.automaton.rules
    sizes = {rules.names[r]: nfa_states(rules.nodes[r]) for r in range(rules.n_rules)}
    assert max(sizes.values()) < 2000, sizes  # (select_core: 13,130 NFA states as Lark's 24 expansions)
    assert sum(sizes.values()) < 6000, sizes


def test_long_rules_need_no_deep_recursion():
    long = tuple(f"s{k}" for k in range(5000))
    node = factored([long, long[:2500] + ("x",)], lambda item: ir.literal("x" if item == "x" else "a"))
    dfa = compile_ir(node, Limits(max_nfa_states=100_000))
    assert dfa.accepts(b"a" * 5000) and dfa.accepts(b"a" * 2500 + b"x") and not dfa.accepts(b"a" * 4999)
