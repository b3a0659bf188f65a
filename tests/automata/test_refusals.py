"""automata/refusals.py: sets of bytes a greedy rule's end refuses, and their checks."""

from __future__ import annotations

import numpy as np
import pytest

from constrain.automata import ir
from constrain.automata.end_window import windowed
from constrain.automata.refusals import END_OF_TEXT, bits_of, byte_row, check_refused, refusals
from constrain.automata.rules import compile_rules
from constrain.errors import GrammarError
from constrain.limits import Limits


def test_a_set_of_bytes_as_a_row_ignores_the_end():
    row = byte_row((1 << 0) | (1 << 97) | (1 << 255) | END_OF_TEXT)
    assert row.shape == (256,) and np.flatnonzero(row).tolist() == [0, 97, 255]
    assert bits_of(row) == (1 << 0) | (1 << 97) | (1 << 255) and bits_of(np.zeros(256, dtype=np.bool_)) == 0


def test_one_set_or_one_per_state():
    assert refusals(np.uint64(5)) == 5 and type(refusals(np.uint64(5))) is int
    assert refusals([1, np.int64(2)]) == (1, 2)


def test_refusals_per_state_follow_the_rule_s_own_dfa():
    dfa, per_state = windowed("(?u)ab?c|a(?!b)", Limits())
    check_refused("A", per_state, True, ir.Embedded(dfa))
    rules = compile_rules({"start": ir.RuleRef("A"), "A": ir.Embedded(dfa)}, "start", Limits(), {"A"}, {"A": per_state})
    assert rules.refused_at(1, dfa.walk(0, b"a")) == 1 << ord("b") and rules.refused_at(1, dfa.walk(0, b"ac")) == 0
    with pytest.raises(GrammarError, match="only a greedy rule"):
        check_refused("A", 1, False, ir.Embedded(dfa))
    with pytest.raises(GrammarError, match="only a greedy rule"):
        check_refused("A", END_OF_TEXT << 1, True, ir.Embedded(dfa))
    with pytest.raises(GrammarError, match="one set per state"):
        check_refused("A", per_state[:-1], True, ir.Embedded(dfa))  # (a state count that is not the DFA's)
    with pytest.raises(GrammarError, match="one set per state"):
        check_refused("A", (0, 1), True, ir.literal("ab"))  # (no DFA of its own: its states would be others)
