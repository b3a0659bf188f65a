"""Runs of name bytes: the subtrees and states are what their definitions say (brute force), and a
walk that marks such subtrees whole sets exactly the words of the plain walk; the boundaries it
no longer records lie inside subtrees whose every token it allowed."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import regex_to_dfa
from constrain.automata.dfa import DFA
from constrain.index.name_runs import NAME_SETS, name_closed_states, name_subtrees
from constrain.index.trie import TokenTrie
from constrain.index.walk import walk_subtrees

_ALPHABET = b"ab_Z09 .-\xc3\xa9"


def _subtree_tokens(trie: TokenTrie, i: int) -> list[int]:
    return trie.tok_ids[trie.tok_ptr[i] : trie.tok_ptr[trie.end[i]]].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=6).map(lambda b: bytes(_ALPHABET[x % len(_ALPHABET)] for x in b)),
                min_size=1, max_size=40, unique=True))
def test_name_subtrees_hold_name_bytes_only(tokens):
    trie = TokenTrie(tokens)
    names = name_subtrees(trie.byte, trie.end)
    for i in range(1, trie.n_nodes):
        d = int(trie.depth[i])
        below = [tokens[t][d - 1 :] for t in _subtree_tokens(trie, i)]
        for k, members in enumerate(NAME_SETS):
            assert bool(names[i] >> k & 1) == all(members[b] for rest in below for b in rest), (i, k, below)


def _random_dfa(rng: random.Random) -> DFA:
    cuts = [0, 0x20, 0x30, 0x3A, 0x41, 0x5B, 0x5F, 0x60, 0x61, 0x7B, 0x80, 0x100]
    n_classes = rng.randint(1, 5)
    byte_classes = np.zeros(256, dtype=np.int32)
    for lo, hi in zip(cuts, cuts[1:]):
        byte_classes[lo:hi] = rng.randrange(n_classes)
    n = rng.randint(1, 7)
    table = np.array([[rng.choice([-1] + list(range(n)) * 3) for _ in range(n_classes)] for _ in range(n)], dtype=np.int32)
    return DFA(byte_classes, table, np.array([rng.random() < 0.3 for _ in range(n)]))


def _closed_by_search(dfa: DFA, members: np.ndarray) -> list[bool]:
    """A state reads any run of a set's bytes iff no state it reaches by them dies on one."""
    names = np.flatnonzero(members)
    out = []
    for q in range(dfa.n_states):
        seen, todo, ok = {q}, [q], True
        while todo and ok:
            s = todo.pop()
            for b in names:
                t = int(dfa.table[s, dfa.byte_classes[b]])
                if t < 0:
                    ok = False
                    break
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        out.append(ok)
    return out


def test_name_closed_states_equal_a_search():
    rng = random.Random(11)
    closed = [0, 0]
    for _ in range(400):
        dfa = _random_dfa(rng)
        got = name_closed_states(dfa)
        for k, members in enumerate(NAME_SETS):
            want = _closed_by_search(dfa, members)
            assert (got >> k & 1).tolist() == [int(w) for w in want]
            closed[k] += sum(want)
    assert min(closed) > 50  # (the property is not vacuous)


@pytest.mark.parametrize("pattern,after,closed", [
    (r"[A-Za-z_][A-Za-z0-9_]*", b"", 2),  # (a digit may not come first; any letters may)
    (r"[A-Za-z_][A-Za-z0-9_]*", b"a", 3),
    (r"[a-z]+", b"a", 2),
    (r"[A-Za-z0-9]+", b"a", 2),  # (Lua's names: no underscore)
    (r"[0-9A-Za-z_]{0,3}", b"ab", 0),
    (r"[^,\n]*", b"", 3),
    (r"[^,\n]*", b"\xc3", 0),  # (in the middle of a UTF-8 character)
])
def test_name_closed_states_of_regexes(pattern, after, closed):
    dfa = regex_to_dfa(pattern)
    assert name_closed_states(dfa)[dfa.walk(0, after)] == closed
    assert name_closed_states(dfa) is name_closed_states(dfa)  # (kept per DFA: walks and tables share it)
    assert not name_closed_states(dfa).flags.writeable


def _walk(trie: TokenTrie, dfa: DFA, exits: np.ndarray, firsts: np.ndarray, q: int, free: np.ndarray):
    words = np.zeros(trie.n_words, dtype=np.uint32)
    b_nodes = np.empty(trie.n_nodes + 1, dtype=np.int32)
    b_states = np.empty(trie.n_nodes + 1, dtype=np.int32)
    n, _ = walk_subtrees(
        trie.packed, trie.end, trie.tok1, trie.tok_ptr, trie.tok_ids, trie.root, trie.max_depth, dfa.byte_classes,
        dfa.table, exits, np.ones((1, 256), dtype=np.bool_), np.zeros(exits.size, dtype=np.uint8), free, trie.names,
        firsts, np.int32(q), words, b_nodes, b_states,
    )
    return words, set(b_nodes[:n].tolist())


@pytest.mark.parametrize("pattern", [r"[A-Za-z_][A-Za-z0-9_]*", r"[^,\n\"]+", r"( ?[a-z]+)*\.", r"[a-z0-9_]{0,6}",
                                     r"[A-Za-z][A-Za-z0-9]*", r"!?[_?]?[a-z][_a-z0-9]*",
                                     r"(?i)(?!(select|from)(?![a-z0-9_]))[a-z_][a-z0-9_]*", r".*"])
def test_a_walk_marking_name_runs_whole_allows_what_the_plain_walk_allows(pattern, llama3):
    trie = TokenTrie(llama3.token_bytes, llama3.special_ids)
    dfa = regex_to_dfa(pattern)
    free = name_closed_states(dfa)
    rng = np.random.default_rng(3)
    exits = np.ones(dfa.n_states, dtype=np.uint8)  # (every state records its boundaries)
    starts = [np.zeros(1, dtype=np.int32), np.unique(rng.integers(1, trie.n_nodes, 300)).astype(np.int32)]
    starts.append(np.flatnonzero(trie.depth == 2)[:2000].astype(np.int32))
    for firsts in starts:
        for q in range(dfa.n_states):
            plain, plain_bounds = _walk(trie, dfa, exits, firsts, q, np.zeros_like(free))
            fast, fast_bounds = _walk(trie, dfa, exits, firsts, q, free)
            assert np.array_equal(plain, fast), (pattern, q)
            assert fast_bounds <= plain_bounds
            for node in plain_bounds - fast_bounds:  # (dropped only where every token below is allowed)
                ids = np.array(_subtree_tokens(trie, node), dtype=np.int64)
                assert ((fast[ids >> 5] >> (ids & 31).astype(np.uint32)) & 1).all(), (pattern, q, node)
