"""llguidance's `&` and `~` in terminals: DFAs by products, against Python's re on every short text."""

from __future__ import annotations

import itertools
import re

import pytest
from lark.lexer import PatternRE, PatternStr

from constrain.automata import regex_to_dfa
from constrain.grammar.lark.regex_algebra import Algebra, dfa_of
from constrain.limits import Limits

A, B, C = PatternRE("[ab]*"), PatternRE("(?s:.*)ab(?s:.*)"), PatternStr("ba")
TEXTS = ["".join(t) for n in range(6) for t in itertools.product("abc", repeat=n)]


def _re(p) -> re.Pattern:
    return re.compile(p.to_regexp())


def _x(s: str) -> bool:  # ([ab]* and not a*)
    return bool(re.fullmatch("[ab]*", s)) and not re.fullmatch("a*", s)


@pytest.mark.parametrize(
    "tree, member",
    [
        (Algebra("and", (A, Algebra("not", (B,)))), lambda s: bool(_re(A).fullmatch(s)) and not _re(B).fullmatch(s)),
        (Algebra("not", (C,)), lambda s: s != "ba"),
        (Algebra("seq", (Algebra("not", (A,)), C)), lambda s: s.endswith("ba") and not _re(A).fullmatch(s[:-2])),
        (Algebra("alt", (Algebra("and", (A, B)), C)), lambda s: bool(_re(A).fullmatch(s) and _re(B).fullmatch(s)) or s == "ba"),
        (Algebra("rep", (Algebra("and", (A, Algebra("not", (PatternRE("a*"),)))),), 1, 2),
         lambda s: _x(s) or any(_x(s[:k]) and _x(s[k:]) for k in range(1, len(s)))),
    ],
)
def test_products_match_what_re_says_of_each_part(tree, member):
    dfa = dfa_of(tree, lambda regex: regex_to_dfa(regex), Limits())
    wrong = [s for s in TEXTS if dfa.accepts(s.encode()) != bool(member(s))]
    assert not wrong, wrong[:10]


def test_not_takes_every_byte_string_the_part_does_not_match():
    dfa = dfa_of(Algebra("not", (PatternStr("a"),)), lambda regex: regex_to_dfa(regex), Limits())
    assert dfa.accepts(b"") and dfa.accepts(b"\xff\xfe") and dfa.accepts(b"aa") and not dfa.accepts(b"a")
