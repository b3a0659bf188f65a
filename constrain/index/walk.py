"""The hot loop: which tokens can a DFA state read without dying (numba, cached to disk).

numba does no bounds checking: every index below is derived from arrays the TokenTrie and DFA
constructors validated (trie ids < vocab size, table entries < n_states), and CI runs these
tests once with NUMBA_BOUNDSCHECK=1.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _mark_tokens(i, tok1, tok_ptr, tok_ids, out):
    """OR in the bits of the token(s) ending at trie node i. Without a branch on whether a
    token ends there (an empty OR into word 0 where none does): about half the nodes of a wide
    walk end a token, in no pattern a CPU predicts, and the mispredictions were a third of a
    whole-trie walk's time (arithmetic's NAME from the root, captured: 467 -> 318 us)."""
    t = tok1[i]
    if t == -2:  # (several tokens with these bytes: rare, so predicted)
        for k in range(tok_ptr[i], tok_ptr[i + 1]):
            u = tok_ids[k]
            out[u >> 5] |= np.uint32(1) << np.uint32(u & 31)
        return
    ends = t >= 0
    word = (t >> 5) if ends else 0
    bit = (np.uint32(1) << np.uint32(t & 31)) if ends else np.uint32(0)
    out[word] |= bit


@numba.njit(cache=True, nogil=True, inline="always")
def _mark_subtree(i, end, tok_ptr, tok_ids, out):
    """OR in the bits of every token of node i's subtree (its ids are one run of tok_ids)."""
    for k in range(tok_ptr[i], tok_ptr[end[i]]):
        u = tok_ids[k]
        out[u >> 5] |= np.uint32(1) << np.uint32(u & 31)


@numba.njit(cache=True, nogil=True, inline="always")
def _walk_range(i, last, packed, end, tok1, tok_ptr, tok_ids, byte_classes, table, exits, follow, checks, free, names,
                states, out, b_nodes, b_states, n_b):
    """Walk trie nodes i..last-1, states[depth(i) - 1] already set. Returns (boundaries
    written so far, nodes visited); b_nodes.shape[0] + 1 boundaries: the buffer overflowed."""
    cap = b_nodes.shape[0]
    visited = 0
    while i < last:
        p = packed[i]
        d = p >> 8
        prev = states[d - 1]
        visited += 1
        if free[prev] & names[i]:  # (name bytes only below, read in any number: name_runs.py)
            _mark_subtree(i, end, tok_ptr, tok_ids, out)
            i = end[i]
            continue
        kind = exits[prev]
        s = table[prev, byte_classes[p & 255]]
        if kind != 0 and (kind == 1 or (kind == 2 and follow[0, p & 255]) or (kind == 3 and s < 0)
                          or (kind >= 4 and s < 0 and follow[kind - 3, p & 255])
                          or (kind >= 3 and s >= 0 and checks[prev] != 0 and follow[checks[prev], p & 255])):
            if n_b == cap:
                return cap + 1, visited
            b_nodes[n_b] = i
            b_states[n_b] = prev
            n_b += 1
        if s < 0:
            i = end[i]
            continue
        states[d] = s
        _mark_tokens(i, tok1, tok_ptr, tok_ids, out)
        i += 1
    return n_b, visited


@numba.njit(cache=True, nogil=True, boundscheck=False)
def walk_subtrees(packed, end, tok1, tok_ptr, tok_ids, root, max_depth, byte_classes, table, exits,
                  follow, checks, free, names, firsts, start_state, out, b_nodes, b_states):
    """Walk the subtree of each node in `firsts`, reading with one rule's DFA (or a regex's, with
    no exits) from `start_state` at the subtree's parent depth; 0 stands for the whole trie.
    OR in the tokens readable inside the rule; record as boundaries the nodes whose byte is read
    by a state that can call or return (`exits`, uint8 per state: 1 always, 2 only where
    `follow[0, byte]`, the bytes any rule could read after this one returns, 3 only where the
    state cannot read the byte: a greedy rule's return, k >= 4 where also `follow[k - 3, byte]`: a
    greedy rule whose end there refuses the other bytes, follow.py): there another rule
    may read it, so the caller continues with the stack. A greedy rule's state also meets a
    boundary at a byte it reads where `checks` (uint8 per state: a follow row, 0 for none)
    allows it: a return on condition of the byte after it (automata/return_checks.py). A
    subtree of name bytes only (`names`, uint8 per node, a bit per set of name bytes) entered
    in a state that reads any run of them (`free`, uint8 per state, the same bits) is marked
    whole, without its boundaries (name_runs.py); zeros turn that off. From the root, the
    first bytes are never boundaries (the caller expands `start_state` itself) and only the
    root's children whose byte lives are touched: the others lie all over the trie, one cache
    miss each.
    Returns (boundaries written, nodes visited); b_nodes.shape[0] + 1 boundaries means the
    buffer overflowed: the bits already set are right, so the caller may walk again with a
    larger one."""
    states = np.empty(max_depth + 1, dtype=np.int32)
    n_b = 0
    visited = 0
    for f in firsts:
        if f != 0:
            states[(packed[f] >> 8) - 1] = start_state
            n_b, v = _walk_range(f, end[f], packed, end, tok1, tok_ptr, tok_ids, byte_classes, table,
                                 exits, follow, checks, free, names, states, out, b_nodes, b_states, n_b)
            visited += v
            if n_b > b_nodes.shape[0]:
                return n_b, visited
            continue
        for b in range(256):
            c = root[b]
            if c < 0:
                continue
            s = table[start_state, byte_classes[b]]
            if s < 0:
                continue
            if free[start_state] & names[c]:
                _mark_subtree(c, end, tok_ptr, tok_ids, out)
                visited += 1
                continue
            states[1] = s
            _mark_tokens(c, tok1, tok_ptr, tok_ids, out)
            n_b, v = _walk_range(c + 1, end[c], packed, end, tok1, tok_ptr, tok_ids, byte_classes, table,
                                 exits, follow, checks, free, names, states, out, b_nodes, b_states, n_b)
            visited += v + 1
            if n_b > b_nodes.shape[0]:
                return n_b, visited
    return n_b, visited


@numba.njit(cache=True, nogil=True)
def readable_subtrees_within(nodes, byte, end, reads, limit):
    """Do the subtrees of the nodes whose byte `reads` (bool per byte) admits hold at most
    `limit` trie nodes, with an eighth of len(nodes) added for the starts? Stops counting
    once past `limit` (a frame's item holds up to tens of thousands of nodes)."""
    total = nodes.shape[0] // 8
    for k in range(nodes.shape[0]):
        n = nodes[k]
        if reads[byte[n]]:
            total += end[n] - n
            if total > limit:
                return False
    return total <= limit
