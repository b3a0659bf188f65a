"""Rules split where one DFA would be too large (split_rules.py): the grammar compiles, reads
the texts Lark's Earley parser reads, and masks equal the byte-step oracle; what no split helps
still raises LimitExceededError, naming the rule."""

import itertools

import lark
import numpy as np
import pytest

from constrain import Compiler, LimitExceededError, Limits, Matcher

# Ignored text that overlaps the terminals around it: r1's copies side by side (r1 is inlined
# into start five times) took the subset construction past 100,000 states.
COPIES = r'''
start: r1 "," "a" r1 ~ 0..3
r1: (/b[ab]/ "b" "ab")* "a" "a"
%ignore /[,b]/
'''
# One rule, nothing inlined: with a low limit its terminals become rules of their own.
ONE_RULE = r'''
start: (/b[ab]/ "b" "ab")* "a" "a" "," (/b[ab]/ "b" "ab")* "a" "a"
%ignore /[,b]/
'''


def _same_texts_as_lark(grammar, text: str, lark_accepts, longest: int) -> int:
    parser = lark.Lark(text, parser="earley", lexer="dynamic")
    differ, accepted = [], 0
    for n in range(longest + 1):
        for chars in itertools.product("ab,", repeat=n):
            s = "".join(chars)
            mine = grammar.accepts(s.encode())
            accepted += mine
            if mine != lark_accepts(parser, s):
                differ.append((s, mine))
    assert not differ, differ[:10]
    return accepted


def test_copies_of_a_rule_that_explode_together_keep_frames_of_their_own(llama3, lark_accepts):
    grammar = Compiler(llama3).compile_lark(COPIES)  # (LimitExceededError before)
    assert "r1" in grammar.automaton.rules.names
    assert _same_texts_as_lark(grammar, COPIES, lark_accepts, 7) > 100


def test_a_rule_whose_own_terminals_explode_reads_them_as_calls(llama3, lark_accepts):
    grammar = Compiler(llama3, limits=Limits(max_dfa_states=10)).compile_lark(ONE_RULE)
    assert any(name.endswith("%use") for name in grammar.automaton.rules.names)
    assert _same_texts_as_lark(grammar, ONE_RULE, lark_accepts, 7) > 10
    unsplit = Compiler(llama3).compile_lark(ONE_RULE)
    assert not any(name.endswith("%use") for name in unsplit.automaton.rules.names)


@pytest.mark.parametrize("text, limit", [(COPIES, 20), (ONE_RULE, 10)])
def test_masks_of_split_rules_equal_the_byte_step_oracle(text, limit, llama3, byte_step_oracle, masked_walk):
    grammar = Compiler(llama3, limits=Limits(max_dfa_states=limit)).compile_lark(text)
    rng = np.random.default_rng(7)
    bm = np.zeros((llama3.size + 31) // 32, dtype=np.int32)
    for _ in range(3):
        tokens = masked_walk(Matcher(grammar), llama3, rng, 12, {b"a"})
        matcher = Matcher(grammar)
        for token in [*tokens, None]:
            matcher.fill_next_token_bitmask(bm)
            mask = np.unpackbits(bm.view(np.uint8), bitorder="little")[: llama3.size].astype(bool)
            oracle = byte_step_oracle(grammar, matcher.state, llama3)
            assert (mask == oracle).all(), np.flatnonzero(mask != oracle)[:10]
            if token is not None:
                assert matcher.accept_token(token)


def test_a_rule_too_large_even_split_raises_naming_it(llama3):
    with pytest.raises(LimitExceededError, match="max_dfa_states") as caught:
        Compiler(llama3, limits=Limits(max_dfa_states=5)).compile_lark(ONE_RULE)
    assert caught.value.rule == "start" and "in rule 'start'" in str(caught.value)


def test_a_terminal_too_large_alone_still_raises(llama3):
    with pytest.raises(LimitExceededError, match="max_dfa_states"):
        Compiler(llama3, limits=Limits(max_dfa_states=50)).compile_lark('start: A "!"\nA: /[ab]*a[ab]{8}/')


def test_splits_stop_at_their_bound(llama3, monkeypatch):
    """Each build that meets the limit costs its time (~1 s at 100,000 states): at most
    MAX_SPLITS more, then the limit's error."""
    import constrain.grammar.lark.split_rules as split_rules

    monkeypatch.setattr(split_rules, "MAX_SPLITS", 0)
    with pytest.raises(LimitExceededError, match="max_dfa_states") as caught:
        Compiler(llama3, limits=Limits(max_dfa_states=20)).compile_lark(COPIES)
    assert caught.value.rule is not None  # (split again, the same grammar compiles: see above)
