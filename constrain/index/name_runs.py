"""Runs of name bytes: trie subtrees a walk marks whole, without the DFA, where it may.

Most of a vocabulary is words: below a few bytes, the subtree of a node often holds only
tokens whose remaining bytes are name bytes. A DFA state from which every run of such bytes
stays alive, however long (a name's body, free text, a comment), reads every token of such a
subtree: the walk marks the subtree's tokens in one pass over their ids and skips its nodes
(walk.py, pushdown_walk.py). Its boundaries and pops inside are not recorded, which changes no
mask: they could only lead to tokens of the same subtree, all allowed already by the walk's
own words (a frame summary's words go wherever its pops go).

Two sets of name bytes, one bit each: [0-9A-Za-z_] (a C name), and [a-z] alone, whose
subtrees are fewer but which names of other shapes read too (Lua's letters and digits, Lark's
lower-case rule names). A node's bits are the sets its subtree keeps to; a state's, the sets
it reads any run of; a walk skips a subtree where the two share a bit.
"""

from __future__ import annotations

import numpy as np

from ..automata.dfa import DFA

NAME_SETS = np.zeros((2, 256), dtype=np.bool_)
NAME_SETS[0, [*range(0x30, 0x3A), *range(0x41, 0x5B), *range(0x61, 0x7B), 0x5F]] = True
NAME_SETS[1, 0x61:0x7B] = True


def name_subtrees(byte: np.ndarray, end: np.ndarray) -> np.ndarray:
    """uint8 per trie node: bit k where the node's byte and every byte below it is in set k."""
    out = np.zeros(byte.shape[0], dtype=np.uint8)
    other = np.zeros(byte.shape[0] + 1, dtype=np.int64)
    for k, members in enumerate(NAME_SETS):
        np.cumsum(~members[byte], out=other[1:])
        out |= (other[end] == other[:-1]).astype(np.uint8) << k
    return out


MAX_MEMO = 4096  # DFAs whose closed states are kept (cleared when full)
_memo: dict[int, tuple[DFA, np.ndarray]] = {}


def name_closed_states(dfa: DFA) -> np.ndarray:
    """uint8 per DFA state, read-only: bit k where every run of set k's bytes, of any length,
    stays alive. Kept per DFA object: rule DFAs are shared between grammars, and a rule's trie
    walks and its pushdown tables both ask (an entry holds its DFA, so an id is not reused)."""
    hit = _memo.get(id(dfa))
    if hit is not None and hit[0] is dfa:
        return hit[1]
    out = np.zeros(dfa.n_states, dtype=np.uint8)
    for k, members in enumerate(NAME_SETS):
        out |= _closed(dfa, members).astype(np.uint8) << k
    out.setflags(write=False)
    if len(_memo) >= MAX_MEMO:
        _memo.clear()  # (a racing fill only repeats the pass)
    _memo[id(dfa)] = (dfa, out)
    return out


def _closed(dfa: DFA, members: np.ndarray) -> np.ndarray:
    """A state dies on some run iff a member byte kills it or leads to a state that does: the
    dying states spread backwards over the member-byte transitions (one pass over them)."""
    classes = np.unique(dfa.byte_classes[members])
    nxt = dfa.table[:, classes].astype(np.int64)
    n = nxt.shape[0]
    live = nxt >= 0
    dies = ~live.all(axis=1)
    if dies.all() or not dies.any():  # (most rules: keywords and punctuation die on a name byte)
        return ~dies
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
    return ~dies
