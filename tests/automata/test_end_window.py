"""automata/end_window.py: a regex whose assertions read past its match's end, and what each
end refuses next, with Python's `re` as the oracle of where the regex can end before a window
of following text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata.end_window import MAX_WINDOW, reach_past_end, windowed, windowed_ends
from constrain.automata.rules import END_OF_TEXT
from constrain.limits import Limits


@pytest.mark.parametrize("regex, reach", [
    (r"ab", 0),
    (r"a(?!b)", 1),
    (r"a(?!bc)", 2),
    (r"a(?!b)c", 0),  # a character of the match follows it
    (r"a(?!bc)d", 1),
    (r"(?:x(?!y))+", 1),  # inside a repeat: its last pass is at the end
    (r"(?:x(?!y)z)+", 0),
    (r"a\b", 1), (r"a\B", 1), (r"a$", 1), (r"^a", 0),
    (r"a(?<!b)", 0), (r"a(?<=a)", 0),
    (r"a(?!b*)", 0),  # (b* matches nothing: decided at once)
    (r"a(?!b+)", 1), (r"a(?!b{2,})", 2), (r"a(?!(?:b|cd)+)", 2), (r"a(?!(?:bc?){2,})", 3),  # the shortest decide
    (r"a(?!(?:bc)+d)", None),  # unbounded
    (r"(?!(if|in)(?!\w))[a-z]+", 2),  # a keyword exclusion: the keyword (2) and \w after it (1), less [a-z]
    (r"a(?!b(?!c))", 2),
    (r"(?:a|b(?!cd))e?", 2),
])
def test_reach_past_the_end(regex, reach):
    assert reach_past_end(regex) == reach


REGEXES = [
    r"ab?c|a(?!b)",  # branches that start alike and refuse differently
    r"(?:x(?!y))+",  # a lookahead inside a repeat
    r"s(?:[^;$]|\$(?![{]))*",  # HCL2's string characters, in small
    r"[a-c]+\b", r"[a-c]+\B", r"a$|b", r"a(?=b)|ab",
    r"c(?!de)",  # two characters
    r"(?:a|b(?!cd))c?",
    r"a(?!b)(?=[bc]|$)",
    r":(?!a+)|\d?[ab](?!.)",  # (a+ decides at its first a)
]
ALPHABET = "abcdexys;${ é"


@pytest.mark.parametrize("regex", REGEXES)
def test_an_end_allows_only_what_re_allows(regex):
    """Where the DFA accepts a text and its end there refuses neither the next character's
    first byte nor the end (an empty window), `re` matches the regex to exactly that text
    before every window that starts so; and where `re` does, the DFA accepts the text, and
    for one character of ASCII after it (where the assertions read no further), allows it."""
    found = windowed("(?u)" + regex, Limits())
    assert found is not None
    dfa, refused = found
    k = reach_past_end("(?u)" + regex)
    assert k is not None and 0 < k <= MAX_WINDOW

    def re_allows(text: str, window: str) -> bool:
        return re.match(f"(?:{regex})(?={re.escape(window)}\\Z)", text + window) is not None

    @settings(max_examples=400, deadline=None)
    @given(text=st.text(alphabet=ALPHABET, max_size=5), window=st.text(alphabet=ALPHABET, max_size=k))
    def check(text, window):
        q = dfa.walk(0, text.encode())
        ends = q >= 0 and bool(dfa.accepting[q])
        bit = 256 if not window else window.encode()[0]
        ours = ends and not refused[q] >> bit & 1
        theirs = re_allows(text, window)
        if ours:
            assert theirs, (text, window)
        if theirs:
            assert ends, (text, window)
            if k == 1 and (not window or window.isascii()):
                assert ours, (text, window)

    check()


def test_ends_that_refuse_differently_stay_apart_and_alike_ones_merge():
    dfa, refused = windowed("(?u)ab?c|a(?!b)", Limits())
    ends = {refused[q] for q in range(dfa.n_states) if dfa.accepting[q]}
    assert ends == {1 << ord("b"), 0}
    dfa, refused = windowed("(?u)(?:a|b)(?!c)|d(?!c)", Limits())
    assert int(dfa.accepting.sum()) == 1 and dfa.n_states == 2
    assert refused[1] == 1 << ord("c")


def test_characters_beyond_ascii_are_refused_by_their_first_byte_where_one_is():
    """`(?![é])` refuses the lead byte 0xC3 (with it, `à`: more than Lark refuses, never less);
    `$` refuses every character and allows only the end."""
    _, refused = windowed("(?u)a(?![é])", Limits())
    assert refused[1] == 1 << 0xC3
    dfa, refused = windowed("(?u)a$", Limits())
    assert refused[1] & END_OF_TEXT == 0
    assert all(refused[1] >> b & 1 for b in [*range(0x80), *range(0xC2, 0xF5)])


@pytest.mark.parametrize("regex", [r"ab", r"a(?!b)c", r"a(?!bcde)", r"a(?!(?:bc)+d)"])
def test_nothing_to_do_or_too_far(regex):
    assert windowed("(?u)" + regex, Limits()) is None


@pytest.mark.parametrize("regex", REGEXES + [r"a(?:b(?=cd))?", r"a(?:b(?!\u00c0))?", r"ab?(?!\$?\{)"])
def test_an_end_refuses_surely_only_what_re_refuses_before_every_window(regex):
    """`surely` (what a return on condition may count on: return_confirm.py): where an end
    surely refuses a byte, `re` ends the match there before no window that starts with it;
    it is part of what the end refuses; and one ASCII character away it is all of that."""
    dfa, refused, surely = windowed_ends("(?u)" + regex, Limits())
    k = reach_past_end("(?u)" + regex)

    def re_allows(text: str, window: str) -> bool:
        return re.match(f"(?:{regex})(?={re.escape(window)}\\Z)", text + window) is not None

    for q in range(dfa.n_states):
        assert surely[q] & ~refused[q] == 0
        if k == 1 and dfa.accepting[q]:
            assert surely[q] & ((1 << 128) - 1) == refused[q] & ((1 << 128) - 1), q

    @settings(max_examples=400, deadline=None)
    @given(text=st.text(alphabet=ALPHABET, max_size=5), window=st.text(alphabet=ALPHABET + "\u00c0", min_size=1, max_size=k))
    def check(text, window):
        q = dfa.walk(0, text.encode())
        if q >= 0 and dfa.accepting[q] and surely[q] >> window.encode()[0] & 1:
            assert not re_allows(text, window), (text, window)

    check()
