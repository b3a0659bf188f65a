"""Frame summaries: masks chained from per-frame summaries equal the byte-step oracle, warm
caches give the masks a fresh automaton gives, and the walk-free shortcuts (narrowed items, unread nodes) equal what a walk would find."""

from __future__ import annotations

import numpy as np
import pytest

from constrain import Compiler, Matcher, grammars
from constrain.index.frame_summaries import EMPTY, ROOT

from rule_states import built_states  # tests/support

QUERIES = [
    "SELECT a, b FROM t WHERE b IN (SELECT b FROM s WHERE s.c = 'x') UNION ALL SELECT 1, 2;",
    "SELECT CASE WHEN price IS NOT NULL THEN price * (1.2 + tax) ELSE 0 END AS gross FROM products;",
]


def _ours(matcher, vocab) -> np.ndarray:
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(bm)
    return np.unpackbits(bm.view(np.uint8), bitorder="little")[: vocab.size].astype(bool)


@pytest.fixture(scope="module")
def sql(llama3):
    return Compiler(llama3).compile_lark(grammars.load("sql"))


def _tokens(vocab, text: str) -> list[int]:
    return [vocab.token_id(ch) for ch in text]


@pytest.mark.slow  # (its time is the Python oracle's; test_pushdown_walk covers the numba walks bounds-checked)
def test_sql_masks_equal_the_byte_step_oracle(sql, llama3, byte_step_oracle):
    """At every character of a nested query (one stack per reading of an ambiguous prefix,
    many frames shared between them)."""
    m = Matcher(sql)
    text = QUERIES[0]
    for k, tid in enumerate(_tokens(llama3, text)[:-1]):
        assert m.accept_token(tid), k
        if k % 6 == 0 or len(m._history[-1]) > 8:  # (every sixth character, and where readings pile up)
            assert np.array_equal(_ours(m, llama3), byte_step_oracle(sql, m._history[-1], llama3)), text[: k + 1]


def test_warm_caches_give_the_masks_of_a_fresh_automaton(llama3):
    """Summaries, tops and what lies below them are cached across positions and documents: a
    second query on warm caches gets exactly the masks a cold compile gets."""
    warm = Compiler(llama3).compile_lark(grammars.load("sql"))
    first = Matcher(warm)
    for tid in _tokens(llama3, QUERIES[0]):
        _ours(first, llama3)
        assert first.accept_token(tid)
    cached = len(warm.automaton.summaries)
    m_warm = Matcher(warm)
    cold = Compiler(llama3).compile_lark(grammars.load("sql"))
    m_cold = Matcher(cold)
    for k, tid in enumerate(_tokens(llama3, QUERIES[1])):
        assert np.array_equal(_ours(m_warm, llama3), _ours(m_cold, llama3)), k
        assert m_warm.accept_token(tid) and m_cold.accept_token(tid), k
    assert cached and len(warm.automaton.summaries) > cached


def test_narrowed_items_keep_only_the_nodes_a_reader_reads(sql):
    a = sql.automaton
    fs = a.summaries
    trie = a.tries[0]
    rules = a.rules
    for r, q in built_states(rules):
        starts = fs.first.starts(r, q)
        if starts is None:
            continue
        nodes = np.arange(1, 400, dtype=np.int32)
        item = fs.items.nodes(0, nodes)
        got = fs._narrowed(r, q, item)
        want = nodes[starts[trie.byte[nodes]]]
        if not want.size:
            assert got == EMPTY
        else:
            assert np.array_equal(fs.items.get(got)[1], want)
        assert fs._narrowed(r, q, ROOT) == ROOT  # (the root is never narrowed)


