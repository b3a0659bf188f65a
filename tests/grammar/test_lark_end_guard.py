"""grammar/lark/end_guard.py: the bytes a terminal's end refuses, read off its regex's text, with
Python's `re` as the oracle of where such a regex can end before a given next character."""

from __future__ import annotations

import random
import re

import lark
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain import Compiler, Matcher
from constrain.automata.rules import END_OF_TEXT
from constrain.grammar.lark.end_guard import end_guards
from constrain.grammar.lark.terminals import _ascii_members, _widths, lower_terminal
from constrain.limits import Limits


def _bits(chars: str) -> int:
    return sum(1 << ord(c) for c in set(chars))


def _guards(regex: str):
    return end_guards(regex, _widths, lambda part: _ascii_members("T", part, Limits()))


LOWER, UPPER = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ALL = (1 << 256) - 1


@pytest.mark.parametrize("regex, expected", [
    (r"[ \t]*=(?!=|>)", [(r"[ \t]*=", _bits("=>"))]),  # HCL2's EQ
    (r"[+*]|[?](?![a-z])", [("[+*]", 0), ("[?]", _bits(LOWER))]),  # lark.lark's OP
    (r"(?:[1-9][0-9]*|0(?![1-9]))", [("[1-9][0-9]*", 0), ("0", _bits("123456789"))]),  # a group around it all
    (r"(?i:k(?![a-z]))", [("(?i:k)", _bits(LOWER + UPPER))]),  # the flags fold the refused letters
    (r"a(?!b)(?!c)", [("a", _bits("bc"))]),
    (r"a(?![^x])", [("a", _bits("".join(chr(c) for c in range(128) if c != ord("x"))))]),  # ASCII members only
    (r"[(](?!\))|\((?!x)", [("[(]", _bits(")")), (r"\(", _bits("x"))]),
    (r"a(?=b)", [("a", _ALL ^ _bits("b") | END_OF_TEXT)]),  # only b may follow, and no end
    (r"[a-z]+(?=\()|[0-9]", [("[a-z]+", _ALL ^ _bits("(") | END_OF_TEXT), ("[0-9]", 0)]),
    (r"a(?=[bc])(?!b)", [("a", _ALL ^ _bits("c") | END_OF_TEXT)]),
    (r"a(?!bc)", None),  # two characters
    (r"a(?!b)c", None),  # not at the end
    (r"(?!b)a", None),
    (r"a(?!(?=b)c)", None),  # an assertion inside
    (r"(a|b(?!c))+", None),  # inside a repeat
    (r"a|(?!b)", None),  # a branch of nothing but the lookahead
    (r"(?x:a (?!b))", None),  # verbose
    (r"ab", None),
])
def test_branches_are_grouped_by_what_their_ends_refuse(regex, expected):
    assert _guards(regex) == expected


REGEXES = [
    r"[ \t]*=(?!=|>)", r"[+*]|[?](?![a-z])", r"(?:[1-9][0-9]*|0(?![1-9]))", r"(?i:k(?![a-z]))",
    r"a+(?!b)|c", r"ab?(?![ab])", r"(?:a|ba)(?!a)(?!c)", r"a(?![^b])",
    r"a+(?=b)|c", r"(?i:k(?=[a-z]))", r"x(?=[ab])(?!a)|0",
]


@pytest.mark.parametrize("regex", REGEXES)
def test_a_group_ends_before_a_character_exactly_where_re_can(regex):
    """Where `re` can match the regex to exactly a text, the next character seen by its
    lookaheads (or none: the end of the text), some group's regex matches that text and does not
    refuse the character (or the end), and nowhere else."""
    groups = _guards(regex)
    assert groups is not None

    @settings(max_examples=300, deadline=None)
    @given(text=st.text(alphabet="ab=c 01K\t?+>", max_size=5), after=st.sampled_from(["", *"ab=c 01K?>x"]))
    def check(text, after):
        theirs = re.fullmatch(f"(?:{regex}){re.escape(after)}", text + after) is not None
        ours = any(
            re.fullmatch(g, text) and not (refused >> (ord(after) if after else 256) & 1) for g, refused in groups
        )
        assert ours == theirs, (text, after)

    check()


def test_a_terminal_that_matches_nothing_but_its_lookahead_is_refused():
    from constrain.errors import UnsupportedGrammarError

    with pytest.raises(UnsupportedGrammarError, match="empty string"):
        lower_terminal("T", _Pattern(r"a?(?!b)"), Limits())


def test_groups_that_start_alike_are_one_terminal_whose_ends_refuse_per_state():
    """`a(?!b)|ab`: the groups' own longest matches would not be the whole regex's, so the
    terminal is one greedy rule whose ends refuse what their branches do (end_window.py)."""
    whole = lower_terminal("T", _Pattern(r"a(?!b)|ab"), Limits())
    assert whole.greedy and not whole.parts
    dfa = whole.node.dfa
    assert [whole.refused[dfa.walk(0, t)] for t in (b"a", b"ab")] == [_bits("b"), 0]
    split = lower_terminal("T", _Pattern(r"[+*]|[?](?![a-z])"), Limits())
    assert [(p.name, p.greedy, p.refused) for p in split.parts] == [("T#0", False, 0), ("T#1", True, _bits(LOWER))]
    one = lower_terminal("T", _Pattern(r"[ \t]*=(?!=|>)"), Limits())
    assert one.greedy and one.refused == _bits("=>") and not one.parts


