"""Runs of name bytes: trie subtrees a walk marks whole, without the DFA, where it may.

Most of a vocabulary is words: below a few bytes, the subtree of a node often holds only
tokens whose remaining bytes are name bytes ([0-9A-Za-z_]). A DFA state from which every run
of name bytes stays alive, however long (a name's body, free text, a comment), reads every
token of such a subtree: the walk marks the subtree's tokens in one pass over their ids and
skips its nodes (stack_index.py's and token_index.py's walks: walk.py). Its boundaries inside
are not recorded, which changes no mask: they could only lead to tokens of the same subtree,
all allowed already by the walk's own words (a frame summary's words go wherever its pops go).
"""

from __future__ import annotations

import numpy as np

from ..automata.dfa import DFA

NAME_BYTES = np.zeros(256, dtype=np.bool_)
NAME_BYTES[[*range(0x30, 0x3A), *range(0x41, 0x5B), *range(0x61, 0x7B), 0x5F]] = True


def name_subtrees(byte: np.ndarray, end: np.ndarray) -> np.ndarray:
    """uint8 per trie node: 1 where the node's byte and every byte below it is a name byte."""
    other = np.zeros(byte.shape[0] + 1, dtype=np.int64)
    np.cumsum(~NAME_BYTES[byte], out=other[1:])
    return (other[end] == other[:-1]).astype(np.uint8)


def name_closed_states(dfa: DFA) -> np.ndarray:
    """uint8 per DFA state: 1 where every run of name bytes, of any length, stays alive. A
    state dies on some run iff a name byte kills it or leads to a state that does: the dying
    states spread backwards over the name-byte transitions (one pass over them)."""
    classes = np.unique(dfa.byte_classes[NAME_BYTES])
    nxt = dfa.table[:, classes].astype(np.int64)
    n = nxt.shape[0]
    live = nxt >= 0
    dies = ~live.all(axis=1)
    if dies.all() or not dies.any():  # (most rules: keywords and punctuation die on a name byte)
        return (~dies).astype(np.uint8)
    sources = np.repeat(np.arange(n), classes.size)[live.ravel()]
    targets = nxt[live]
    order = np.argsort(targets, kind="stable")
    sources = sources[order].tolist()
    ptr = np.searchsorted(targets[order], np.arange(n + 1)).tolist()
    todo = np.flatnonzero(dies).tolist()
    while todo:
        t = todo.pop()
        for s in sources[ptr[t] : ptr[t + 1]]:
            if not dies[s]:
                dies[s] = True
                todo.append(s)
    return (~dies).astype(np.uint8)
