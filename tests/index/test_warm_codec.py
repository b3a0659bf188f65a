"""Warm records: an automaton given another's learned tables masks exactly as a fresh one does,
re-encodes to the same record, and a record that does not fit is refused whole."""

from __future__ import annotations

import numpy as np
import pytest

from constrain import Compiler, Matcher, grammars
from constrain.index.stack_index import StackTokenAutomaton
from constrain.index.warm_codec import decode_warm_into, encode_warm, learned
from twin_automata import assert_same_rows  # tests/support

QUERIES = [
    "SELECT a, b FROM t WHERE b IN (SELECT b FROM s WHERE s.c = 'x') UNION ALL SELECT 1, 2;",
    "SELECT CASE WHEN price IS NOT NULL THEN price * (1.2 + tax) ELSE 0 END AS gross FROM products;",
    "SELECT u.name, COUNT(*) AS n FROM users AS u LEFT JOIN orders o ON o.user_id = u.id GROUP BY u.name;",
]


def _mask(matcher, vocab) -> np.ndarray:
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(bm)
    return bm


def _learn(grammar, vocab, texts) -> None:
    for text in texts:
        m = Matcher(grammar)
        for tid in _chars(vocab, text):
            _mask(m, vocab)
            assert m.accept_token(tid)


def _chars(vocab, text: str) -> list[int]:
    return [vocab.token_id(ch) for ch in text]


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.fixture(scope="module")
def learned_sql(compiler, llama3):
    """An SQL grammar that has masked the first query character by character."""
    g = compiler.compile_lark(grammars.load("sql"))
    _learn(g, llama3, QUERIES[:1])
    return g


def _fresh(g, compiler) -> StackTokenAutomaton:
    return StackTokenAutomaton(g.automaton.rules, compiler.index, compiler.limits)


def _record(g):
    header, arrays = encode_warm(g.automaton)
    return header, {k: v.copy() for k, v in arrays.items()}


def test_a_warm_automaton_masks_as_a_fresh_one(learned_sql, compiler, llama3):
    """Along queries the learned one met and did not: equal masks at every character, and the
    warm one computes fewer summaries (it starts with those it was given)."""
    header, arrays = _record(learned_sql)
    warm = _fresh(learned_sql, compiler)
    decode_warm_into(warm, header, arrays)
    assert learned(warm) == learned(learned_sql.automaton) > 0
    given = len(warm.summaries)
    cold = _fresh(learned_sql, compiler)
    for text in QUERIES:
        assert_same_rows(warm, cold, llama3, _chars(llama3, text), text)
    assert len(warm.summaries) - given < len(cold.summaries)


def test_a_decoded_record_encodes_to_itself(learned_sql, compiler):
    header, arrays = _record(learned_sql)
    again = _fresh(learned_sql, compiler)
    decode_warm_into(again, header, arrays)
    header2, arrays2 = encode_warm(again)
    assert header2 == header
    assert arrays2.keys() == arrays.keys()
    for k in arrays:
        assert np.array_equal(arrays[k], arrays2[k]), k


def _blob_range(header, name):
    blob, start, shape = header["layout"][name]
    return blob, start, start + int(np.prod(shape))


