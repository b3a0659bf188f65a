"""JSON lexical IR: every spelling of a string is accepted, nothing else; numbers are exact."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from constrain.automata import compile_ir, ir, parse_regex
from constrain.grammar.json_schema.hex_ranges import unicode_escapes
from constrain.grammar.json_schema.lexical import (
    NUMBER,
    encode,
    encode_chars,
    quoted,
    string_body,
    string_literal,
    whitespace,
)


def _accepts(dfa, text: str) -> bool:
    s = dfa.walk(0, text.encode("utf-8", "surrogatepass"))
    return s >= 0 and dfa.is_accepting(s)


def _spellings(value: str, rng) -> list[str]:
    """Several valid JSON spellings of a string: json.dumps both ways, and a random mix of
    raw characters, their ensure_ascii forms (short escapes, \\uXXXX, surrogate pairs) and
    upper- or lower-case \\uXXXX escapes."""
    out = [json.dumps(value), json.dumps(value, ensure_ascii=False)]
    parts = []
    for ch in value:
        cp = ord(ch)
        choice = rng.randrange(3)
        if ch in '"\\' or cp < 0x20 or choice == 0:
            parts.append(json.dumps(ch)[1:-1])
        elif choice == 1 and cp <= 0xFFFF:
            parts.append(f"\\u{cp:04X}" if rng.randrange(2) else f"\\u{cp:04x}")
        else:
            parts.append(ch)
    out.append('"' + "".join(parts) + '"')
    return out


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)


@settings(max_examples=150, deadline=None)
@given(texts, texts, st.randoms(use_true_random=False))
def test_string_literal_accepts_every_spelling_and_only_its_value(value, other, rng):
    dfa = compile_ir(string_literal(value))
    for spelling in _spellings(value, rng):
        assert json.loads(spelling) == value
        assert _accepts(dfa, spelling), spelling
    if other != value:
        assert not _accepts(dfa, json.dumps(other))
        assert not _accepts(dfa, json.dumps(other, ensure_ascii=False))


@settings(max_examples=150, deadline=None)
@given(texts, st.integers(0, 4), st.integers(0, 6), st.randoms(use_true_random=False))
def test_length_bounds_count_characters_not_bytes(value, lo, span, rng):
    hi = lo + span
    dfa = compile_ir(quoted(string_body(lo, hi)))
    expected = lo <= len(value) <= hi
    for spelling in _spellings(value, rng):
        assert _accepts(dfa, spelling) == expected, (spelling, lo, hi)


def test_astral_characters_as_surrogate_pairs_count_once():
    dfa = compile_ir(quoted(string_body(1, 1)))
    assert _accepts(dfa, json.dumps("😀"))  # "\ud83d\ude00"
    assert _accepts(dfa, '"😀"')
    assert not _accepts(dfa, '"\\ud83d"')  # a lone surrogate is not a character


@pytest.mark.parametrize("pattern", [r"[a-c]+\d", r'[^"]{2}', r"(x|\u00e9)*", r"\s?[\\/]"])
@settings(max_examples=60, deadline=None)
@given(value=st.text(st.sampled_from('abc1"é x\\/\n'), max_size=5), rng=st.randoms(use_true_random=False))
def test_encoded_patterns_judge_the_decoded_value(pattern, value, rng):
    dfa = compile_ir(quoted(encode(parse_regex(pattern))))
    expected = re.fullmatch(pattern, value, re.ASCII) is not None
    for spelling in _spellings(value, rng):
        assert _accepts(dfa, spelling) == expected, spelling


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 0x10FFFF), st.integers(0, 0x2000)), min_size=1, max_size=3), st.booleans())
def test_wide_character_sets_encode_as_the_same_language(spans, canonical):
    """encode gives wide sets as an embedded DFA: the same minimal DFA as the spelled IR."""
    ranges = ir.chars([(lo, min(lo + width, 0x10FFFF)) for lo, width in spans]).ranges
    assume(any(lo < 0xD800 or hi > 0xDFFF for lo, hi in ranges))  # (surrogates alone: no character)
    a = compile_ir(ir.concat(ir.literal("x"), ir.repeat(encode(ir.Chars(ranges), canonical), 1, None)))
    b = compile_ir(ir.concat(ir.literal("x"), ir.repeat(encode_chars(ranges, canonical), 1, None)))
    assert (a.byte_classes == b.byte_classes).all() and (a.table == b.table).all() and (a.accepting == b.accepting).all()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0x10FFFF), st.integers(0, 0x10FFFF), st.integers(0, 0x10FFFF))
def test_unicode_escapes_cover_exactly_the_range(a, b, probe):
    lo, hi = min(a, b), max(a, b)
    if 0xD800 <= lo and hi <= 0xDFFF:
        assert unicode_escapes(lo, hi) == ir.NOTHING  # surrogates alone are no characters
        return
    dfa = compile_ir(unicode_escapes(lo, hi))
    if 0xD800 <= probe <= 0xDFFF:
        return
    spelled = json.dumps(chr(probe))[1:-1]  # ensure_ascii: \uXXXX or a surrogate pair
    if spelled.startswith("\\u"):
        assert _accepts(dfa, spelled) == (lo <= probe <= hi)
        assert _accepts(dfa, spelled.upper().replace("\\U", "\\u")) == (lo <= probe <= hi)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)), st.text(max_size=4))
def test_number_is_json_number_syntax(number, junk):
    dfa = compile_ir(NUMBER)
    assert _accepts(dfa, json.dumps(number))
    candidate = json.dumps(number) + junk
    try:
        ok = isinstance(json.loads(candidate), (int, float)) and not re.search(r"\s", candidate)
    except ValueError:
        ok = False
    assert _accepts(dfa, candidate) == ok, candidate


def test_whitespace_modes():
    assert whitespace("compact") == ir.EMPTY
    dfa = compile_ir(whitespace("flexible", max_run=3))
    assert _accepts(dfa, " \n\t") and _accepts(dfa, "") and not _accepts(dfa, "    ")


def test_graph_node_orders_optional_members():
    """Members a?, b (required), c? in order, comma-separated: the Graph IR node."""
    comma = ir.literal(",")
    member = {0: ir.literal("a"), 1: ir.literal("b"), 2: ir.literal("c")}
    required = {1}
    edges = []
    for i in range(3):
        for first in (0, 1):
            src = i * 2 + first
            sep = ir.EMPTY if first else comma
            edges.append((src, (i + 1) * 2, ir.concat(sep, member[i])))
            if i not in required:
                edges.append((src, (i + 1) * 2 + first, ir.EMPTY))
    dfa = compile_ir(ir.Graph(8, 1, (6, 7), tuple(edges)))
    for text in ("b", "a,b", "b,c", "a,b,c"):
        assert _accepts(dfa, text), text
    for text in ("", "a", "c", "b,a", "ab", "a,,b", "a,b,", ",b"):
        assert not _accepts(dfa, text), text
