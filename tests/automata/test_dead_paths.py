"""automata/dead_paths.py: a call of a greedy rule that nothing may follow is dropped
(DeadReturns.live_calls), and so are the paths it leaves with no way to end, and the rules it
leaves deriving nothing (trim): no mask offers a token after which none can come."""

from __future__ import annotations

import pytest

import numpy as np

from constrain import Compiler, GrammarError, Matcher


@pytest.mark.parametrize("text, offered, not_offered", [
    ('start: A "b" | "c"\nA: /a(?!b)/', [b"c"], [b"a"]),  # A's end refuses the b that alone may follow it
    ('start: A "a" | "b"\nA: /a+/', [b"b"], [b"a", b"aa"]),  # A would read the a that alone may follow it
    ('start: (A "b" | "c") ";"\nA: /a(?!b)/', [b"c"], [b"a"]),
    ('start: A "b"?\nA: /a(?!b)/', [b"a"], [b"ab"]),  # kept: the text may end after A
    ('start: A N | "c"\nA: /a(?!b)/\nN: /[0-9]+/', [b"a", b"c"], [b"ab"]),  # kept: a terminal N may follow A
    ('start: A N | "c"\nA: /a(?![0-9])/\nN: /[0-9]+/', [b"c"], [b"a", b"a1"]),  # N starts with what A refuses
    ('start: A n | "c"\nn: "1" | n "2"\nA: /a(?![0-9])/', [b"c"], [b"a", b"a1"]),  # n inlined into start
    ('start: A e | "c"\ne: "1" | "(" e ")"\nA: /a(?![0-9])/', [b"a", b"c"], [b"a1"]),  # kept: a rule call (e), not judged
    ('start: A "b" | "c"\nA: /ab?c|a(?!b)/', [b"a", b"ac", b"c"], [b"abb"]),  # kept: A's end after ac lets b follow
    ('start: A "b" | "c"\nA: /ab(?!b)|a(?![bd])|ac(?!b)/', [b"c"], [b"a", b"ab"]),  # every end refuses b (one per state)
])
def test_a_terminal_that_nothing_may_follow_is_not_offered(llama3, text, offered, not_offered):
    """Such a call is dropped: its text would leave a mask of no token, EOS included, and Lark
    accepts no text through it either."""
    m = Matcher(Compiler(llama3).compile_lark(text))
    allowed = {llama3.token_bytes[t] for t in m.allowed_token_ids().tolist()}
    assert set(offered) <= allowed and not set(not_offered) & allowed
    assert all(t[:1] in (b"a", b"b", b"c") for t in allowed if t)


@pytest.mark.parametrize("text", [
    'start: "x" W W\nW: /[a-z]+/',  # (two names with nothing between them: the first takes every letter)
    'start: ")" x\nx: A A "b"\nA: /a+/',
    'start: "x" w\nw: W W | "(" w ")"\nW: /[a-z]+/',  # (w derives nothing: its recursion has no way out)
    'start: ")" (x)+\nx: x | /a+/ /a+/ y\ny: "b" | ("(")+ A x | x\nA: /b+a?/',  # (found by a fuzz: `)` then nothing)
])
def test_a_grammar_whose_every_text_runs_into_a_dead_call_accepts_nothing(llama3, text):
    """Before, `start: "x" W W` compiled and its mask offered `x`, then no token, not even EOS."""
    with pytest.raises(GrammarError, match="accepts no document at all"):
        Compiler(llama3).compile_lark(text)


@pytest.mark.parametrize("text, offered, not_offered", [
    ('start: "x" w | "y"\nw: W W | "(" w ")"\nW: /[a-z]+/', [b"y"], [b"x", b"xy"]),  # w derives nothing
    ('start: "x" w | "y"\nw: W W | "(" w ")" | "z"\nW: /[a-z]+/', [b"x", b"y", b"xz"], []),  # w does: kept
    ('start: "x" "(" W W ")" | "y"\nW: /[a-z]+/', [b"y"], [b"x", b"x("]),  # dead after the x, in one rule
])
def test_paths_into_a_dead_call_are_not_offered(llama3, text, offered, not_offered):
    m = Matcher(Compiler(llama3).compile_lark(text))
    allowed = {llama3.token_bytes[t] for t in m.allowed_token_ids().tolist()}
    assert set(offered) <= allowed and not set(not_offered) & allowed


DEAD_BRANCHES = 'start: (p | q)+\np: "a" w | "b"\nq: "(" p ")" | "c" W W\nw: W W | "[" w "]" | "d"\nW: /[a-z]+/'


def test_masked_walks_past_dead_branches_never_meet_an_empty_mask(llama3, masked_walk, byte_step_oracle, tmp_path):
    """Every token a mask offers has a continuation (masked_walk asserts a live state offers
    some token); masks equal the byte-step oracle, and a compile from the disk cache (whose
    rule set keeps the trimmed DFAs) offers the same."""
    grammar = Compiler(llama3).compile_lark(DEAD_BRANCHES)
    rng = np.random.default_rng(3)
    for _ in range(6):
        tokens = masked_walk(Matcher(grammar), llama3, rng, 16, {b"]", b")"})
        m = Matcher(grammar)
        for t in tokens:
            assert (_mask(m, llama3) == byte_step_oracle(grammar, m.state, llama3)).all()
            assert m.accept_token(t)
    first = Compiler(llama3, cache_dir=tmp_path).compile_lark(DEAD_BRANCHES)
    again = Compiler(llama3, cache_dir=tmp_path).compile_lark(DEAD_BRANCHES)
    for g in (first, again):
        m = Matcher(g)
        assert not _mask(m, llama3)[llama3.token_bytes.index(b"c")]  # (`c W W`: a dead call)
        assert not m.accept_token(llama3.token_bytes.index(b"c"))
        assert m.accept_token(llama3.token_bytes.index(b"(")) and m.accept_token(llama3.token_bytes.index(b"a"))
        assert (_mask(m, llama3) == byte_step_oracle(grammar, m.state, llama3)).all()


def _mask(m, vocab) -> np.ndarray:
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    m.fill_next_token_bitmask(bm)
    return np.unpackbits(bm.view(np.uint8), bitorder="little")[: vocab.size].astype(bool)
