"""The flat token trie: every token is reachable along its bytes, subtree ends are exact."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.index.trie import TokenTrie


def _tokens_by_walk(trie: TokenTrie) -> dict[int, bytes]:
    """Rebuild each token's bytes from the DFS layout (path of bytes down to its node)."""
    found: dict[int, bytes] = {}
    path: list[int] = []
    for i in range(1, trie.n_nodes):
        d = int(trie.depth[i])
        del path[d - 1 :]
        path.append(int(trie.byte[i]))
        for k in range(trie.tok_ptr[i], trie.tok_ptr[i + 1]):
            found[int(trie.tok_ids[k])] = bytes(path)
        t = int(trie.tok1[i])
        count = int(trie.tok_ptr[i + 1] - trie.tok_ptr[i])
        assert (t == -1) == (count == 0) and (t == -2) == (count > 1)
        if count == 1:
            assert t == trie.tok_ids[trie.tok_ptr[i]]
        assert int(trie.packed[i]) == (d << 8 | int(trie.byte[i]))
    return found


def _check_ends(trie: TokenTrie) -> None:
    for i in range(trie.n_nodes):
        e = int(trie.end[i])
        assert e > i
        # Everything in (i, end) is deeper than i; the node at end (if any) is not.
        assert all(trie.depth[j] > trie.depth[i] for j in range(i + 1, e))
        if e < trie.n_nodes:
            assert trie.depth[e] <= trie.depth[i]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=6), min_size=1, max_size=40), st.data())
def test_trie_holds_exactly_the_non_excluded_nonempty_tokens(tokens, data):
    excluded = set(data.draw(st.lists(st.integers(0, len(tokens) - 1), max_size=5)))
    trie = TokenTrie(tokens, excluded)
    expected = {i: b for i, b in enumerate(tokens) if b and i not in excluded}
    assert _tokens_by_walk(trie) == expected
    _check_ends(trie)
    assert trie.n_words == (len(tokens) + 31) // 32


def test_real_vocabulary_trie(llama3):
    trie = TokenTrie(llama3.token_bytes, llama3.special_ids)
    assert trie.n_nodes < 300_000  # shared prefixes are stored once
    assert len(trie.tok_ids) == llama3.size - len(llama3.special_ids)
