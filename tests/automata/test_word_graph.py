"""word_graph.py builds the very DFA arrays the general construction gives for Graphs of words,
and leaves every other shape to it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import ir
from constrain.automata.dfa import check_subsets, determinize
from constrain.automata.nfa import build_nfa
from constrain.automata.rule_facts import callees
from constrain.automata.word_graph import word_graph_dfa, word_graph_fits
from constrain.errors import EmptyLanguageError, LimitExceededError
from constrain.grammar.json_schema.lexical import string_literal
from constrain.limits import Limits

LIMITS = Limits()
WORDS = ["", ",", '"a":', '"b":', '"ab":', ',"a":', "é", "}"]


def general(node: ir.Node, calls: dict[str, int]):
    return determinize(build_nfa(node, LIMITS.max_nfa_states, calls), LIMITS, n_calls=len(calls))


def same_arrays(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("byte_classes", "call_classes", "table", "accepting"))


@st.composite
def edge_nodes(draw):
    """A word: literal text with calls between its pieces (members `,"a":` value, skips, calls
    alone), sometimes nested the way object members are."""
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            parts.append(ir.literal(draw(st.sampled_from(WORDS))))
        else:
            parts.append(ir.call(draw(st.sampled_from(["v0", "v1", "v2"]))))
    if draw(st.booleans()) and len(parts) >= 2:
        parts = [ir.Concat(tuple(parts[:2])), *parts[2:]]
    return parts[0] if len(parts) == 1 else ir.Concat(tuple(parts))


@st.composite
def word_graphs(draw):
    n = draw(st.integers(1, 6))
    state = st.integers(0, n - 1)
    edges = tuple(draw(st.lists(st.tuples(state, state, edge_nodes()), min_size=0, max_size=12)))
    finals = tuple(sorted(draw(st.sets(state, min_size=1, max_size=n))))
    graph = ir.Graph(n, draw(state), finals, edges)
    if draw(st.booleans()):
        return graph
    return ir.Concat((ir.literal(draw(st.sampled_from(["{", "[", ""]))), graph, ir.literal(draw(st.sampled_from(["}", ""])))))


@st.composite
def rules(draw):
    """A word graph, or an Alt of them and of words (anyOf over objects)."""
    if draw(st.booleans()):
        return draw(word_graphs())
    branches = draw(st.lists(st.one_of(word_graphs(), edge_nodes()), min_size=2, max_size=3))
    return ir.Alt(tuple(branches))


@settings(max_examples=400, deadline=None)
@given(rules())
def test_same_dfa_as_the_general_construction(node):
    calls = {name: k for k, name in enumerate(callees(node))}
    try:
        expected = general(node, calls)
    except EmptyLanguageError:
        with pytest.raises(EmptyLanguageError):
            word_graph_dfa(node, calls, LIMITS)
        return
    got = word_graph_dfa(node, calls, LIMITS)  # (every part is a word: an Alt of words too)
    assert got is not None and got.minimal
    assert same_arrays(got, expected)


def test_an_object_rule():
    """`{` members in order, the second optional, `}`: members are `"key":` and a call."""
    a = ir.Concat((ir.literal('"a":'), ir.call("s1")))
    b = ir.Concat((ir.literal(","), ir.literal('"b":'), ir.call("s2")))
    graph = ir.Graph(3, 0, (1, 2), ((0, 1, a), (1, 2, b), (1, 2, ir.EMPTY)))
    node = ir.Concat((ir.literal("{"), graph, ir.literal("}")))
    calls = {"s1": 0, "s2": 1}
    dfa = word_graph_dfa(node, calls, LIMITS)
    assert same_arrays(dfa, general(node, calls))
    call = {0: 256, 1: 257}

    def walk(symbols):
        q = 0
        for x in symbols:
            col = dfa.byte_classes[x] if x < 256 else dfa.call_classes[x - 256]
            q = dfa.table[q, col]
            if q < 0:
                return False
        return bool(dfa.accepting[q])

    assert walk([*b'{"a":', call[0], *b"}"])
    assert walk([*b'{"a":', call[0], *b',"b":', call[1], *b"}"])
    assert not walk([*b"{}"])
    assert not walk([*b'{"a":', call[0], *b',"b":}'])


@pytest.mark.parametrize("node", [
    ir.Concat((ir.literal("{"), ir.Graph(1, 0, (0,), ((0, 0, ir.repeat(ir.literal(" "), 0, 2)),)), ir.literal("}"))),
    ir.Concat((ir.repeat(ir.literal(" "), 0, 2), ir.Graph(1, 0, (0,), ()))),
    ir.Graph(2, 0, (1,), ((0, 1, ir.alt(ir.literal("a"), ir.literal("b"))),)),
    ir.Graph(2, 0, (1,), ((0, 1, ir.chars([(97, 99)])),)),  # a class, not one byte
    ir.Concat((ir.literal("x"), ir.call("v"))),  # no Graph
    ir.Concat((ir.Graph(1, 0, (0,), ()), ir.Graph(1, 0, (0,), ()))),  # two
    ir.Alt((ir.Graph(1, 0, (0,), ()), ir.repeat(ir.literal("x"), 0, 2))),  # a branch not a word
])
def test_other_shapes_take_the_general_path(node):
    assert word_graph_dfa(node, {name: k for k, name in enumerate(callees(node))}, LIMITS) is None


def test_the_state_limit_holds():
    """(a|b)* a (a|b){6}: the DFA must remember the last 7 letters (128 states)."""
    k = 6
    a, b = ir.literal("a"), ir.literal("b")
    edges = [(0, 0, a), (0, 0, b), (0, 1, a)] + [(i, i + 1, x) for i in range(1, k + 1) for x in (a, b)]
    graph = ir.Graph(k + 2, 0, (k + 1,), tuple(edges))
    with pytest.raises(LimitExceededError):
        word_graph_dfa(graph, {}, Limits(max_dfa_states=100))
    with pytest.raises(LimitExceededError):
        word_graph_fits(graph, {}, Limits(max_dfa_states=100))
    assert word_graph_fits(graph, {}, Limits(max_dfa_states=128))
    with pytest.raises(LimitExceededError):
        word_graph_fits(graph, {}, Limits(max_dfa_states=127))
    with pytest.raises(LimitExceededError):  # the subset construction counts alike
        check_subsets(build_nfa(graph, LIMITS.max_nfa_states, {}), Limits(max_dfa_states=127))
    check_subsets(build_nfa(graph, LIMITS.max_nfa_states, {}), Limits(max_dfa_states=128))
    dfa = word_graph_dfa(graph, {}, LIMITS)
    assert dfa.n_states == 2 ** (k + 1) and same_arrays(dfa, general(graph, {}))


@pytest.mark.parametrize("values", [["x", "y"], ["ab", "abc", "b", "\u00e9t\u00e9"], [f"v{i:03d}" for i in range(300)]])
def test_an_enum_of_words_is_the_same_dfa(values):
    """An Alt of fixed words alone (a string enum) takes the word graph, with the arrays of the
    general construction."""
    node = ir.Alt(tuple(string_literal(v, canonical=True) for v in values) + (ir.literal("null"),))
    got = word_graph_dfa(node, {}, LIMITS)
    assert got is not None
    assert same_arrays(got, general(node, {}))
