"""The chaining's tables: masks chained by the numba loop equal those chained in Python (fresh
and from a warm record); a summary added after a snapshot is not in it; frames get ids parents
first; a record's tables find each narrowed item's summary."""

from __future__ import annotations

import numpy as np
import pytest

import constrain.index.chain_tables as chain_tables
import constrain.index.stack_index as stack_index
from constrain import Compiler, Matcher
from constrain.grammars import load
from constrain.index.chain_tables import ChainTables
from constrain.index.chain_walk import TOP, chain, find
from constrain.index.summary import Summary

RECURSIVE = r"""
start: value
?value: list | pair | NAME | NUMBER
list: "[" [value ("," value)*] "]"
pair: "(" value ":" value ")"
NAME: /[a-z_]+/
%import common.NUMBER
%ignore " "
"""


def _rows(grammar, vocab, walks):
    """Each walk's masks, as bytes, on one matcher per walk."""
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    out = []
    for tokens in walks:
        m = Matcher(grammar)
        for t in tokens:
            m.fill_next_token_bitmask(bm)
            out.append(bm.tobytes())
            assert m.accept_token(t)
    return out


def _walks(grammar, vocab, masked_walk, n, seed):
    rng = np.random.default_rng(seed)
    return [masked_walk(Matcher(grammar), vocab, rng, 40, {b"]", b")", b";", b"}"}) for _ in range(n)]


MERGED = 'start: e\ne: ("a" | "(" e ")" | NAME) e? e?\nNAME: /[b-d]+/\n%ignore " "'  # (stacks merge: chained in Python)


@pytest.mark.parametrize("name", ["sql", "json", "recursive", "merged"])
def test_masks_chained_in_numba_equal_those_chained_in_python(name, llama3, masked_walk, monkeypatch):
    text = {"recursive": RECURSIVE, "merged": MERGED}.get(name) or load(name)
    walks = _walks(Compiler(llama3).compile_lark(text), llama3, masked_walk, 6, 1)
    monkeypatch.setattr(stack_index, "MAX_ROWS", 2)  # (positions met again are computed again: their
    rows = {}  # summaries missed a second time are added, and the loop chains them the third time)
    for in_numba in (False, True):
        g = Compiler(llama3).compile_lark(text)
        g.automaton.chain_in_numba = in_numba
        rows[in_numba] = _rows(g, llama3, walks * 3)
    assert rows[True] == rows[False]
    assert g.automaton.chain_tables.n_summaries > 0  # (the loop was given summaries to chain)


def test_masks_from_a_warm_record_equal_those_of_a_fresh_compile(llama3, masked_walk, tmp_path):
    text = load("sql")
    taught_on = _walks(Compiler(llama3).compile_lark(text), llama3, masked_walk, 4, 2)
    taught = Compiler(llama3, cache_dir=tmp_path).compile_lark(text)
    _rows(taught, llama3, taught_on)
    taught.warm.store()
    later = Compiler(llama3, cache_dir=tmp_path).compile_lark(text)
    tables = later.automaton.chain_tables
    assert later.automaton.chain_in_numba  # (a record's tables are what the loop pays off on)
    assert tables.n_summaries > 1  # (the record's summaries, before any mask)
    walks = taught_on + _walks(Compiler(llama3).compile_lark(text), llama3, masked_walk, 3, 3)
    assert _rows(later, llama3, walks) == _rows(Compiler(llama3).compile_lark(text), llama3, walks)


def test_a_record_finds_each_narrowed_items_summary(llama3, masked_walk, tmp_path):
    text = load("sql")
    taught = Compiler(llama3, cache_dir=tmp_path).compile_lark(text)
    _rows(taught, llama3, _walks(taught, llama3, masked_walk, 3, 4))
    taught.warm.store()
    later = Compiler(llama3, cache_dir=tmp_path).compile_lark(text).automaton
    s, tables = later.summaries, later.chain_tables
    _, _, arrays = tables.snapshot()
    checked = 0
    for (rep, q, item), to in s._narrow.items():
        want = Summary((), ()) if to < 0 else s._memo.get((rep, q, to))
        sid = find(tables.table, rep, q, item)
        if want is None:
            assert sid < 0
            continue
        words = np.zeros(tables.n_words, dtype=np.uint32)
        frames = np.array([[rep, q, -1]], dtype=np.int32)  # (no parent: its pops are not followed)
        assert chain(np.array([[0, item]], dtype=np.int64), frames, *arrays[1:], words, np.zeros((1, 2), dtype=np.int64)) == 0
        expected = np.zeros(tables.n_words, dtype=np.uint32)
        want.or_into(expected)
        assert np.array_equal(words, expected)
        u, v = tables.starts[sid, 1], tables.starts[sid + 1, 1]
        assert tuple(tables.pops[u:v].tolist()) == want.pops
        checked += 1
    assert checked > 50


