"""Zero-width assertions (lookarounds, \\b, \\B, ^/$ anywhere) as exact automata, checked
against Python's `re` on random strings drawn mostly from each pattern's own characters.

The oracle runs with re.ASCII (ECMA-262 and JSON Schema: \\w, \\d, \\s, \\b are ASCII) and with
`$` read as `\\Z` (ECMA's `$` holds at the end only; Python's also before a final newline)."""

from __future__ import annotations

import functools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain import UnsupportedRegexError
from constrain.errors import EmptyLanguageError
from constrain.automata import Limits, compile_ir, parse_regex, regex_language, regex_to_dfa
from constrain.automata.assertions import MARKERS, regex_automaton
from constrain.automata.dfa import DFA
from constrain.automata.char_graph import char_graph

PATTERNS = [
    # typical
    r"^(?!\s)(?!.*\s$).+$",
    r"^(?=.*[A-Z])(?=.*[0-9]).{8,}$",
    r"\bfoo\b",
    r"\Bfo",
    r"(?<!a)b",
    r"(?<=a)b",
    r"(?<=ab|cd)e",
    r"^a(?=b)",
    r"a^b",
    r"(?!$)",
    r"(?!foo)bar",
    r"x(?!)",
    r"(?=)a",
    r"a$b|c",
    r"(^a|b)c",
    r"(a|^)b(c|$)",
    r"((?=a)a|b)+$",
    r"(?=(?<=a)b)",
    r"x(?=a(?=b))",
    r"(?!a(?!b))x",
    r"(?<=(?=a).)",
    r"(?i)(?=A)[a-c]b\b",
    r"(?:\bfoo|\Bbar)+",
    r"^((?!ab).)*$",
    r"(?=a)*b",
    r"^((?=.{1,12}$).)*$",  # a counting lookahead met at every position
    r"(?:(?<=a)b|c(?!\w))+",
    r"\b",
    r"\B",
    # lookaheads at the text's edge (products of DFAs; Lark's keyword exclusions)
    r"(?!(ab|c)(?![a-z]))[a-z]+",
    r"(?i)(?!(ab|c)(?!\w))\w+|\"[^\"]+\"",
    r"(?=a(?=b))\w+",
    r"(?!a(?!b\b))\w*",
    r"(?!a)(?=\w)(?!b)..",
    # from real schemas (JsonSchemaStore)
    r"^(?!.*://)(?=.{1,25}$)((.{1,6}\.){1,3}(?![0-9]*$)[a-z0-9-]+\.?)$",  # aerleon, bounds shrunk
    r"^([\da-z](?:(?!.*--)[\da-z-]*[\da-z])?)$",
    r"^@([\da-z](?:(?!.*--)[\da-z-]*[\da-z])?)/([\da-z](?:(?!.*--)[\da-z-]*[\da-z])?)$",
    r"((?:[^/]*/)*)(?=\.(yaml|yml|json))",
    r"^([^,]+(,|$)){3,}$",
    r"^(?!.*\/)^(.*[^.]+.*)$",
    r"^(https?://|/?.?-?(?!\w+://)\w).+\.ya?ml$",
    r"^https?:\/\/(www\.)?[-a-zA-Z0-9@:%._\+~#=]{1,8}\.[a-zA-Z0-9()]{1,6}\b([-a-zA-Z0-9()@:%_\+.~#?&//=]*)$",
    r"(?:^|\r?\n)-B-(?:\r?\n)(?:[A-Za-z0-9+/]{2})*(?:\r?\n)-E-(?:$|\r?\n)",
    r"^(?:(?:^[\*]|[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$",
    r"^(?=[^=]+$)(?!\s+$)(.|\n)+$",
    # anchors inside groups (searched: the group's ^ still anchors)
    r"(^$)|(^[a-f0-9]{2}-[a-f0-9]{2}$)",
    r"(^Hpt_|^Int_|_Armour_)",
    r"^([^,]|$)",
    r"/^[0-9]{2}$/",
]


