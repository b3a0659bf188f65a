"""The chaining loop and its hash table: finds what was inserted (a dict as the oracle), through
rehashes; ORs each summary down the frames; reports misses and what a snapshot does not hold."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.index.chain_walk import TOP, chain, find, find_all, insert, rehashed, table_of

keys3 = st.tuples(st.integers(0, 5000), st.integers(0, 3000), st.integers(-2, 1 << 30))


@settings(deadline=None, max_examples=60)
@given(st.dictionaries(keys3, st.integers(0, 1 << 30), max_size=300), st.lists(keys3, max_size=40))
def test_the_table_finds_what_was_inserted_and_nothing_else(entries, probes):
    table = np.full((16, 4), -1, dtype=np.int32)
    for n, ((rep, q, item), s) in enumerate(entries.items()):
        if 2 * (n + 1) > table.shape[0]:
            table = rehashed(table, 4 * table.shape[0])
        insert(table, rep, q, item, s)
    for key in list(entries) + probes:
        assert find(table, *key) == entries.get(key, -1)
    if entries:
        keys = np.array(list(entries), dtype=np.int64)
        bulk = table_of(keys, np.array(list(entries.values()), dtype=np.int64))
        assert find_all(bulk, keys).tolist() == list(entries.values())
        assert find_all(bulk, keys + np.array([0, 0, 7])).tolist() == [entries.get(tuple(k), -1) for k in (keys + [0, 0, 7]).tolist()]


class Tables:
    """Hand-made tables: summaries as (parts, pops), parts as word lists (sparse) or whole rows."""

    def __init__(self, n_words: int, summaries: dict[tuple[int, int, int], tuple[list, list[int]]], frames):
        self.n_words = n_words
        parts, idx, bits, dense, summary_parts, pops, starts = [], [], [], [], [], [], [(0, 0)]
        for s, (p_list, p_pops) in enumerate(summaries.values()):
            for p in p_list:
                if isinstance(p, dict):  # sparse: {word: bits}
                    parts.append((len(idx), len(p)))
                    idx.extend(p)
                    bits.extend(p.values())
                else:
                    parts.append((len(dense), -1))
                    dense.append(p)
                summary_parts.append(len(parts) - 1)
            pops.extend(p_pops)
            starts.append((len(summary_parts), len(pops)))
        self.args = (
            np.array(frames, dtype=np.int32).reshape(-1, 3),
            table_of(np.array(list(summaries), dtype=np.int64).reshape(-1, 3), np.arange(len(summaries), dtype=np.int64)),
            len(summaries),
            np.array(starts, dtype=np.int32),
            np.array(summary_parts + [0], dtype=np.int32),
            np.array(pops + [0], dtype=np.int32),
            np.array(parts + [(0, 0)], dtype=np.int64),
            np.array(idx + [0], dtype=np.int32),
            np.array(bits + [0], dtype=np.uint32),
            np.array(dense or [[0] * n_words], dtype=np.uint32),
        )

    def run(self, at, n_summaries=None):
        words = np.zeros(self.n_words, dtype=np.uint32)
        misses = np.zeros((8, 2), dtype=np.int64)
        args = list(self.args)
        if n_summaries is not None:
            args[2] = n_summaries
        n = chain(np.array(at, dtype=np.int64).reshape(-1, 2), *args, words, misses)
        return words.tolist(), sorted(map(tuple, misses[:n].tolist()))


# frames: 0 = bottom (rule 1, state 0), 1 = middle (rule 2, state 3) over 0, 2 = top (rule 3, state 1) over 1
FRAMES = [(1, 0, -1), (2, 3, 0), (3, 1, 1)]


def test_a_stack_reads_its_top_then_each_frame_where_the_one_above_pops():
    t = Tables(3, {
        (3, 1, TOP): ([{0: 1}], [10]),
        (2, 3, 10): ([{1: 2}, [4, 0, 0]], [11, 12]),
        (1, 0, 11): ([{2: 8}], [99]),  # (the bottom pops: the stack empties, nothing below reads)
        (1, 0, 12): ([], []),
    }, FRAMES)
    assert t.run([(2, TOP)]) == ([1 | 4, 2, 8], [])


def test_a_summary_missing_is_reported_and_the_rest_still_read():
    t = Tables(2, {(3, 1, TOP): ([{0: 1}], [10, 20]), (2, 3, 10): ([{1: 4}], [])}, FRAMES)
    assert t.run([(2, TOP)]) == ([1, 4], [(1, 20)])
    assert t.run([(2, TOP), (1, 10)]) == ([1, 4], [(1, 20)])  # (a pair met twice is read once)


def test_a_summary_added_after_the_snapshot_is_a_miss():
    t = Tables(2, {(3, 1, TOP): ([{0: 1}], [10]), (2, 3, 10): ([{1: 4}], [])}, FRAMES)
    assert t.run([(2, TOP)], n_summaries=1) == ([1, 0], [(1, 10)])


def test_many_pops_and_misses_are_counted_past_the_buffer():
    pops = list(range(100, 300))
    t = Tables(1, {(3, 1, TOP): ([{0: 1}], pops)}, FRAMES)
    words = np.zeros(1, dtype=np.uint32)
    misses = np.zeros((8, 2), dtype=np.int64)
    n = chain(np.array([[2, TOP]], dtype=np.int64), *t.args, words, misses)
    assert n == len(pops) and words[0] == 1
    got = misses[:, 1].tolist()
    assert (misses[:, 0] == 1).all() and len(set(got)) == len(got) and set(got) <= set(pops)
