"""Lark terminals as automata: lazy patterns take their shortest match, greedy ones their
longest (a rule of their own where they could read on); literals are inlined."""

from __future__ import annotations

import re

import numpy as np
import pytest
from lark.lexer import PatternRE, PatternStr

from constrain import UnsupportedGrammarError
from constrain.automata import ir
from constrain.grammar.lark.dialect import read_dialect
from constrain.grammar.lark.reader import read_grammar
from constrain.automata import compile_ir, regex_language
from constrain.automata.algebra import difference
from constrain.errors import EmptyLanguageError
from constrain.grammar.lark.terminals import _is_lazy, first_bytes, lower_terminal, shortest_matches
from constrain.grammars import NAMES, load
from constrain.limits import Limits


def _dfa(terminal):
    return terminal.dfa


def test_literals_are_inlined_text():
    t = lower_terminal("IF", PatternStr("if"), Limits())
    assert t.node == ir.literal("if") and not t.greedy
    folded = lower_terminal("SELECT", PatternStr("select", flags=("i",)), Limits())
    assert _dfa(folded).accepts(b"SeLeCt") and not folded.greedy


def test_a_lazy_pattern_ends_at_its_first_match():
    # common.lark's ESCAPED_STRING: the first unescaped quote ends it
    t = lower_terminal("ESCAPED_STRING", PatternRE(r'".*?(?<!\\)(\\\\)*?"'), Limits())
    dfa = _dfa(t)
    assert dfa.accepts(b'"a"') and dfa.accepts(b'"a\\"b"') and dfa.accepts(b'"a\\\\"')
    assert not dfa.accepts(b'"a"b"') and not dfa.accepts(b'"a\\\\"b"')
    assert not t.greedy  # its end is forced: no accepting state reads on
    comment = _dfa(lower_terminal("C_COMMENT", PatternRE(r"/\*(.|\n)*?\*/"), Limits()))
    assert comment.accepts(b"/* a */") and not comment.accepts(b"/* a */ */")


def test_a_pattern_that_can_read_on_is_greedy():
    assert lower_terminal("NAME", PatternRE(r"[a-z]+"), Limits()).greedy
    assert lower_terminal("WS", PatternRE(r"(?:[ \t])+"), Limits()).greedy
    assert not lower_terminal("QUOTED", PatternRE(r'"[^"]*"'), Limits()).greedy


def test_a_terminal_matching_the_empty_text_is_its_other_texts_made_optional():
    """llguidance reads such terminals (Lark refuses them): the rest of the language, optional
    where used (translate.py)."""
    t = lower_terminal("A", PatternRE("(?:ab)*c?"), Limits())
    assert t.optional and not t.only_empty and t.greedy
    dfa = _dfa(t)
    assert not dfa.accepts(b"") and all(dfa.accepts(s) for s in (b"c", b"ab", b"ababc"))
    assert not dfa.accepts(b"a") and not dfa.accepts(b"abca")
    for nothing_else in (PatternStr(""), PatternRE("(?:)"), PatternRE("(?:a{0})")):
        assert lower_terminal("E", nothing_else, Limits()).only_empty
    assert not lower_terminal("B", PatternRE("a+"), Limits()).optional


def test_terminals_matching_nothing_lazily_or_backreferences_are_refused():
    with pytest.raises(UnsupportedGrammarError, match="empty string") as info:
        lower_terminal("A", PatternRE("a*?"), Limits())  # (its shortest match is always empty)
    assert info.value.where == "terminal A"
    with pytest.raises(UnsupportedGrammarError, match="empty string"):
        lower_terminal("W", PatternRE(r"a*\b"), Limits())  # (an assertion at its end)
    with pytest.raises(UnsupportedGrammarError, match="backreference"):
        lower_terminal("H", PatternRE(r"(?P<x>a)(?P=x)"), Limits())