def python_pattern(pattern: str) -> str:
    """`pattern` for Python's re with ECMA's `$` (end of input only) and `\\B` (which holds in
    the empty string: Python's does not before 3.14)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escape = pattern[i : i + 2]
            out.append("(?!\\b)" if escape == "\\B" and not in_class else escape)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


def alphabet(pattern: str) -> str:
    """The pattern's own characters, and a few that test edges (space, newline, non-ASCII)."""
    return "".join(sorted(set(pattern) - set("\\()[]{}?*+|^$"))) + " \n_-.a0Aé😀"


def oracle(pattern: str, text: str, search: bool) -> bool:
    find = re.search if search else re.fullmatch
    return find(python_pattern(pattern), text, re.ASCII) is not None


@functools.lru_cache(maxsize=None)
def language(pattern: str, search: bool):
    """The DFA, or None where no string matches (compiled once per pattern and mode: the
    property test below draws each of them ~35 times)."""
    try:
        return compile_ir(regex_language(pattern, search=search))
    except EmptyLanguageError:
        return None


@st.composite
def case(draw):
    pattern = draw(st.sampled_from(PATTERNS))
    chars = alphabet(pattern)
    text = draw(st.text(alphabet=st.sampled_from(chars), max_size=14))
    return pattern, text


@settings(max_examples=3000, deadline=None)
@given(case(), st.booleans())
def test_assertions_match_like_re(example, search):
    pattern, text = example
    dfa = language(pattern, search)
    got = dfa is not None and dfa.accepts(text.encode("utf-8"))
    assert got == oracle(pattern, text, search), (pattern, text, search)


def walks(dfa, rng, count: int) -> list[str]:
    """Random strings of the DFA's language (random walks, ASCII preferred)."""
    out = []
    table = dfa.table[:, dfa.byte_classes].tolist()  # state x byte (-1: no step), read once
    live_bytes = [[b for b in range(256) if row[b] >= 0] for row in table]
    weights = [[30 if b < 0x80 else 1 for b in live] for live in live_bytes]
    for _ in range(count * 3):
        state, data = 0, bytearray()
        for _ in range(60):
            if dfa.accepting[state] and rng.random() < 0.2:
                break
            live = live_bytes[state]
            if not live:
                break
            b = rng.choices(live, weights=weights[state])[0]
            data.append(b)
            state = table[state][b]
        if dfa.accepting[state]:
            out.append(data.decode("utf-8"))
        if len(out) == count:
            break
    return out


def edits(text: str, chars: str, rng) -> list[str]:
    """Strings one random deletion, insertion or replacement away from `text`."""
    out = []
    for _ in range(6):
        i = rng.randint(0, len(text))
        c = rng.choice(chars)
        out += [text[:i] + text[i + 1 :], text[:i] + c + text[i:], text[:i] + c + text[i + 1 :]]
    return out


@pytest.mark.parametrize("pattern", PATTERNS)
def test_each_pattern_agrees_near_its_matches(pattern):
    """Random strings seldom satisfy several lookaheads at once: here the strings are walks
    through our automaton (each must match) and their one-character edits, plus random
    strings of the pattern's characters."""
    import random

    rng = random.Random(pattern)
    chars = alphabet(pattern)
    for search in (False, True):
        dfa = language(pattern, search)
        texts = {""} | {"".join(rng.choice(chars) for _ in range(rng.randint(1, 12))) for _ in range(300)}
        if dfa is not None:
            for text in walks(dfa, rng, 60):
                assert oracle(pattern, text, search), (pattern, text, search)
                texts.update(edits(text, chars, rng))
        for text in texts:
            got = dfa is not None and dfa.accepts(text.encode("utf-8"))
            assert got == oracle(pattern, text, search), (pattern, text, search)


@pytest.mark.parametrize(
    "pattern,accepted,rejected",
    [
        (r"^(?=.*[A-Z])(?=.*[0-9]).{8,}$", ["abcdefG1", "1AAAAAAAAA"], ["abcdefgh1", "ABCDEFGHI", "aB1"]),
        (r"\bfoo\b", ["foo", "a foo.", "(foo)"], ["foobar", "xfoo", "foo_"]),
        (r"^(?!\s)(?!.*\s$).+$", ["a b", "x"], [" a", "a ", "", "a\n"]),
        (r"(?<!a)b", ["b", "cb", "abb"], ["ab", "", "aab"]),
        (r"(?!foo)bar", ["bar", "xbar"], ["ba", "foo"]),
    ],
)
def test_search_examples(pattern, accepted, rejected):
    dfa = compile_ir(regex_language(pattern, search=True))
    for text in accepted:
        assert dfa.accepts(text.encode()), text
    for text in rejected:
        assert not dfa.accepts(text.encode()), text


