"""`pattern` beyond the regex parser: lookaheads after `^` and anchored top-level alternatives,
checked against Python's `re` (same semantics for these constructs) on random strings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.grammar.json_schema.patterns import pattern_dfa

PATTERNS = [
    r"^(?!io\.)[a-z.]+$",
    r"^(?=.{2,4}$)[a-c]*",
    r"^a$|^bc",
    r"^(?!pattern$).*$",
    r"^(?!ab|cd)[a-d]{0,3}$",
    r"^(?=a)(?!ab)[a-c]+$",
    r"b|^a",
]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="abcdio.pattern", max_size=8))
def test_pattern_matches_like_re_search(pattern, text):
    dfa = pattern_dfa(pattern, "#")
    assert dfa.accepts(text.encode("utf-8")) == bool(re.search(pattern, text)), (pattern, text)
