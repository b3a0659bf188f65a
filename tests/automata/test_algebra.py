"""Intersection and difference agree with membership in both operands; Embedded IR composes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain import GrammarError
from constrain.automata import compile_ir, ir, regex_to_dfa
from constrain.automata.algebra import difference, intersect, union

PAIRS = [
    (r"[a-z]{0,8}", r"(ab|c)*"),
    (r'"([^"\\]|\\.)*"', r'"(name|age|id)"'),
    (r"[0-9]+", r"[0-9]*[05]"),
    (r".{2,6}", r"[a-zé]*"),
    (r"(x|y)*x(x|y){3}", r"(x|y)*y"),
]
text = st.text(st.sampled_from(list('abcxy059"\\né name')), max_size=10)


def _in(dfa, s: str) -> bool:
    q = dfa.walk(0, s.encode())
    return q >= 0 and dfa.is_accepting(q)


@pytest.mark.parametrize("pa,pb", PAIRS)
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_product_membership(pa, pb, data):
    a, b = regex_to_dfa(pa), regex_to_dfa(pb)
    ra, rb = re.compile(pa, re.ASCII), re.compile(pb, re.ASCII)
    s = data.draw(st.one_of(text, st.from_regex(ra, fullmatch=True), st.from_regex(rb, fullmatch=True)))
    in_a, in_b = bool(ra.fullmatch(s)), bool(rb.fullmatch(s))
    try:
        assert _in(intersect(a, b), s) == (in_a and in_b)
    except GrammarError:  # empty intersection
        assert not (in_a and in_b)
    try:
        assert _in(difference(a, b), s) == (in_a and not in_b)
    except GrammarError:  # empty difference
        assert not (in_a and not in_b)
    assert _in(union(a, b), s) == (in_a or in_b)


def test_keys_other_than_the_named_ones():
    any_string = regex_to_dfa(r'"[a-z]{1,6}"')
    named = regex_to_dfa(r'"(id|name)"')
    other = difference(any_string, named)
    assert not _in(other, '"id"') and not _in(other, '"name"')
    assert _in(other, '"idx"') and _in(other, '"nam"') and _in(other, '"i"')


def test_empty_results_are_errors():
    with pytest.raises(GrammarError):
        intersect(regex_to_dfa("a+"), regex_to_dfa("b+"))
    with pytest.raises(GrammarError):
        difference(regex_to_dfa("a"), regex_to_dfa("a|b"))


@settings(max_examples=100, deadline=None)
@given(st.text(st.sampled_from("ab-"), max_size=12))
def test_embedded_dfa_inside_larger_expressions(s):
    """A DFA whose start state has loops, embedded under repetition and optional parts."""
    inner = regex_to_dfa("(ab)*")
    node = ir.concat(ir.repeat(ir.concat(ir.Embedded(inner), ir.literal("-")), 0, 3), ir.repeat(ir.Embedded(inner), 0, 1))
    dfa = compile_ir(node)
    expected = re.fullmatch(r"((ab)*-){0,3}((ab)*)?", s) is not None
    assert _in(dfa, s) == expected


@pytest.mark.parametrize("lo,hi", [(0, 0), (0, 3), (2, 5), (3, None), (0, None), (1, 300)])
@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from(["a", "é", "中", "😀", '"', "\\"]), max_size=8))
def test_bounded_repeat_counts_characters(lo, hi, s):
    from constrain.automata.algebra import bounded_repeat

    unit = regex_to_dfa(r'[^"\\]|\\\\')  # one character: prefix-free, one final state
    dfa = bounded_repeat(unit, lo, hi)
    chars = s.replace("\\", "\\\\")
    n = len(s)
    expected = '"' not in s and lo <= n and (hi is None or n <= hi)
    assert _in(dfa, chars) == expected


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PAIRS + [(r"[a-c]*", r"a*b?"), (r"(ab|ba)*", r"[ab]{0,4}")]), st.sampled_from(["and", "minus", "or"]))
def test_product_matches_a_naive_product(forms, pair, op_name):
    """The numba product equals a product over single bytes built with dicts of pairs (-1: a
    side that died, kept where the operation still needs the pair)."""
    minimal_form, dfa_form = forms
    a, b = regex_to_dfa(pair[0]), regex_to_dfa(pair[1])
    ta, tb = a.table[:, a.byte_classes].tolist(), b.table[:, b.byte_classes].tolist()
    keep_a_dead, keep_b_dead = op_name == "or", op_name != "and"
    index = {(0, 0): 0}
    order = [(0, 0)]
    rows = []
    for qa, qb in order:
        row = []
        for byte in range(256):
            na, nb = ta[qa][byte] if qa >= 0 else -1, tb[qb][byte] if qb >= 0 else -1
            if (na < 0 and (nb < 0 or not keep_a_dead)) or (nb < 0 and not keep_b_dead):
                row.append(-1)
                continue
            row.append(index.setdefault((na, nb), len(order)))
            if row[-1] == len(order):
                order.append((na, nb))
        rows.append(row)
    in_a = [qa >= 0 and bool(a.accepting[qa]) for qa, _ in order]
    in_b = [qb >= 0 and bool(b.accepting[qb]) for _, qb in order]
    rule = {"and": lambda x, y: x and y, "minus": lambda x, y: x and not y, "or": lambda x, y: x or y}[op_name]
    acc = [rule(x, y) for x, y in zip(in_a, in_b)]
    expected = minimal_form(rows, acc)
    op = {"and": intersect, "minus": difference, "or": union}[op_name]
    try:
        assert dfa_form(op(a, b)) == expected
    except GrammarError:
        assert expected == ((), ())


def test_union_is_minimal_and_equals_the_regex_alternation():
    for pa, pb in PAIRS:
        u = union(regex_to_dfa(pa), regex_to_dfa(pb))
        alt = regex_to_dfa(f"(?:{pa})|(?:{pb})")
        assert u.n_states == alt.n_states  # (both minimal: equal languages, equal sizes)
        assert difference_is_empty(u, alt) and difference_is_empty(alt, u)


def difference_is_empty(a, b) -> bool:
    try:
        difference(a, b)
    except GrammarError:
        return True
    return False
