"""Merging learned tables: an automaton given another's tables (items remapped) masks exactly as
a fresh one does, along what either learned and beyond; merging twice adds nothing."""

from __future__ import annotations

import pytest

from constrain import Compiler, Matcher, grammars
from constrain.index.stack_index import StackTokenAutomaton
from constrain.index.warm_codec import learned
from constrain.index.warm_merge import merge_tables
from twin_automata import assert_same_rows  # tests/support

QUERIES = [
    "SELECT a, b FROM t WHERE b IN (SELECT b FROM s WHERE s.c = 'x') UNION ALL SELECT 1, 2;",
    "SELECT CASE WHEN price IS NOT NULL THEN price * (1.2 + tax) ELSE 0 END AS gross FROM products;",
    "SELECT u.name, COUNT(*) AS n FROM users AS u LEFT JOIN orders o ON o.user_id = u.id GROUP BY u.name;",
]


def _chars(vocab, text: str) -> list[int]:
    return [vocab.token_id(ch) for ch in text]


def _learn(a: StackTokenAutomaton, vocab, text: str) -> None:
    state = a.initial_state()
    for tid in _chars(vocab, text):
        a.mask_row(state)
        state = a.advance(state, vocab.token_bytes[tid])


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


def test_merged_tables_mask_as_a_fresh_automaton(compiler, llama3):
    rules = compiler.compile_lark(grammars.load("sql")).automaton.rules
    make = lambda: StackTokenAutomaton(rules, compiler.index, compiler.limits)  # noqa: E731
    into, other, cold = make(), make(), make()
    _learn(into, llama3, QUERIES[0])
    _learn(other, llama3, QUERIES[1])
    n_into, n_items = learned(into), len(into.summaries.items)
    added = merge_tables(into, other)
    assert 0 < added <= learned(other) and learned(into) == n_into + added
    assert len(into.summaries.items) > n_items  # (the other's items, interned anew)
    assert merge_tables(into, other) == 0
    given = len(into.summaries)
    for text in QUERIES:
        assert_same_rows(into, cold, llama3, _chars(llama3, text), text)
    assert len(into.summaries) - given < len(cold.summaries)  # (it used what it was given)