def test_shorthand_classes_are_unicode_as_in_lark():
    """Lark matches terminals with Python's re, whose \\w \\d \\s take Unicode in str patterns."""
    word = _dfa(lower_terminal("WORD", PatternRE(r"\w+"), Limits()))
    assert word.accepts("naïve".encode()) and word.accepts("東京".encode()) and not word.accepts(b"a-b")
    digits = _dfa(lower_terminal("DIGITS", PatternRE(r"\d+"), Limits()))
    assert digits.accepts("٣4".encode()) and not digits.accepts(b"x")
    space = _dfa(lower_terminal("SPACE", PatternRE(r"\s+"), Limits()))
    assert space.accepts("\u3000 \t".encode()) and not space.accepts(b"_")


@pytest.mark.parametrize("regex, lazy", [
    (r"a*?b", True), (r"a+?", True), (r"a??", True), (r"a{2,3}?", True), (r"(?:x|y)*?z", True),
    (r"a*b", False), (r"(?i)select", False), (r"(?!(a|b)(?![a-z]))[a-z]+", False),
    (r"\*?x", False), (r"[*+]?\?", False), (r"a{2}", False), (r"\?", False),
])
def test_lazy_quantifiers_are_found_and_only_they(regex, lazy):
    """The quick check (a quantifier followed by `?`) hands doubtful ones to Python's parser."""
    from constrain.grammar.lark.terminals import _is_lazy

    assert _is_lazy(regex) is lazy


@pytest.mark.parametrize("value, cased", [("select", True), ("Order By", True), ("x1_ÉtÉ", True), ("k", True), ("ß", True), ("ǅ", True), ("1+2", False)])
def test_a_case_insensitive_string_reads_what_its_regex_reads(value, cased):
    """`"..."i` is built directly, not parsed as the regex Lark writes for it: the same language
    (ß is cased for `re`: it matches the capital ẞ, case_partners.py)."""
    from constrain.automata import compile_ir, regex_language
    from constrain.automata.algebra import difference
    from constrain.errors import EmptyLanguageError

    direct = lower_terminal("KW", PatternStr(value, ("i",)), Limits())
    assert not direct.greedy
    as_regex = compile_ir(regex_language("(?u)" + PatternStr(value, ("i",)).to_regexp()))
    ours = direct.dfa

    def nothing_in(a, b) -> bool:  # (a less b is empty)
        try:
            return not difference(a, b).accepting.any()
        except EmptyLanguageError:
            return True

    assert nothing_in(ours, as_regex) and nothing_in(as_regex, ours)
    assert nothing_in(ours, compile_ir(regex_language(re.escape(value)))) is not cased  # (the check sees case)


@pytest.mark.parametrize("name", NAMES)
def test_first_bytes_from_the_ir_are_the_dfa_s(name):
    """first_bytes reads a literal's or plain regex's first characters off its IR (no DFA built):
    the same bytes as its DFA's first row, for every terminal of the shipped grammars and more."""
    loaded = read_grammar(read_dialect(load(name)).text, "start")
    patterns = [*loaded.terminals.values(), PatternRE("(?:é|a?b*)c"), PatternRE("x{0}[ą-ż]"), PatternStr("Ünï", "i")]
    for k, pattern in enumerate(p for p in patterns if p is not None):
        t = lower_terminal(f"T{k}", pattern, Limits())
        dfa = t.dfa
        assert first_bytes(t) == set(np.flatnonzero(dfa.table[0, dfa.byte_classes] >= 0).tolist()), pattern


@pytest.mark.parametrize(
    "regex",
    [
        r"(?!(select|from)(?![a-z0-9_]))[a-z_][a-z0-9_]*",
        r"\"(?:[^\"\\]|\\.)*?(?<!\\)\"",
        r"(?=\w*\d)\b\w+\b",
        r"(?:é|\d)+(?<![0-3])",
    ],
)
def test_a_lookaround_terminal_keeps_the_automaton_it_was_built_as(regex):
    """Terminals with assertions take the byte automaton regex_automaton builds (not a graph over
    characters compiled again): the same language as regex_language's graph."""
    t = lower_terminal("T", PatternRE(regex, "i"), Limits())
    graph = compile_ir(regex_language("(?u)" + PatternRE(regex, "i").to_regexp()), Limits())
    if _is_lazy(regex):
        graph = shortest_matches(graph)
    for a, b in ((t.dfa, graph), (graph, t.dfa)):
        try:
            assert not difference(a, b).accepting.any()
        except EmptyLanguageError:  # (the difference is empty: what the check wants)
            pass
