"""Boundaries: grouped by state (ascending), nodes in walk order within a group, and `flat`
the groups end to end, so a filtered flat builds the groups a filter of each group gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from constrain.index.boundaries import Boundaries


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 255)), max_size=60), st.integers(0, 2**32 - 1),
       st.sampled_from([0, 32_000, 70_000]))
def test_groups_flat_and_filtered_rebuilds(pairs, seed, base):
    """(States from `base` on: sorted as 16-bit ints where they fit, as they are past that.)"""
    nodes = np.arange(1, len(pairs) + 1, dtype=np.int32) * 3  # (walk order: ascending)
    states = np.array([base + q for q, _ in pairs], dtype=np.int32)
    node_bytes = np.array([b for _, b in pairs], dtype=np.int32)
    bounds = Boundaries.of(nodes, states, node_bytes)
    want = {}
    for n, q, b in zip(nodes.tolist(), states.tolist(), node_bytes.tolist()):
        want.setdefault(q, []).append((n, b))
    assert [(q, list(zip(g_nodes.tolist(), g_bytes.tolist()))) for q, g_nodes, g_bytes in bounds.groups] == sorted(want.items())
    if bounds.groups:
        flat_nodes, flat_states, flat_bytes = bounds.flat
        assert flat_nodes.tolist() == [n for _, g, _ in bounds.groups for n in g.tolist()]
        assert flat_states.tolist() == [q for q, g, _ in bounds.groups for _ in range(g.size)]
        assert flat_bytes.tolist() == [b for _, _, g in bounds.groups for b in g.tolist()]
        keep = np.random.default_rng(seed).random(flat_nodes.size) < 0.5
        kept = Boundaries.of(flat_nodes[keep], flat_states[keep], flat_bytes[keep])
        per_group = [(q, g[keep_g].tolist()) for q, g, _ in bounds.groups
                     for keep_g in [np.isin(g, flat_nodes[keep])] if keep_g.any()]
        assert [(q, g.tolist()) for q, g, _ in kept.groups] == per_group
