"""Items are interned ascending without repeats, however the nodes come."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from constrain.index.items import EMPTY, ROOT, Items


@given(st.lists(st.integers(0, 50), min_size=1, max_size=40), st.sampled_from([(), (51,), (51, 7)]))
def test_nodes_in_any_order_with_repeats_are_one_item(nodes, node_counts):
    items = Items(node_counts)  # (with a trie's node count, many nodes are ordered by a bitmap)
    canonical = np.unique(np.array(nodes, dtype=np.int32))
    a = items.nodes(0, np.array(nodes, dtype=np.int32))
    b = items.nodes(0, canonical)
    assert a == b not in (ROOT, EMPTY)
    tid, kept, forbidden = items.get(a)
    assert tid == 0 and forbidden == 0 and kept.tolist() == canonical.tolist()


def test_tries_and_roots_are_apart():
    items = Items()
    nodes = np.array([3, 5], dtype=np.int32)
    assert items.nodes(0, nodes) != items.nodes(1, nodes)
    assert items.root(0) == ROOT and items.root(1 << 32) != ROOT


def test_nodes_known_ascending_are_the_same_item():
    items = Items()
    nodes = np.array([3, 9, 40], dtype=np.int32)
    assert items.nodes(0, nodes, ascending=True) == items.nodes(0, np.array([40, 3, 9, 9], dtype=np.int32))
