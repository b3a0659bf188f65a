"""Checked items: the subtrees a check on the second byte lets through, and masks with returns
on condition of the byte after the next one equal the byte-step oracle."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from constrain import Compiler, Matcher
from constrain.index.checked_items import CHECKED, allowed_ranges, allowed_words, check_of, cut, within
from constrain.index.items import Items
from constrain.index.trie import TokenTrie

from token_choices import text_ids  # tests/support

sys.path.insert(0, str(Path(__file__).parent.parent / "automata"))
from test_return_checks import CASES  # noqa: E402 (the grammars and texts of return_checks' tests)


@pytest.fixture(scope="module")
def trie(llama3):
    return TokenTrie(llama3.token_bytes, llama3.special_ids)


def _node(trie: TokenTrie, text: bytes) -> int:
    node = int(trie.root[text[0]])
    for b in text[1:]:
        c, last = node + 1, int(trie.end[node])
        while c < last and trie.byte[c] != b:
            c = int(trie.end[c])
        assert c < last, text
        node = c
    return node


def test_a_check_lets_through_the_node_and_the_subtrees_of_its_allowed_children(trie, llama3):
    brace = _node(trie, b"{")
    check = check_of(1 << ord("{"))
    assert check & CHECKED and check_of(0) == CHECKED  # (a check that only the end passes is still one)
    ranges = allowed_ranges(trie, np.array([brace], dtype=np.int32), check)
    words = allowed_words(trie, ranges)
    allowed = {llama3.token_bytes[t] for t in np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))}
    under = {llama3.token_bytes[t] for t in trie.tok_ids[trie.tok_ptr[brace] : trie.tok_ptr[trie.end[brace]]]}
    assert allowed == {tb for tb in under if len(tb) == 1 or tb[1:2] == b"{"}
    assert b"{" in allowed and b"{{" in allowed and b"{\"" not in allowed
    inside = np.array([brace, _node(trie, b"{{"), _node(trie, b"{\"")], dtype=np.int64)
    assert within(inside, ranges).tolist() == [True, True, False]


def test_a_cut_keeps_the_check_on_pops_at_the_items_own_nodes_only(trie, llama3):
    """What a frame reads from a checked item, cut: a pop at one of the item's own nodes (before
    its byte: the frame below reads it) keeps the check; a deeper pop in an allowed subtree is
    kept as it was; one in a refused subtree is dropped, as are the tokens there."""
    from constrain.index.summary import Summary
    from constrain.index.row_bits import token_ids, words_of

    items = Items((trie.n_nodes,))
    a, ab, ac = _node(trie, b"a"), _node(trie, b"ab"), _node(trie, b"ac")
    check = check_of(1 << ord("b"))
    tokens = [llama3.token_bytes.index(t) for t in (b"a", b"ab", b"ac")]
    whole = Summary(((words_of(np.array(tokens), trie.n_words)),), (items.nodes(0, np.array([a, ab, ac])),))
    got = cut(whole, items, trie, 0, np.array([a], dtype=np.int32), check)
    pops = sorted((items.get(p)[1].tolist(), items.get(p)[2]) for p in got.pops)
    assert pops == sorted([([a], check), ([ab], 0)])
    words = np.zeros(trie.n_words, dtype=np.uint32)
    got.or_into(words)
    assert token_ids(words) == sorted(tokens[:2])


def test_checked_items_are_their_own_items(trie):
    items = Items((trie.n_nodes,))
    nodes = np.array([_node(trie, b"$")], dtype=np.int32)
    plain, checked = items.nodes(0, nodes), items.nodes(0, nodes, check=check_of(1 << ord("{")))
    assert plain != checked and items.get(checked)[2] == check_of(1 << ord("{")) and items.get(plain)[2] == 0
    assert Items.of(items.entries(), (trie.n_nodes,)).get(checked)[2] == items.get(checked)[2]


def _ours(matcher, vocab) -> np.ndarray:
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(bm)
    return np.unpackbits(bm.view(np.uint8), bitorder="little")[: vocab.size].astype(bool)


@pytest.mark.parametrize("case", sorted(CASES))
def test_masks_with_returns_on_condition_equal_the_oracle(case, llama3, byte_step_oracle):
    """Along the texts that need such a return, byte by byte, and along random walks: tokens
    such as ` {{` after template text, `${` after string text, `.real` after a number are
    allowed exactly where the byte steps (the rules' own semantics) allow them."""
    grammar_text, _, texts = CASES[case]
    grammar = Compiler(llama3).compile_lark(grammar_text)
    assert any(grammar.automaton.rules.checks)
    one_byte = {bytes([b]): t for t, tb in enumerate(llama3.token_bytes) if len(tb) == 1 for b in tb}
    for text in texts:
        m = Matcher(grammar)
        for b in text.encode():
            assert np.array_equal(_ours(m, llama3), byte_step_oracle(grammar, m._history[-1], llama3)), (text, b)
            assert m.accept_token(one_byte[bytes([b])])
        assert m.is_accepting(), text
    rng = random.Random(5)
    for _ in range(4):
        m = Matcher(grammar)
        for step in range(10):
            ours = _ours(m, llama3)
            assert np.array_equal(ours, byte_step_oracle(grammar, m._history[-1], llama3)), step
            choices = text_ids(np.nonzero(ours)[0], llama3)
            if not choices.size:
                break
            assert m.accept_token(int(rng.choice(choices)))
