"""Returns on condition of the second byte are kept only where Python's `re` (Lark's matcher) agrees."""

from __future__ import annotations

import re

import lark
import pytest

from constrain import Compiler
from constrain.automata.refusals import END_OF_TEXT
from constrain.automata.return_checks import second_byte_checks
from constrain.grammar.lark.return_confirm import confirmed, regex_confirm
from constrain.grammar.lark.translate import lark_rules


def _terminal(pattern: str, extra: str = ""):
    """The greedy rule of terminal T (its DFA, its per-state refusals) and its regex."""
    low = lark_rules(f'start: T ("." | "x" | ";")*\nT: /{pattern}/\n{extra}')
    dfa, refused = low.rules["T"].dfa, low.refused.get("T", 0)
    at = (lambda q: refused) if type(refused) is int else refused.__getitem__
    return dfa, second_byte_checks(dfa, at), low


def _bytes_of(found) -> set[int]:
    return {b1 for by_byte in found.values() for b1 in by_byte}


@pytest.mark.parametrize("pattern, kept", [
    (r"[0-9]+(\.[0-9]+)?", {ord(".")}),  # backtracking: "1." needs a digit
    (r"([^{;]|\{(?!\{))+", {ord("{")}),  # a lookahead in a repeat: the iteration is dropped
    (r"[a-z]+(?![0-9])", set(range(ord("a"), ord("z") + 1))),  # "ab1": re gives back the "b" (then "b1" is next)
    (r"(?!ab\b)[a-z]+", set()),  # a lookahead at the start fails the whole match, no shorter one
    (r"a(?!bc)[a-z]*", set()),  # a lookahead after a character no backtracking gives back
])
def test_only_what_the_regex_does_is_kept(pattern, kept):
    dfa, found, low = _terminal(pattern)
    assert _bytes_of(confirmed(low.patterns["T"], dfa, found)) == kept


def test_the_checks_kept_agree_with_re_on_every_second_character():
    dfa, found, low = _terminal(r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
    regex = re.compile(low.patterns["T"])
    for q, by_byte in confirmed(low.patterns["T"], dfa, found).items():
        for b1, c in by_byte.items():
            for b2 in range(0x20, 0x7F):
                text = "12" + chr(b1) + chr(b2)
                if c >> b2 & 1:
                    assert regex.match(text).end() == 2, text
                else:  # (a byte left out: the match may go on there, or a sample disagreed)
                    assert b2 in range(0x30, 0x3A) or chr(b2) in "+-" or not (c >> b2 & 1)
    assert any(c & END_OF_TEXT for by_byte in confirmed(low.patterns["T"], dfa, found).values() for c in by_byte.values())


def test_the_end_after_the_byte_is_kept_only_where_a_terminal_is_that_byte_alone():
    dfa, found, low = _terminal(r"'([^']|'')*'")
    assert _bytes_of(found) == {ord("'")}  # ("'a''" may end there: the text's end after a lone quote)
    assert regex_confirm(low.patterns, low.singles)("T", dfa, found) == {}
    with_quote = lark_rules(f'start: T Q?\nT: /\'([^\']|\'\')*\'/\nQ: "\'"')
    assert regex_confirm(with_quote.patterns, with_quote.singles)("T", dfa, found)
    assert regex_confirm(low.patterns, None)("T", dfa, found)  # (every terminal not known: kept)


def test_sql_keeps_no_check_on_names_and_accepts_a_number_before_a_keyword(llama3):
    """SQL's NAME excludes keywords with a lookahead at its start: `selec` before `t ` is no
    match Lark makes. Its NUMBER before `ELSE` is one (Lark lexes `1ELSE` as 1, ELSE)."""
    from constrain import grammars

    sql = Compiler(llama3).compile_lark(grammars.load("sql"))
    rules = sql.automaton.rules
    assert not rules.checks[rules.names.index("NAME")] and rules.checks[rules.names.index("NUMBER")]
    text = "SELECT CASE WHEN a THEN 1ELSE 0 END;"
    assert lark.Lark(grammars.load("sql")).parse(text) and sql.accepts(text.encode())
    assert not sql.accepts(b"SELECT select;")


@pytest.mark.parametrize("grammar, text", [
    ("start: T B\nT: /a(?:b\\b)?/\nB: /b\u00d7/", "ab\u00d7"),  # `\b` before a character of two bytes
    ("start: T B\nT: /a(?:b(?!\u00c0))?/\nB: /b\u00c1/", "ab\u00c1"),  # a lookahead of one such character
    ("start: T B\nT: /a(?:b(?=cd))?/\nB: /bcd/", "abcd"),  # a lookahead of two characters
    ("start: T B\nT: /a(?:b(?=c\\d))?/\nB: /bc\\d/", "abc1"),
    ("start: T B\nT: /a(?:b$)?/\nB: /b\\n/", "ab\n"),  # `$` matches before a final newline
])
def test_a_second_byte_comes_only_from_an_end_refusal_that_is_exact(grammar, text, llama3):
    """An end that refuses more than Lark does (end_window.py: a window of several characters,
    a character of several bytes, `$` before a newline) must not widen a check: Lark's match
    ends after `b` there (`ab` then B fails), so the text is refused, not read as `a` then B.
    (A review found the first four accepted.)"""
    assert not _lark_parses(grammar, text)
    assert not Compiler(llama3).compile_lark(grammar).accepts(text.encode())


def _lark_parses(grammar: str, text: str) -> bool:
    try:
        lark.Lark(grammar).parse(text)
    except lark.exceptions.LarkError:
        return False
    return True