def test_branches_still_refuse_what_they_end_in_where_another_reads_too_far():
    """`(?!(?:ab)+c)` reads past the end without bound (no window: read within the terminal);
    the other branch's one-character end lookahead is enforced all the same."""
    split = lower_terminal("T", _Pattern(r":(?!(?:ab)+c)|[ab](?!\.)"), Limits())
    assert [(p.greedy, p.refused) for p in split.parts] == [(False, 0), (True, _bits("."))]


class _Pattern:
    """Lark's PatternRE as lower_terminal reads it."""

    def __init__(self, regex: str) -> None:
        self.regex = regex
        self.flags = ()

    def to_regexp(self) -> str:
        return self.regex


@pytest.mark.parametrize("text", [
    'start: A B?\nA: /a(?=b)/\nB: /b/',  # one stack after a
    'start: x | y\nx: A "b"? | "(" x ")"\ny: A "c" | "[" y "]"\nA: /a(?=[bc])/',  # two stacks, neither may end
])
def test_a_positive_end_lookahead_refuses_the_end_of_the_text(llama3, lark_accepts, text):
    grammar = Compiler(llama3).compile_lark(text)
    parser = lark.Lark(text, parser="earley")
    for doc, ok in (("a", False), ("ab", True), ("", False)):
        assert lark_accepts(parser, doc) is ok and grammar.accepts(doc) is ok, doc
    m = Matcher(grammar)
    assert m.accept_token(llama3.token_bytes.index(b"a")) and not m.is_accepting()
    allowed = set(m.allowed_token_ids().tolist())
    assert not allowed & set(llama3.eos_token_ids) and llama3.token_bytes.index(b"b") in allowed


WINDOWED = r'''
start: item (";" item)*
item: A B? | W NUM? | R Y? | C D? | E | S L? | F G?
A: /ab?c|a(?!b)/
F: /fh(?!i)|f(?!g)/
G: /[gi]/
B: "b"
W: /[g-k]+\b/
NUM: /[0-9]+/
R: /(?:x(?!y))+/
Y: "y"
C: /c(?!de)/
D: /de?/
E: /e$/
S: /s(?:[^;$]|\$(?![{]))*/
L: "${" NUM "}"
'''
WINDOWED_ALPHABET = "abcdefghixy0;s${}"


@pytest.fixture(scope="module")
def windowed_grammar(llama3):
    return Compiler(llama3).compile_lark(WINDOWED)


@pytest.fixture(scope="module")
def windowed_lark(lark_accepts):
    parser = lark.Lark(WINDOWED, parser="earley")
    return lambda text: lark_accepts(parser, text)


def _we_accept(grammar, text: str) -> bool:
    sem = grammar.automaton.semantics
    state = sem.advance(sem.initial(), text.encode())
    return state is not None and sem.is_complete(state)


def test_terminals_whose_assertions_read_past_their_end_agree_with_lark(windowed_grammar, windowed_lark):
    """Branches that start alike (A; F, whose two ends refuse different bytes), `\\b` (W), a
    lookahead in a repeat (R), `$` (E), a character a greedy terminal reads only where a
    lookahead lets it (S before `${`: a return on condition of the byte after it,
    automata/return_checks.py): as Lark reads them. A lookahead of two characters (C) refuses
    more than Lark does, never less."""
    both = ["a", "abc", "abcb", "gh", "gh;x", "x", "xx", "c", "e", "x;e", "s$", "s$x", "s$;s", "ss$a", "a;c;e",
            "fi", "fhg", "f;fh", "s${1}"]
    neither = ["ab", "gh1", "xy", "xxy", "cde", "cdd", "e;e", "s${", "ac;e;a", "fg", "fhi"]
    lark_only = ["cd"]
    for text in both:
        assert windowed_lark(text) and _we_accept(windowed_grammar, text), text
    for text in neither:
        assert not windowed_lark(text) and not _we_accept(windowed_grammar, text), text
    for text in lark_only:
        assert windowed_lark(text) and not _we_accept(windowed_grammar, text), text

    @settings(max_examples=400, deadline=None)
    @given(text=st.text(alphabet=WINDOWED_ALPHABET, max_size=10))
    def check(text):
        if _we_accept(windowed_grammar, text):
            assert windowed_lark(text), repr(text)

    check()


@pytest.mark.parametrize("prefix", [b"a", b"gh", b"xx", b"s$", b"c", b"x;e", b"f", b"fh", b"a;"])
def test_masks_after_such_terminals_equal_the_byte_steps(prefix, windowed_grammar, llama3, byte_step_oracle):
    m = Matcher(windowed_grammar)
    assert m.accept_tokens([llama3.token_bytes.index(bytes([b])) for b in prefix]) == len(prefix)
    bm = np.zeros((llama3.size + 31) // 32, dtype=np.int32)
    m.fill_next_token_bitmask(bm)
    ours = np.unpackbits(bm.view(np.uint8), bitorder="little")[: llama3.size].astype(bool)
    theirs = byte_step_oracle(windowed_grammar, m._history[-1], llama3)
    diff = np.flatnonzero(ours != theirs)
    assert not diff.size, [(llama3.token_bytes[t], ours[t]) for t in diff[:5]]


def test_masked_walks_over_such_terminals_end_in_texts_lark_parses(windowed_grammar, windowed_lark, llama3, masked_walk):
    rng = random.Random(5)
    finished = 0
    for _ in range(8):
        m = Matcher(windowed_grammar)
        tokens = masked_walk(m, llama3, rng, 40, {b";", b"}", b"b"})
        if m.is_accepting():
            finished += 1
            assert windowed_lark(b"".join(llama3.token_bytes[t] for t in tokens).decode())
    assert finished