@pytest.mark.parametrize(
    "name, value",
    [
        ("item_nodes", 10**9),  # a trie node past the trie: a numba walk would read past it
        ("walk_nodes", -1),
        ("inner_nodes", 10**9),
        ("summary_keys", 10**6),  # a rule (or state, or item) that does not exist
        ("summary_pops", 10**6),
        ("summary_parts", -3),
        ("pool_idx", 10**7),  # a word past the row
        ("narrow_to", 10**6),
        ("inner_states", 10**5),
    ],
)
def test_out_of_range_indices_are_refused_and_change_nothing(learned_sql, compiler, name, value):
    header, arrays = _record(learned_sql)
    blob, i, j = _blob_range(header, name)
    if i == j:
        pytest.skip(f"no {name} in this record")
    arrays[blob][i + (j - i) // 2] = value
    target = _fresh(learned_sql, compiler)
    with pytest.raises(ValueError):
        decode_warm_into(target, header, arrays)
    assert learned(target) == 0 and len(target.summaries.items) == 1


def test_items_whose_nodes_are_not_ascending_are_refused(learned_sql, compiler):
    header, arrays = _record(learned_sql)
    blob, i, j = _blob_range(header, "item_off")
    offsets = arrays[blob][i:j]
    sizes = np.diff(offsets)
    k = int(np.flatnonzero(sizes >= 2)[0])  # (an item of two nodes or more: swap its first two)
    blob_n, n0, _ = _blob_range(header, "item_nodes")
    a, b = n0 + int(offsets[k]), n0 + int(offsets[k]) + 1
    arrays[blob_n][[a, b]] = arrays[blob_n][[b, a]]
    with pytest.raises(ValueError, match="ascending"):
        decode_warm_into(_fresh(learned_sql, compiler), header, arrays)


def test_offsets_that_do_not_add_up_are_refused(learned_sql, compiler):
    header, arrays = _record(learned_sql)
    blob, i, j = _blob_range(header, "summary_parts_off")
    arrays[blob][j - 1] += 1
    with pytest.raises(ValueError, match="offsets"):
        decode_warm_into(_fresh(learned_sql, compiler), header, arrays)


def test_a_record_of_another_grammar_or_a_used_automaton_is_refused(learned_sql, compiler, llama3):
    header, arrays = _record(learned_sql)
    other = compiler.compile_lark(grammars.load("arithmetic"))
    with pytest.raises(ValueError, match="another"):
        decode_warm_into(_fresh(other, compiler), header, arrays)
    used = _fresh(learned_sql, compiler)
    used.mask_row(used.initial_state())
    with pytest.raises(ValueError, match="computed masks already"):
        decode_warm_into(used, header, arrays)
    with pytest.raises(ValueError, match="format"):
        decode_warm_into(_fresh(learned_sql, compiler), {**header, "format": 0}, arrays)


@pytest.mark.parametrize("name", ["json", "arithmetic", "csv", "python_expr", "sql", "tool_call"])
def test_every_shipped_grammar_round_trips_along_random_walks(name, compiler, llama3, masked_walk):
    """Tables learned along random masked walks, given to a fresh automaton: its rows equal a
    cold one's along other walks (the walks are replayed on both), and it re-encodes to the
    same record."""
    g = compiler.compile_lark(grammars.load(name))
    rng = np.random.default_rng(7)
    for _ in range(3):
        masked_walk(Matcher(g), llama3, rng, 30, {b")", b"]", b"}", b";", b"\n"})
    header, arrays = _record(g)
    warm, cold = _fresh(g, compiler), _fresh(g, compiler)
    decode_warm_into(warm, header, arrays)
    h2, a2 = encode_warm(warm)
    assert h2 == header and all(np.array_equal(arrays[k], a2[k]) for k in arrays)
    for _ in range(3):  # (walks drawn from `g`'s masks: the automata compared are made apart)
        tokens = masked_walk(Matcher(g), llama3, rng, 30, {b")", b"]", b"}", b";", b"\n"})
        assert_same_rows(warm, cold, llama3, tokens, (name, tokens))


def test_root_items_with_forbidden_first_bytes_round_trip(compiler, llama3):
    """A greedy terminal's return forbids the bytes it could read on: root items carry them
    as 256 bits (four words); python_expr's names and numbers make some."""
    g = compiler.compile_lark(grammars.load("python_expr"))
    _learn(g, llama3, ["f(x_1, 2.5e3) + y[0] * 2 if not z else lambda a, b: a or b"])
    roots = [f for _, nodes, f in g.automaton.summaries.items.entries() if nodes is None]
    assert any(f for f in roots)
    header, arrays = _record(g)
    warm = _fresh(g, compiler)
    decode_warm_into(warm, header, arrays)
    assert [e[2] for e in warm.summaries.items.entries() if e[1] is None] == roots


def test_checked_items_round_trip(compiler, llama3):
    """Node items with a check on the byte after theirs (checked_items.py: a return on condition
    of the next byte, template text before `{{`) carry it as a fifth word, the end's bit set."""
    g = compiler.compile_lark('start: (TEXT | tag)*\ntag: "{{" NAME "}}"\nNAME: /[a-z]+/\nTEXT: /([^{]|\\{(?!\\{))+/')
    _learn(g, llama3, ["Hello {{name}}, a {b} {{x}}"])
    checks = [f for _, nodes, f in g.automaton.summaries.items.entries() if nodes is not None and f]
    assert checks
    header, arrays = _record(g)
    warm, cold = _fresh(g, compiler), _fresh(g, compiler)
    decode_warm_into(warm, header, arrays)
    assert [f for _, nodes, f in warm.summaries.items.entries() if nodes is not None and f] == checks
    assert_same_rows(warm, cold, llama3, _chars(llama3, "Hi {{a}} {{b}}"), "checked")