@pytest.mark.parametrize("source", ["sql", "json_schema"])
def test_unread_nodes_are_the_boundaries_a_walk_records(source, sql, llama3):
    """The shortcut for nodes a state reads none of gives the walk's own boundaries."""
    if source == "sql":
        g = sql
    else:
        schema = {"type": "object", "properties": {"s": {"type": "string"}, "t": {"type": "array", "items": {"type": "string"}}}}
        g = Compiler(llama3).compile_json_schema(schema)
        assert Matcher(g).accept_tokens(_tokens(llama3, '{"s":"z","t":["x","y"]}')) == 23
    a = g.automaton
    a.rules.build_near_start(10**9)
    fs = a.summaries
    trie = a.tries[0]
    rules = a.rules
    checked = 0
    for r, q in built_states(rules):
        reads = a.reads(r, q)
        nodes = np.array([n for n in range(1, 3000) if not reads[trie.byte[n]]][:200], dtype=np.int32)
        if not nodes.size:
            continue
        words = np.zeros(trie.n_words, dtype=np.uint32)
        b_nodes, b_states = a.walk(r, q, nodes, trie, words)
        short = fs._unread(r, q, nodes, trie.byte[nodes])
        got = np.concatenate([g[1] for g in short.groups]) if short.groups else nodes[:0]
        assert not words.any()
        assert np.array_equal(np.sort(got), np.sort(b_nodes)), (rules.names[r], q)
        assert all(s == q for s in b_states.tolist())
        checked += 1
    assert checked > 10


def test_items_whose_closure_reads_some_nodes_walk_those_only(sql):
    """A frame at nodes some of which its closure reads walks those alone and pops at the rest
    where it can pop: the summary a walk from every node gives."""
    a = sql.automaton
    a.rules.build_near_start(10**9)
    fs = a.summaries
    trie = a.tries[0]
    mixed = 0
    for r, q in built_states(a.rules):
        closure = fs.first.closure(r, q)
        nodes = np.arange(1, 2500, 7, dtype=np.int32)
        if closure is None or closure[0][trie.byte[nodes]].all():
            continue
        mixed += bool(closure[0][trie.byte[nodes]].any())
        summary = fs._walked((r, q, fs.items.nodes(0, nodes)), float("inf"))
        walked = fs.pushdown.read(r, q, trie, nodes, float("inf"))
        if walked is None:  # (a return on condition met another: not walked)
            assert summary is None
            continue
        words, pops, checked_pops = walked
        got = np.zeros(trie.n_words, dtype=np.uint32)
        summary.or_into(got)
        assert np.array_equal(got, words), (a.rules.names[r], q)
        got_pops = [fs.items.get(p)[1].tolist() for p in summary.pops if not fs.items.get(p)[2]]
        assert got_pops == ([] if pops is None else [pops.tolist()]), (a.rules.names[r], q)
        got_checked = sorted(n for p in summary.pops if fs.items.get(p)[2] for n in fs.items.get(p)[1].tolist())
        assert got_checked == ([] if checked_pops is None else sorted(set(checked_pops[0].tolist()))), (a.rules.names[r], q)
    assert mixed > 3


def test_masks_after_greedy_returns_equal_the_byte_step_oracle(llama3, byte_step_oracle):
    """After a terminal that could read on (`<` before `=` or `>`, a name, a number), the frames
    below read from the root less those bytes: their summaries are the whole root's, less what
    starts with a forbidden byte (_without_first_bytes), here met both before and after the
    whole-root summaries exist."""
    sql = Compiler(llama3).compile_lark(grammars.load("sql"))
    runs = Compiler(llama3).compile_lark('start: A B ";" A B\nA: /a+/\nB: "ab" | "c" | "(" A ")"\n')
    for g, text in [(sql, "SELECT a FROM t WHERE a <"), (sql, "SELECT a FROM t WHERE b <"),
                    (sql, "SELECT x FROM t WHERE a < b AND c >= 12"), (runs, "a"), (runs, "aac;a"), (runs, "a(a")]:
        m = Matcher(g)
        ids = _tokens(llama3, text)
        assert m.accept_tokens(ids) == len(ids)
        assert np.array_equal(_ours(m, llama3), byte_step_oracle(g, m._history[-1], llama3)), text
