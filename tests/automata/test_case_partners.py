"""automata/case_partners.py: what `(?i)` + one character matches, as Python's `re` does (the
oracle), over every cased code point of the running Python's Unicode tables."""

from __future__ import annotations

import random
import re

import pytest

from constrain.automata.assertions import regex_automaton
from constrain.automata.case_partners import IRREGULAR, _lower, partners
from constrain.automata.dfa import DFA
from constrain.limits import Limits


@pytest.fixture(scope="module")
def inverse() -> dict[int, list[int]]:
    """Per lower-case code point, the others whose simple lower case it is (every code point)."""
    out: dict[int, list[int]] = {}
    for cp in range(0x110000):
        low = _lower(cp)
        if low != cp:
            out.setdefault(low, []).append(cp)
    return out


def test_the_irregular_table_is_all_that_upper_and_title_case_miss(inverse):
    missed = {}
    for x, others in inverse.items():
        forms = {chr(x).upper(), chr(x).title()}
        extra = tuple(d for d in others if chr(d) not in forms)
        if extra:
            missed[x] = extra
    assert missed == IRREGULAR


def test_partners_are_what_re_matches(inverse):
    cased = sorted({*inverse, *(d for ds in inverse.values() for d in ds)})
    rng = random.Random(5)
    for c in cased:
        pattern = re.compile("(?i)" + re.escape(chr(c)))
        found = partners(c)
        assert all(pattern.fullmatch(chr(d)) for d in found), hex(c)
        others = (set(rng.sample(cased, 60)) | {d for x in found for d in inverse.get(_lower(x), ())}) - set(found)
        assert not any(pattern.fullmatch(chr(d)) for d in others), hex(c)


@pytest.mark.parametrize("regex, text, matches", [
    ("[^i]", "ı", False), ("[^i]", "İ", False), ("[^i]", "j", True),
    ("k", "\u212a", True), ("[a-z]", "ı", True), ("s", "ſ", True), ("[^s]", "ſ", False),
    ("σ", "ς", True), ("ß", "ẞ", True), ("select", "SELECT", True), ("select", "ſelect", True),
])
def test_regexes_under_the_i_flag_match_as_re_does(regex, text, matches):
    assert (re.fullmatch("(?i)" + regex, text) is not None) is matches
    found = regex_automaton("(?u)(?i:" + regex + ")", Limits())
    dfa = found if isinstance(found, DFA) else _compiled(found)
    assert dfa.accepts(text.encode()) is matches


def _compiled(node):
    from constrain.automata import compile_ir

    return compile_ir(node, Limits())
