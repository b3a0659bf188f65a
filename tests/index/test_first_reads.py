"""FirstReads (index/first_reads.py) against the pushdown walk: from nodes whose byte nothing in
a frame's closure reads, the walk reads nothing and pops at every node exactly where the
closure says the frame can return first, callees that can return at once included; `starts`
and `reachable` are read off the same closure."""

from __future__ import annotations

import numpy as np
import pytest

from constrain import Compiler, grammars

from rule_states import built_states  # tests/support


NULLABLE_CALLEES = r"""
start: "x" opt "y" opt tail
opt: ("[" opt "]")?
tail: "z" | "(" start ")"
"""


@pytest.mark.parametrize("source", ["sql", "nullable"])
def test_frames_whose_closure_reads_no_byte_of_an_item_pop_as_a_walk_finds(source, llama3):
    """The walk-free summary (nothing in the frame's closure reads any node's byte: it reads
    nothing and pops at every node, or at none) is the pushdown walk's own, callees that can
    return at once (`opt`) included."""
    g = Compiler(llama3).compile_lark(grammars.load("sql") if source == "sql" else NULLABLE_CALLEES)
    a = g.automaton
    a.rules.build_near_start(10**9)
    fs = a.summaries
    trie = a.tries[0]
    rules = a.rules
    checked = nullable_calls = 0
    for r, q in built_states(rules):
        closure = fs.first.closure(r, q)
        if closure is None:
            continue
        nullable_calls += any(fs.first.closure(rules.same[k], 0)[1] for k, _ in rules.rule(r).calls[q])
        nodes = np.array([n for n in range(1, 3000) if not closure[0][trie.byte[n]]][:200], dtype=np.int32)
        if not nodes.size:
            continue
        words, pops, checked_pops = fs.pushdown.read(r, q, trie, nodes, float("inf"))
        assert not words.any() and checked_pops is None, (rules.names[r], q)
        assert (pops is not None and np.array_equal(pops, nodes)) == closure[1], (rules.names[r], q)
        assert pops is None or np.array_equal(pops, nodes), (rules.names[r], q)
        checked += 1
    assert checked > 5
    assert source == "sql" or nullable_calls


def test_starts_and_reachable_are_read_off_the_closure(llama3):
    fs = Compiler(llama3).compile_lark(NULLABLE_CALLEES).automaton.summaries
    rules = fs.a.rules
    rules.build_near_start(10**9)
    for r, q in built_states(rules):
        closure = fs.first.closure(r, q)
        starts, reachable = fs.first.starts(r, q), fs.first.reachable(r, q)
        if closure is None:
            assert starts is None and reachable.all()
            continue
        assert np.array_equal(reachable, closure[0])
        assert (starts is None) == closure[1]
        assert starts is None or np.array_equal(starts, closure[0])
        assert (fs.a.reads(r, q) <= reachable).all()
