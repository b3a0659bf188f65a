"""glue.py builds the very DFA arrays the subset construction gives, for every shape it takes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import compile_ir, ir, parse_regex
from constrain.automata.dfa import determinize
from constrain.automata.glue import glued_dfa
from constrain.automata.nfa import build_nfa
from constrain.automata.rule_facts import callees
from constrain.limits import Limits

LIMITS = Limits()
HEADS = [
    r"[a-z]+", r"[a-z]*", r"(ab|a)*b", r"[^\"\\]{2,5}", r"x|xy|xyz", r"\d{1,3}(\.\d{1,3}){3}",
    r"(foo|bar)baz?", r"é+|中", r"[a-c]{0,3}", r'"([^"\\]|\\.)*"',
]
SMALL = [r"", r'"', r":", r"[ \t]{0,2}", r"a?", r"ab", r",?", r"\d", r'"a"|"b"']


def general(node: ir.Node, calls: dict[str, int]):
    return determinize(build_nfa(node, LIMITS.max_nfa_states, calls), LIMITS, n_calls=len(calls))


def same_arrays(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("byte_classes", "call_classes", "table", "accepting"))


def piece(pattern: str) -> ir.Node:
    return parse_regex(pattern) if pattern else ir.EMPTY


def key_trie(named: list[str]) -> ir.Embedded:
    """"Every JSON string but these keys" (the heads of object members for other keys)."""
    from constrain.grammar.json_schema.containers import _any_string_dfa
    from constrain.grammar.json_schema.spelled_keys import other_keys_dfa

    return ir.Embedded(other_keys_dfa(_any_string_dfa(), tuple(sorted(set(named)))))


@st.composite
def shapes(draw):
    if draw(st.booleans()):
        head = ir.Embedded(compile_ir(parse_regex(draw(st.sampled_from(HEADS)))))
    else:
        head = key_trie(draw(st.lists(st.text("abé:", min_size=1, max_size=3), min_size=1, max_size=4)))
    before = [piece(p) for p in draw(st.lists(st.sampled_from(SMALL), max_size=2))]
    after = [piece(p) for p in draw(st.lists(st.sampled_from(SMALL), max_size=2))]
    for name in draw(st.lists(st.sampled_from(["r0", "r1"]), max_size=2)):
        after.append(ir.RuleRef(name))
        if draw(st.booleans()):
            after.append(piece(draw(st.sampled_from(SMALL))))
    return ir.Concat((*before, head, *after))


@settings(max_examples=300, deadline=None)
@given(shapes())
def test_glued_equals_the_subset_construction(node):
    calls = {name: k for k, name in enumerate(callees(node))}
    glued = glued_dfa(node, calls, LIMITS)
    if glued is not None:
        assert same_arrays(glued, general(node, calls))


def test_common_shapes_are_glued():
    """Strings with a pattern, members of key languages and bare embedded DFAs skip the
    subset construction (a `"` + body + `"` rule over a 42,000-state body took 115 ms)."""
    body = ir.Embedded(compile_ir(parse_regex(r"[a-z]{2,8}(-[a-z0-9]+)*")))
    keys = ir.Embedded(compile_ir(parse_regex(r'"([^"\\]|\\.)*"')))
    quote = ir.literal('"')
    others = key_trie(["name", "game", "id", "kind"])
    for node, calls in (
        (ir.Concat((quote, body, quote)), {}),
        (ir.Concat((keys, ir.literal(":"), ir.RuleRef("v"))), {"v": 0}),
        (ir.Concat((others, ir.literal(":"), ir.RuleRef("v"))), {"v": 0}),
        (body, {}),
    ):
        glued = glued_dfa(node, calls, LIMITS)
        assert glued is not None
        assert same_arrays(glued, general(node, calls))


def test_overlapping_parts_are_left_to_the_subset_construction():
    """`[a-z]+` then `a`: at an accepting state both parts read `a` (not deterministic)."""
    node = ir.Concat((ir.Embedded(compile_ir(parse_regex("[a-z]+"))), ir.literal("a")))
    assert glued_dfa(node, {}, LIMITS) is None
