"""FOLLOW sets: every byte that can follow a rule's return along real steps is in its set, and
recursion no longer makes them every byte."""

from __future__ import annotations

import random

import numpy as np
import pytest

from constrain import Compiler, grammars
from constrain.automata.return_checks import CHECK_PREFIX
from constrain.index.follow_sets import follow_sets


@pytest.mark.parametrize("name", ["sql", "python_expr", "json", "arithmetic"])
def test_the_bytes_after_each_return_along_random_texts_are_in_its_set(name, llama3):
    """Random byte walks of the rules' own semantics: wherever a top frame can return, what
    the frames below read next is in the top rule's FOLLOW set (a superset is all masks need).
    CHECK frames are pushed by returns, never called: no call edge gives them a FOLLOW set."""
    a = Compiler(llama3).compile_lark(grammars.load(name)).automaton
    rules, sem = a.rules, a.semantics
    rules.build_near_start(10**9)
    follow = follow_sets(rules)
    rng = random.Random(3)
    checked = 0
    for _ in range(40):
        state = sem.initial()
        for _ in range(60):
            for r, q, parent, _ in state:
                if parent is not None and rules.rule(r).dfa.accepting[q] and not rules.names[r].startswith(CHECK_PREFIX):
                    after = sem.next_bytes(frozenset({parent}))
                    assert all(follow[r][b] for b in after), (rules.names[r], sorted(b for b in after if not follow[r][b]))
                    checked += 1
            options = sorted(b for b in sem.next_bytes(state) if b < 0x80)
            if not options:
                break
            state = sem.step(state, rng.choice(options))
            if not state:
                break
    assert checked > 100


def test_a_number_in_sql_is_followed_by_keywords_not_by_a_dot(llama3):
    a = Compiler(llama3).compile_lark(grammars.load("sql")).automaton
    rules = a.rules
    rules.build_near_start(10**9)
    number = follow_sets(rules)[rules.names.index("NUMBER")]
    assert number[ord("E")] and number[ord("e")] and number[ord(" ")] and number[ord(")")]
    assert not number[ord(".")] and not number[ord("'")]
    assert not np.all(number)
