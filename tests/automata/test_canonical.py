"""canonical.py: a minimal DFA is its own canonical form; renumbering a permuted copy gives it back."""

from __future__ import annotations

import numpy as np
import pytest

from constrain.automata import regex_to_dfa
from constrain.automata.canonical import compact

PATTERNS = [r"[a-z]+@[a-z]+\.(com|org)", r"(ab|a)*b?c{2,4}", r'"([^"\\]|\\.)*"', r"-?(0|[1-9][0-9]*)"]


def _compact(classes, table, accepting):
    return compact(np.require(classes, np.int32, ("C", "W")), np.require(table, np.int32, ("C", "W")),
                   np.require(accepting, np.bool_, ("C", "W")))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_minimal_dfas_are_canonical(pattern):
    d = regex_to_dfa(pattern)
    classes, table, accepting = _compact(d.byte_classes, d.table, d.accepting)
    assert np.array_equal(classes, d.byte_classes) and np.array_equal(table, d.table)
    assert np.array_equal(accepting, d.accepting)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_renumbering_undoes_a_permutation(pattern):
    """States shuffled (start kept first) and a column duplicated: the same arrays come back."""
    d = regex_to_dfa(pattern)
    n = d.n_states
    rng = np.random.default_rng(7)
    perm = np.concatenate(([0], 1 + rng.permutation(n - 1)))  # new id of old state
    inverse = np.argsort(perm)
    table = np.where(d.table >= 0, perm[np.maximum(d.table, 0)], -1)[inverse]
    table = np.concatenate((table, table[:, :1]), axis=1)  # a duplicate of column 0
    classes = d.byte_classes.copy()
    classes[classes == 0] = table.shape[1] - 1  # bytes of class 0 now read the copy
    got = _compact(classes, table, d.accepting[inverse])
    assert np.array_equal(got[0], d.byte_classes) and np.array_equal(got[1], d.table)
    assert np.array_equal(got[2], d.accepting)