@pytest.mark.parametrize("pattern", ["a^b", "a$b", r"(?=a)b", r"a(?<=b)", r"\ba\bb", "x(?!)"])
def test_impossible_patterns_are_empty(pattern):
    with pytest.raises(EmptyLanguageError):
        regex_to_dfa(pattern)
    if pattern != r"\ba\bb":  # (searched, \ba\b never meets b either)
        with pytest.raises(EmptyLanguageError):
            regex_language(pattern, search=True)


def test_parse_regex_still_refuses_assertions_and_regex_to_dfa_takes_them():
    with pytest.raises(UnsupportedRegexError, match="lookaround"):
        parse_regex("a(?=b)b")
    assert regex_to_dfa("a(?=b)b").accepts(b"ab")


def test_backreferences_inside_lookarounds_are_refused_with_position():
    with pytest.raises(UnsupportedRegexError) as info:
        regex_to_dfa(r"(a)(?=\1)")
    assert info.value.position == 6 and "backreference" in str(info.value)


def test_too_many_distinct_assertions_are_named():
    pattern = "y" + "".join(f"(?!{chr(0x61 + k)})" for k in range(len(MARKERS) + 1)) + "x"
    with pytest.raises(UnsupportedRegexError, match="distinct assertions") as info:
        regex_to_dfa(pattern)
    assert info.value.pattern == pattern
    # at the start of the text each lookahead is a product of DFAs: no markers, no such limit
    assert regex_to_dfa(pattern[1:]).accepts(b"x") and not regex_to_dfa(pattern[1:]).accepts(b"a")
    # repeated ones share a marker
    assert regex_to_dfa("".join("(?!a)" for _ in range(30)) + "x").accepts(b"x")


def test_limits_apply():
    from constrain import LimitExceededError

    with pytest.raises(LimitExceededError):
        regex_language(r"^(?=.*a)(.{1,20}\.){1,20}$", search=True, limits=Limits(max_dfa_states=500))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\u00e9\u0800\U0001f600c", max_size=6))
def test_char_graph_round_trips(text):
    """A byte DFA of UTF-8 text → graph over characters → the same language."""
    for pattern in (r"(a|\u00e9+|[\u0800-\U0001f600]b)*", r"[^a]*a?", r"\w*[^\w]"):
        dfa = regex_to_dfa(pattern)
        again = compile_ir(char_graph(dfa))
        assert again.accepts(text.encode()) == dfa.accepts(text.encode())


@pytest.mark.parametrize("pattern", [r"(?u)\bé\w*\b", r"(?u)x\B.", r"(?u)(\b\w+\b ?)+"])
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("aé東_ x-\u0301"), max_size=8))
def test_unicode_word_boundaries_match_like_re(pattern, text):
    """Under (?u), \\b and \\B look at Python's Unicode \\w, as re (and so Lark) does."""
    dfa = regex_to_dfa(pattern)
    assert dfa.accepts(text.encode()) == (re.fullmatch(pattern, text) is not None), text


@pytest.mark.parametrize("pattern", [r"(?<!a)b+", r"\bfoo\b", r"a(?=b)b|c", r"[a-c]+x?"])
@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="abcfox ", max_size=7))
def test_regex_automaton_is_the_language_as_bytes(pattern, text):
    """regex_automaton: plain IR where the pattern has no assertions, else the byte DFA itself;
    either way the strings that fully match, as re reads them."""
    found = regex_automaton(pattern)
    assert isinstance(found, DFA) == bool(re.search(r"\(\?[<=!]|\\b", pattern))
    dfa = found if isinstance(found, DFA) else compile_ir(found)
    assert dfa.accepts(text.encode()) == oracle(pattern, text, search=False)