def test_a_summary_added_after_a_snapshot_is_not_in_it():
    t = ChainTables(4)
    shared = np.array([1, 0, 0, 2], dtype=np.uint32)
    t.add(1, 2, TOP, Summary((shared, (np.array([1]), np.array([8], dtype=np.uint32))), (5, 6)))
    before = t.snapshot()[2]
    t.add(1, 2, 5, Summary((shared,), ()))
    t.add(1, 2, 5, Summary((), ()))  # (a key added twice keeps its first summary)
    after = t.snapshot()[2]
    assert (before[2], after[2]) == (1, 2) and t.n_parts == 2 and t.n_dense == 1  # (`shared` copied once)
    frames = np.array([[1, 2, -1], [1, 2, 0]], dtype=np.int32)  # frame 1 over frame 0, both rule 1 state 2
    words, misses = np.zeros(4, dtype=np.uint32), np.zeros((4, 2), dtype=np.int64)
    at = np.array([[1, TOP]], dtype=np.int64)
    assert chain(at, frames, *before[1:], words, misses) == 2  # (items 5 and 6 on frame 0)
    assert sorted(map(tuple, misses[:2].tolist())) == [(0, 5), (0, 6)]
    assert words.tolist() == [1, 8, 0, 2]
    words[:] = 0
    assert chain(at, frames, *after[1:], words, misses) == 1 and misses[0].tolist() == [0, 6]


def test_many_summaries_rehash_and_grow_every_array():
    t = ChainTables(2)
    for k in range(3000):
        t.add(k % 7, k, k, Summary(((np.array([k % 2]), np.array([k + 1], dtype=np.uint32)),), (k, k + 1)))
    _, _, arrays = t.snapshot()
    for k in (0, 1234, 2999):
        words = np.zeros(2, dtype=np.uint32)
        frames = np.array([[k % 7, k, -1]], dtype=np.int32)
        assert chain(np.array([[0, k]], dtype=np.int64), frames, *arrays[1:], words, np.zeros((1, 2), dtype=np.int64)) == 0
        assert words[k % 2] == k + 1 and words[1 - k % 2] == 0


def test_frames_get_ids_parents_first_and_a_full_table_starts_a_new_generation(monkeypatch):
    t = ChainTables(1)
    same = [0, 1, 1, 3]  # (rule 2 shares rule 1's class)
    bottom = (0, 4, None, 0)
    middle = (2, 5, bottom, 1)
    top = (3, 6, middle, 2)
    assert t.frame_id(top, same) == 2
    assert t.frames[:3].tolist() == [[0, 4, -1], [1, 5, 0], [3, 6, 1]]
    assert t.frame_id(middle, same) == 1 and t.frame_objects[1] is middle
    monkeypatch.setattr(chain_tables, "MAX_FRAMES", 3)
    old = t.frames
    assert t.frame_id((3, 7, middle, 2), same) == 2 and t.generation == 1
    assert t.frames is not old  # (a snapshot taken before keeps its rows)


def test_a_frame_over_a_merged_frame_has_no_id():
    """A merged frame's parents are several (stack_semantics.py): the loop's frames have one."""
    from constrain.automata.stack_semantics import Parents

    t = ChainTables(1)
    one, other = (0, 4, None, 1), (0, 5, None, 1)
    merged = (1, 2, Parents({one, other}), 2)
    assert t.frame_id((2, 3, merged, 3), [0, 1, 2]) is None and t.frame_id(merged, [0, 1, 2]) is None
    assert t.frame_id(one, [0, 1, 2]) == 0 and len(t.frame_objects) == 1


def test_misses_past_the_buffer_are_read_in_more_rounds(llama3, masked_walk, monkeypatch):
    text = load("sql")
    walks = _walks(Compiler(llama3).compile_lark(text), llama3, masked_walk, 3, 5)
    want = _rows(Compiler(llama3).compile_lark(text), llama3, walks)
    monkeypatch.setattr(stack_index, "_MISSES", 1)
    monkeypatch.setattr(stack_index, "MAX_ROWS", 2)  # (positions computed again: second misses reach the loop)
    g = Compiler(llama3).compile_lark(text)
    g.automaton.chain_in_numba = True
    assert _rows(g, llama3, walks * 3) == want * 3


def test_frames_forgotten_in_the_middle_of_a_mask_are_given_ids_again(llama3, masked_walk, monkeypatch):
    text = load("sql")
    walks = _walks(Compiler(llama3).compile_lark(text), llama3, masked_walk, 3, 7)
    want = _rows(Compiler(llama3).compile_lark(text), llama3, walks)
    monkeypatch.setattr(chain_tables, "MAX_FRAMES", 4)  # (a position's tops outnumber it: ids given to the first are void)
    g = Compiler(llama3).compile_lark(text)
    g.automaton.chain_in_numba = True
    assert _rows(g, llama3, walks) == want
    assert g.automaton.chain_tables.generation > 0
