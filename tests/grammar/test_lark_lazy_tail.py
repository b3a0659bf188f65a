"""grammar/lark/lazy_tail.py: where a lazy terminal's greedy tail begins, and (through
lower_terminal) that the terminal then ends where Python's `re.match` ends it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark.lexer import PatternRE

from constrain.grammar.lark.lazy_tail import lazy_head_and_tail
from constrain.grammar.lark.terminals import _is_lazy, _widths, lower_terminal
from constrain.limits import Limits


def _split(regex: str):
    return lazy_head_and_tail(regex, _is_lazy, _widths)


@pytest.mark.parametrize("regex, head, tail", [
    (r'(?:"(\\\"|\\\\|[^"\n])*?")(?:i)?', r'(?:"(\\\"|\\\\|[^"\n])*?")', "(?:i)?"),  # lark.lark's STRING
    (r"\/(?!\/)(\\\/|\\\\|[^\/])*?\/[imslux]*", r"\/(?!\/)(\\\/|\\\\|[^\/])*?\/", "[imslux]*"),  # its REGEXP
    (r"a.*?bc*", "a.*?b", "c*"),
    (r"(?i:a.*?b[xy]*)", "(?i:a.*?b)", "(?i:[xy]*)"),  # (Lark's form of a flagged terminal)
    (r"a[^]b]*?\]\x41?", r"a[^]b]*?\]", r"\x41?"),
    (r"a.*?b[]c]*", "a.*?b", "[]c]*"),  # (a "]" first in a class is a member)
    (r'".*?"x+', '".*?"x', "x*"),  # (a greedy repeat: its fixed count, then its optional rest)
    (r"a.*?b[cd]{2,}", "a.*?b[cd]{2}", "[cd]*"),
    (r"a.*?b(?:cd){1,3}e?", "a.*?b(?:cd)", "(?:cd){0,2}e?"),
    (r"a.*?b(?P<x>c)+", None, None),  # (a named group is not written twice)
])
def test_a_lazy_regex_with_a_tail_that_may_be_empty_is_split_before_it(regex, head, tail):
    assert _split(regex) == (None if head is None else (head, tail))


@pytest.mark.parametrize("regex", [
    r'".*?(?<!\\)(\\\\)*?"',  # common.lark's ESCAPED_STRING: nothing after the closing quote
    r"/\*(.|\n)*?\*/",  # C_COMMENT
    r"a*b",  # not lazy
    r"a.*?b|c*",  # alternation at the top
    r"(a).*?b\1?",  # a backreference
    r"a.*?b(?<=b)c*",  # a lookbehind in the tail would look into the head
    r"a.*?b(?=c)c*",  # an assertion at the split
    r"a.*?bc*?",  # the last part is the lazy one
    r"(?i)a.*?bc*",  # flags for the whole regex (the tail would lose them)
    r"(?x:a .*? b c*)",  # verbose: spaces and comments are no parts
    r"x.*?c?\B",  # assertions anywhere in the tail, or looking both ways (found by a fuzz against Lark)
    r"x.*?(?:a|\B)", r" (?:\B)+?d*", r"a.*?(?:\b)x*", r"xa+?c?\b",
    r"a(?=bc).*?bc*",  # a lookahead that could see past the head's last byte
])
def test_what_has_no_such_tail_or_is_not_followed_is_left_whole(regex):
    assert _split(regex) is None


def _our_match(regex: str, text: str):
    """Where lower_terminal's terminal ends in `text`: a greedy terminal before the first byte
    it cannot read once it accepts, any other at its first accepting state."""
    t = lower_terminal("T", PatternRE(regex), Limits())
    dfa, data = t.dfa, text.encode()
    q = 0
    for i in range(len(data) + 1):
        if dfa.accepting[q] and (not t.greedy or i == len(data) or dfa.table[q, dfa.byte_classes[data[i]]] < 0):
            return data[:i].decode()
        if i == len(data):
            return None
        q = int(dfa.table[q, dfa.byte_classes[data[i]]])
        if q < 0:
            return None
    return None


HEADS = ["a.*?b", "a[^c]*?c", "x(?:ab)*?y"]
TAILS = ["c*", "(?:d)?", "[cd]*", "c?d?", "c+", "[cd]+d?", "c{2,}", "d{1,3}c*"]  # (not (?:cd)*: a greedy part read back past one byte, docs/lark.md)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(HEADS), st.sampled_from(TAILS), st.text(alphabet="abcdxy", max_size=10))
def test_the_terminal_ends_where_re_match_ends_it(head, tail, text):
    """Python's re as the oracle: a lazy head (its shortest match), then a tail that may match
    nothing (its longest), as `re.match` reads the whole regex."""
    regex = head + tail
    found = re.match(regex, text)
    assert _our_match(regex, text) == (found.group() if found else None)


@pytest.mark.parametrize("regex, text", [
    ("a.*?bc+", "axbccd"), ('".*?"x+', '"a"xxx;'), ("a.*?b[cd]{2,}", "abcdcx"), ("a.*?b(?:cd){1,3}e?", "abcdcdcde!"),
    (r'(?:"[^"]*?")(?:i)?', '"a"i0'), (r"/[^/]*?/[imslux]*", "/a/ix0"),
])
def test_greedy_repeats_after_the_lazy_part_take_what_re_takes(regex, text):
    assert _our_match(regex, text) == re.match(regex, text).group()


def test_a_lookahead_that_sees_only_the_head_is_kept_there():
    """lark.lark's REGEXP: `(?!\\/)` reads one byte, and the head still reads the closing `/`."""
    assert _split(r"\/(?!\/)(\\\/|[^\/])*?\/[imslux]*") is not None


def test_a_lazy_count_that_is_fixed_is_no_lazy_quantifier():
    """`b{1}?` is `b{1}` to re (the fuzz: `/a[ab]*b{1}?/` refused `abb`)."""
    assert not _is_lazy(r"a[ab]*b{1}?") and _is_lazy(r"a[ab]*b{1,2}?")
    assert _our_match(r"a[ab]*b{1}?", "abb") == "abb"


@pytest.mark.parametrize("regex, text", [
    (r"x.*?c?\B", "x"), (r"x.*?(?:a|\B)", "x"), (r"x.*?c?\B", "x "), (r"xa+?c?\b", "xa"), (r"a.*?(?:\b)x*", "a"),
])
def test_the_fuzz_s_assertion_cases_end_where_re_ends_them(regex, text):
    """(Left whole, these end as re ends them; ` (?:\\B)+?d*` before `d` still meets the documented
    difference: an assertion sees only the terminal's own text.)"""
    found = re.match(regex, text)
    assert _our_match(regex, text) == (found.group() if found else None)
