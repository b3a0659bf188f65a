"""The direct "every string but these keys" DFA equals the difference of automata it replaces."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import compile_ir, ir
from constrain.automata.algebra import difference
from constrain.errors import EmptyLanguageError
from constrain.grammar.json_schema.containers import _any_string_dfa
from constrain.grammar.json_schema.lexical import string_literal
from constrain.grammar.json_schema.spelled_keys import other_keys_dfa

# Raw and escaped characters, a surrogate pair, a lone surrogate (no spelling), hex letters.
CHARS = ["a", "b", "A", "u", "D", "0", " ", '"', "\\", "/", "\n", "\x00", "\x1f", "\x7f", "é", "€", "😀",
         "\U0010ffff", "\ud800"]
keys = st.lists(st.text(st.sampled_from(CHARS), max_size=4), min_size=1, max_size=5, unique=True)


def _same_language(x, y) -> bool:
    for p, q in ((x, y), (y, x)):
        try:
            difference(p, q)
            return False
        except EmptyLanguageError:
            pass
    return True


def _by_difference(named):
    any_string = _any_string_dfa()
    try:
        return difference(any_string, compile_ir(ir.alt(*(string_literal(k) for k in named))))
    except EmptyLanguageError:  # only keys no JSON text spells
        return any_string


def _same_arrays(x, y) -> bool:
    return all(np.array_equal(getattr(x, f), getattr(y, f)) for f in ("byte_classes", "table", "accepting"))


@settings(max_examples=150, deadline=None)
@given(keys)
def test_is_the_minimal_dfa(named):
    """Keys that end alike share their last trie nodes: the result is minimal, numbered as
    minimize numbers it (the very arrays of the difference of automata)."""
    assert _same_arrays(other_keys_dfa(_any_string_dfa(), tuple(sorted(set(named)))), _by_difference(named))


@settings(max_examples=150, deadline=None)
@given(keys)
def test_equals_the_difference_of_automata(named):
    assert _same_language(other_keys_dfa(_any_string_dfa(), tuple(named)), _by_difference(named))


def test_named_keys_in_every_spelling_are_excluded():
    dfa = other_keys_dfa(_any_string_dfa(), ("jd", "a/b", "😀", ""))
    for text in ['"jd"', '"\\u006ad"', '"\\u006Ad"', '"a\\/b"', '"\\ud83d\\ude00"', '"\\uD83D\\uDE00"', '""']:
        assert not dfa.accepts(text.encode()), text
    for text in ['"Jd"', '"\\u004ad"', '"jdx"', '"j"', '"a/c"', '"\\ud83d\\ude01"', '" "']:
        assert dfa.accepts(text.encode()), text
