"""Regex front end: errors carry positions; unsupported constructs are named, never ignored."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain import RegexSyntaxError, UnsupportedRegexError
from constrain.automata import parse_regex, regex_to_dfa


@pytest.mark.parametrize(
    "pattern,position",
    [
        ("ab(c", 2),
        ("abc)", 3),
        ("[a-", 0),
        ("a**", 2),
        ("*a", 0),
        ("[z-a]", 3),
        (r"\xZZ", 0),
        ("a{3,1}", 1),
        (r"\q", 0),
    ],
)
def test_syntax_errors_name_the_position(pattern, position):
    with pytest.raises(RegexSyntaxError) as info:
        parse_regex(pattern)
    assert info.value.position == position
    assert f"position {position}" in str(info.value)


@pytest.mark.parametrize(
    "pattern,position,word",
    [
        ("a(?=b)", 1, "lookaround"),
        ("a(?<!b)c", 1, "lookaround"),
        (r"(a)\1", 3, "backreference"),
        (r"a\bc", 1, "boundary"),
        ("a^b", 1, "anchor"),
        ("a$b", 1, "anchor"),
        ("a++", 2, "possessive"),
        ("(?>a)", 0, "atomic"),
    ],
)
def test_unsupported_constructs_are_rejected_with_position(pattern, position, word):
    with pytest.raises(UnsupportedRegexError) as info:
        parse_regex(pattern)
    assert info.value.position == position
    assert word in str(info.value)


@pytest.mark.parametrize("pattern", ["^abc$", r"\Aabc\Z", "(^abc)$", "^(a|b)$"])
def test_edge_anchors_are_accepted_and_dropped(pattern):
    dfa = regex_to_dfa(pattern)
    for text in ("abc", "a", "b", "ab", ""):
        state = dfa.walk(0, text.encode())
        expected = re.fullmatch(pattern, text) is not None
        assert (state >= 0 and dfa.is_accepting(state)) == expected, text


def test_literal_brace_and_escapes():
    dfa = regex_to_dfa(r"a{x}\u00e9\x41\n\t\{")
    s = dfa.walk(0, "a{x}éA\n\t{".encode())
    assert s >= 0 and dfa.is_accepting(s)


def test_unicode_category_property():
    dfa = regex_to_dfa(r"\p{Lu}\p{Nd}+")
    for text, ok in [("A1", True), ("É٣", True), ("a1", False), ("AA", False)]:
        s = dfa.walk(0, text.encode())
        assert (s >= 0 and dfa.is_accepting(s)) == ok, text


_SHORTHANDS = "dwsDWS"
_DFAS: dict = {}


def _shorthand_dfa(flag: str, letter: str):
    key = (flag, letter)
    if key not in _DFAS:
        _DFAS[key] = regex_to_dfa(f"{flag}\\{letter}")
    return _DFAS[key]


@settings(max_examples=400, deadline=None)
@given(st.characters(exclude_categories=("Cs",)), st.sampled_from(_SHORTHANDS))
def test_unicode_flag_shorthands_are_python_s_own(ch, letter):
    """(?u): \\d \\w \\s read as Python's re reads them in a str pattern; default and (?a): ASCII."""
    data = ch.encode()
    assert _shorthand_dfa("(?u)", letter).accepts(data) == bool(re.fullmatch(f"\\{letter}", ch))
    ascii_verdict = bool(re.fullmatch(f"\\{letter}", ch, re.ASCII))
    assert _shorthand_dfa("", letter).accepts(data) == ascii_verdict
    assert _shorthand_dfa("(?u)(?a)", letter).accepts(data) == ascii_verdict


@pytest.mark.parametrize("pattern", [r"(?u)(?:(?:_|a)|[^\s])", r"(?u)(?:a)\S", r"(?u)(?i:x)\w", r"(?u)(?=a)?\S"])
def test_the_unicode_flag_holds_after_a_group_closes(pattern):
    """(A group's end restored the flags without (?u): Lark's joined terminals, `(?:...)\\s`,
    then read \\s as ASCII and took U+001C as no space.)"""
    dfa = regex_to_dfa(pattern)
    for text in ["a\x1c", "\x1c", "x\u00e9", "a\u00a0", "ab"]:
        assert dfa.accepts(text.encode()) == bool(re.fullmatch(pattern, text)), text


def test_unicode_shorthands_inside_classes():
    dfa = regex_to_dfa(r"(?u)[\w-]+")
    for text in ["naïve-東京_٣", "ß"]:
        assert dfa.accepts(text.encode())
    assert not dfa.accepts("a b".encode()) and not dfa.accepts("a\u00a0b".encode())
